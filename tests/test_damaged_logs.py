"""Damaged event logs, made in tmp_path from Spark's own History Server logs
(../shared/spark-events): every reader says the same thing of the same file, given alone or in
a directory (metrics/damage.py words it). A log cut mid-line says where and what the cut
leaves out; a file that is no event log says so, never "truncated"; jobs without times are put
down to Spark before 1.4 only when the log's own SparkListenerLogStart says so."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil

import pytest
import zstandard
from conftest import SPARK_EVENTS, run_cli

from numaspark.errors import UsageError
from numaspark.metrics.eventlog import parse_event_log

LOGS = SPARK_EVENTS / "logs"
pytestmark = pytest.mark.skipif(not LOGS.exists(), reason="../shared/spark-events")

SPARK_2_1 = "app-20161115172038-0000"  # plain, Spark 2.1, 128 KB, finished
SPARK_3_0_CUT = "application_1547723113049_0006"  # Spark 3.0, no application end
CUT_AT = 40_000


def _cut(tmp_path, name: str = SPARK_2_1, at: int = CUT_AT):
    """The first ``at`` bytes of a real log (mid-line), as Spark's driver leaves it."""
    target = tmp_path / "logs" / name
    target.parent.mkdir(exist_ok=True)
    target.write_bytes((LOGS / name).read_bytes()[:at])
    return target


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def test_a_log_cut_mid_line_says_where_and_what_is_left_out(tmp_path):
    data = (LOGS / SPARK_2_1).read_bytes()
    line = data[:CUT_AT].count(b"\n") + 1
    starts = data.rfind(b"\n", 0, CUT_AT) + 1
    log = parse_event_log(_cut(tmp_path))
    assert log.truncated in log.warnings
    assert log.truncated.startswith(
        f"truncated: cut at byte {CUT_AT:,}, in line {line} (from byte {starts:,}: skipped)"
    )
    # what is missing: the application's end, and the figures stop at the last event left
    assert "no application end: the figures cover up to 23:20:44 UTC" in log.truncated
    assert "1 job and 1 stage without an end" in log.truncated
    assert not any("before 1.4" in w for w in log.warnings)  # a 2.1 log's unfinished job
    whole = parse_event_log(LOGS / SPARK_2_1)
    assert whole.truncated is None and whole.last_event_ms <= whole.end_time


def test_a_log_still_being_written_is_not_called_truncated(tmp_path):
    """The same first 40 KB named as Spark names a log it is writing (``.inprogress``): its
    last line is not whole yet, which is no damage (a review found it called truncated)."""
    log = _cut(tmp_path)
    running = log.rename(log.with_name(log.name + ".inprogress"))
    found = parse_event_log(running)
    assert found.truncated is None
    (said,) = [w for w in found.warnings if "in progress" in w]
    assert said.startswith("still being written (in progress): its last line, from byte ")
    assert "no application end" in said and not any("truncated" in w for w in found.warnings)


@pytest.mark.parametrize("command", ["analyze", "results", "advise"])
def test_every_reader_warns_the_same_alone_and_in_a_directory(tmp_path, command):
    """The headline of issue 58: advise of a cut log alone said nothing and gave findings."""
    cut = _cut(tmp_path)
    said = parse_event_log(cut).truncated
    alone = run_cli(command, str(cut))
    assert alone.returncode == 0, alone.stderr
    assert any(w.endswith(said) for w in _warnings(alone.stderr)), alone.stderr
    shutil.copy(LOGS / "local-1642039451826", cut.parent)
    many = run_cli(command, str(cut.parent)) if command != "analyze" else alone
    assert many.returncode == 0, many.stderr
    assert f"warning: {cut}: {said}" in many.stderr.splitlines() or command == "analyze"


def test_whatif_of_a_cut_log_says_the_cut(tmp_path):
    cut = _cut(tmp_path)
    proc = run_cli("whatif", str(cut))
    assert proc.returncode == 2
    error = proc.stderr.strip().splitlines()[-1]
    assert f"truncated: cut at byte {CUT_AT:,}" in error and "what-if needs" in error


def _not_logs(tmp_path):
    """Files that are no event log: random bytes; a gzip of a real log (a codec Spark does
    not write); a zstd stream of garbage, named as Spark names its zstd logs; a file named
    .zstd that is not zstd; an empty file."""
    where = tmp_path / "junk"
    where.mkdir()
    noise = random.Random(58).randbytes(30_000)
    files = {
        "random.bin": (noise, "its first bytes are binary data"),
        "app.gz": (gzip.compress((LOGS / SPARK_2_1).read_bytes()), "gzip-compressed data"),
        "garbage.zstd": (
            zstandard.ZstdCompressor().compress(noise),
            "binary data, not JSON lines (after zstd decompression)",
        ),
        "plain-text.zstd": (b"hello\n" * 10, "not a zstd stream from its first byte"),
        "empty": (b"", "it is empty"),
    }
    for name, (data, _) in files.items():
        (where / name).write_bytes(data)
    return where, {name: said for name, (_, said) in files.items()}


def test_a_file_that_is_no_event_log_says_so_never_truncated(tmp_path):
    where, said = _not_logs(tmp_path)
    for name, words in said.items():
        with pytest.raises(UsageError) as refused:
            parse_event_log(where / name)
        message = str(refused.value)
        assert "not a Spark event log" in message and words in message, message
        assert "truncated" not in message
        proc = run_cli("analyze", str(where / name))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        [line] = proc.stderr.strip().splitlines()
        assert "not a Spark event log" in line and "truncated" not in line
    shutil.copy(LOGS / "local-1642039451826", where)
    proc = run_cli("results", str(where), "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    not_read = {os.path.basename(n["log"]): n["why"] for n in found["not_read"]}
    assert set(not_read) == set(said)
    for name, words in said.items():
        assert not_read[name].startswith("not a Spark event log") or name.endswith(".zstd")
        assert words in not_read[name] and "truncated" not in not_read[name]


def test_the_spark_version_comes_from_the_log_start(tmp_path):
    """A Spark 3.0 log without its end: its job without an end is no 'Spark before 1.4'."""
    log = parse_event_log(LOGS / SPARK_3_0_CUT)
    assert log.spark_version == "3.0.0-SNAPSHOT"
    assert not any("before 1.4" in w for w in log.warnings), log.warnings
    [unended] = log.warnings
    assert unended.startswith("no application end: the figures cover up to 05:14:23 UTC")
    assert "1 job and 1 stage without an end" in unended
    # Spark 1.2 wrote no SparkListenerLogStart and no job times: that one is said so
    old = parse_event_log(LOGS / "local-1422981759269")
    assert old.spark_version is None
    assert any("Spark before 1.4 wrote none" in w for w in old.warnings)


def test_a_rolling_log_names_the_file_that_was_cut(tmp_path):
    source = LOGS / "eventlog_v2_local-1766844910796"
    [events] = source.glob("events_1_*")
    rolling = tmp_path / source.name
    rolling.mkdir()
    text = events.read_bytes()
    (rolling / f"{events.name}.zstd").write_bytes(
        zstandard.ZstdCompressor().compress(text[: len(text) * 9 // 10])
    )
    log = parse_event_log(rolling)
    assert log.truncated is not None
    assert log.truncated.startswith(f"{events.name}.zstd: truncated: cut at byte ")
    assert "of its decompressed events" in log.truncated
