"""Event-log parsing on real Spark 4.3.0 logs recorded in tests/fixtures/eventlogs."""

import json
import shutil

import pandas as pd
import pytest
import zstandard
from conftest import FIXTURES, run_cli

from numaspark.errors import UsageError
from numaspark.metrics.aggregate import aggregate
from numaspark.metrics.eventlog import parse_event_log, read_events
from numaspark.metrics.registry import REPORT_ORDER

LOGS = FIXTURES / "eventlogs"
FORMATS = ["plain", "rolling-zstd", "lz4.lz4", "snappy.snappy"]


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_reads_the_same_job(name):
    log = parse_event_log(LOGS / name)
    sums = aggregate(log)
    assert log.complete and not log.warnings
    assert log.spark_version == "4.3.0"
    assert sums["numStages"] == 2 and sums["numTasks"] == 8
    # the job is deterministic, so are its shuffle records, whatever the format
    assert sums["shuffleRecordsWritten"] == sums["shuffleRecordsRead"] == 12
    assert sums["executorRunTime"] > 0 and sums["elapsedTime"] > sums["stageDuration"] > 0
    assert list(sums)[: len(REPORT_ORDER)] == list(REPORT_ORDER)


def test_cpu_times_are_converted_from_ns():
    raw = [e for e in read_events(LOGS / "plain") if e["Event"] == "SparkListenerTaskEnd"]
    cpu_ns = sum(e["Task Metrics"]["Executor CPU Time"] for e in raw)
    write_ns = sum(e["Task Metrics"]["Shuffle Write Metrics"]["Shuffle Write Time"] for e in raw)
    run_ms = sum(e["Task Metrics"]["Executor Run Time"] for e in raw)
    sums = aggregate(parse_event_log(LOGS / "plain"))
    assert sums["executorCpuTime"] == pytest.approx(cpu_ns / 1e6)
    assert sums["shuffleWriteTime"] == pytest.approx(write_ns / 1e6)
    assert sums["executorRunTime"] == run_ms
    assert sums["cpuShare"] == pytest.approx(cpu_ns / 1e6 / run_ms)


def test_failed_task_is_a_row_with_its_reason():
    log = parse_event_log(LOGS / "failed-task")
    failed = log.tasks[~log.tasks["successful"]]
    assert len(failed) == 1
    assert "ExceptionFailure" in failed.iloc[0]["failureReason"]
    assert "first attempt of partition 0 fails" in failed.iloc[0]["failureReason"]
    assert len(log.tasks) == 9  # 8 tasks and one retry
    assert log.complete


def test_truncated_last_line_is_skipped_and_reported(tmp_path):
    text = (LOGS / "plain").read_text()
    cut = text.rstrip("\n").rfind("\n") + 40
    (tmp_path / "crashed").write_text(text[:cut])
    log = parse_event_log(tmp_path / "crashed")
    [cut_warning] = [w for w in log.warnings if "truncated" in w]
    assert f"cut at byte {cut:,}" in cut_warning and "no application end" in cut_warning
    assert not log.complete  # the cut line was SparkListenerApplicationEnd
    assert len(log.tasks) == 8
    assert aggregate(log)["elapsedTime"] > 0  # falls back to the task span


def _rolling_lines() -> tuple:
    """The recorded rolling log's event file and its decompressed lines."""
    source = next((LOGS / "rolling-zstd").glob("events_1_*"))
    with source.open("rb") as handle:
        return source, zstandard.ZstdDecompressor().stream_reader(handle).read().splitlines(
            keepends=True
        )


def test_truncated_compressed_stream(tmp_path):
    """A zstd log cut inside its second frame keeps the events of the first."""
    source, lines = _rolling_lines()
    compressor = zstandard.ZstdCompressor()
    first = compressor.compress(b"".join(lines[:-3]))
    second = compressor.compress(b"".join(lines[-3:]))
    target = tmp_path / "eventlog_v2_x"
    target.mkdir()
    (target / source.name).write_bytes(first + second[: len(second) // 2])
    log = parse_event_log(target)
    assert any("truncated: its zstd stream stops mid-block" in w for w in log.warnings)
    assert len(log.tasks) > 0


def test_rolling_log_in_several_files(tmp_path):
    source, lines = _rolling_lines()
    half = len(lines) // 2
    rolling = tmp_path / "eventlog_v2_app"
    rolling.mkdir()
    compressor = zstandard.ZstdCompressor()
    # file 2 is written first on purpose: order comes from the index in the name
    (rolling / "events_2_app.zstd").write_bytes(compressor.compress(b"".join(lines[half:])))
    (rolling / "events_1_app.zstd").write_bytes(compressor.compress(b"".join(lines[:half])))
    assert aggregate(parse_event_log(rolling)) == aggregate(parse_event_log(LOGS / "rolling-zstd"))


def test_unknown_events_are_skipped(tmp_path):
    text = (LOGS / "plain").read_text()
    (tmp_path / "log").write_text('{"Event":"com.example.CustomEvent","x":1}\n' + text)
    assert aggregate(parse_event_log(tmp_path / "log"))["numTasks"] == 8


def test_not_an_event_log(tmp_path):
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(UsageError, match="not a Spark event log: its first line is not a Spark"):
        parse_event_log(tmp_path / "notes.txt")
    with pytest.raises(UsageError, match="does not exist"):
        parse_event_log(tmp_path / "missing")
    empty = tmp_path / "empty-dir"
    empty.mkdir()
    with pytest.raises(UsageError, match="without Spark event files"):
        parse_event_log(empty)


def test_analyze_command_json_and_exports(tmp_path):
    proc = run_cli(
        "analyze",
        str(LOGS / "rolling-zstd"),
        str(LOGS / "plain"),
        "--json",
        "--tasks",
        str(tmp_path / "tasks.parquet"),
        "--stages",
        str(tmp_path / "stages.csv"),
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)["logs"]
    assert [d["aggregates"]["numTasks"] for d in data] == [8, 8]
    tasks = pd.read_parquet(tmp_path / "tasks.parquet")
    assert len(tasks) == 16 and {"executorRunTime", "appId", "locality"} <= set(tasks.columns)
    assert len(pd.read_csv(tmp_path / "stages.csv")) == 4
    human = run_cli("analyze", str(LOGS / "snappy.snappy"))
    assert "executorRunTime =>" in human.stdout and "gcShare =>" in human.stdout


def test_analyze_bad_input_is_one_line(tmp_path):
    shutil.copy(LOGS / "plain", tmp_path / "log.lzf")
    proc = run_cli("analyze", str(tmp_path / "log.lzf"))
    assert proc.returncode == 2
    assert "lzf codec is not supported" in proc.stderr and "Traceback" not in proc.stderr


# --- streaming, parallel and damaged logs (issue 20) ----------------------------------


def _bench_log(tmp_path, tasks: int = 2000):
    """A generated log (bench/eventlog.py's generator: the plain fixture's events as templates)."""
    import sys

    sys.path.insert(0, str(FIXTURES.parents[1] / "bench"))
    from eventlog import write_plain

    return write_plain(tasks, tmp_path)


def _stdlib_sums(path) -> dict:
    """The same sums the slow, obvious way: stdlib json over every line."""
    run = cpu = tasks = 0
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event["Event"] == "SparkListenerTaskEnd":
            tasks += 1
            run += event["Task Metrics"]["Executor Run Time"]
            cpu += event["Task Metrics"]["Executor CPU Time"]
    return {"numTasks": tasks, "executorRunTime": run, "executorCpuTime": cpu / 1e6}


@pytest.mark.slow
def test_a_log_cut_in_segments_and_parsed_in_parallel_gives_the_same_tables(tmp_path, monkeypatch):
    from numaspark.metrics import logfiles

    path = _bench_log(tmp_path)
    serial = parse_event_log(path, workers=1)
    monkeypatch.setattr(logfiles, "SEGMENT", 256 << 10)  # ~40 segments, cut inside the stages
    assert len(logfiles.segments([path])) > 20
    parallel = parse_event_log(path, workers=2)
    assert not serial.warnings and not parallel.warnings
    pd.testing.assert_frame_equal(serial.tasks, parallel.tasks)
    pd.testing.assert_frame_equal(serial.stages, parallel.stages)
    sums = aggregate(parallel)
    expected = _stdlib_sums(path)
    assert sums["numTasks"] == expected["numTasks"] == 2000
    assert sums["executorRunTime"] == expected["executorRunTime"]
    assert sums["executorCpuTime"] == pytest.approx(expected["executorCpuTime"])
    assert sums["numStages"] == 100


def test_a_metric_of_the_wrong_type_is_named_and_counted_as_missing(tmp_path):
    lines = (LOGS / "plain").read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if '"SparkListenerTaskEnd"' in line)
    event = json.loads(lines[index])
    event["Task Metrics"]["Executor Run Time"] = "2481"
    lines[index] = json.dumps(event)
    (tmp_path / "log").write_text("\n".join(lines) + "\n")
    log = parse_event_log(tmp_path / "log")
    assert len(log.tasks) == 8
    [warning] = log.warnings
    assert f"task {event['Task Info']['Task ID']}" in warning
    assert "Task Metrics/Executor Run Time not of the expected type" in warning
    good = aggregate(parse_event_log(LOGS / "plain"))["executorRunTime"]
    assert aggregate(log)["executorRunTime"] == good - 2481


def test_a_rolling_log_with_a_file_missing_says_so(tmp_path):
    source, lines = _rolling_lines()
    rolling = tmp_path / "eventlog_v2_app"
    rolling.mkdir()
    compressor = zstandard.ZstdCompressor()
    thirds = len(lines) // 3
    (rolling / "events_1_app.zstd").write_bytes(compressor.compress(b"".join(lines[:thirds])))
    (rolling / "events_3_app.zstd").write_bytes(compressor.compress(b"".join(lines[2 * thirds :])))
    log = parse_event_log(rolling)
    assert any("without events_2" in w and "missing" in w for w in log.warnings), log.warnings


def test_a_zstd_log_damaged_late_keeps_its_first_events(tmp_path):
    """One frame per file, as Spark writes it, with bytes overwritten near its end."""
    plain = _bench_log(tmp_path)
    frame = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(plain.read_bytes()))
    frame[-2000:-1950] = b"\xff" * 50
    target = tmp_path / "eventlog_v2_x"
    target.mkdir()
    (target / "events_1_x.zstd").write_bytes(bytes(frame))
    log = parse_event_log(target)
    assert log.app_id is not None  # recovered, not refused as "not a Spark event log"
    assert any("damaged: its zstd stream breaks" in w for w in log.warnings), log.warnings
    assert 1500 < len(log.tasks) < 2000  # what came before the damage


@pytest.mark.parametrize("name", ["lz4.lz4", "snappy.snappy"])
def test_a_damaged_lz4_or_snappy_log_is_a_warning_not_a_traceback(tmp_path, name):
    """Damage late in the log keeps the blocks before it, with a warning that says so; damage
    before the application's start (its first 32 KiB block holds the environment) is one
    line, exit 2, that names the damage rather than asking whether it is an event log. (The
    application starts 63% into the plain log, after its environment.)"""
    raw = (LOGS / name).read_bytes()
    for at, ok in ((len(raw) - 600, True), (len(raw) // 4, False)):
        damaged = raw[:at] + b"\x00" * 64 + raw[at + 64 :]
        (tmp_path / name).write_bytes(damaged)
        proc = run_cli("analyze", str(tmp_path / name))
        assert "Traceback" not in proc.stderr
        if ok:
            assert proc.returncode == 0, proc.stderr
            assert "damaged: its" in proc.stderr
            assert "the events before the damage are kept" in proc.stderr
            assert "no application end: the figures cover up to" in proc.stderr
        else:
            [line] = proc.stderr.strip().splitlines()
            assert proc.returncode == 2 and "no Spark application events before its damage" in line


def test_many_bad_lines_are_one_warning(tmp_path):
    text = (LOGS / "plain").read_text()
    (tmp_path / "log").write_text("garbage\n" * 40 + text)
    log = parse_event_log(tmp_path / "log")
    assert len(log.tasks) == 8
    [warning] = log.warnings
    assert "lines 1, 2, 3, 4, 5 and 35 more are not JSON" in warning


def test_bad_utf8_inside_json_strings_is_a_bad_line_not_a_traceback(tmp_path):
    """msgspec raises UnicodeDecodeError, not DecodeError, for invalid UTF-8 in a string (the
    bad-input corpus found it with random bytes): a task end and another event, damaged so."""
    text = (LOGS / "plain").read_bytes()
    damaged = (
        b'{"Event":"SparkListenerTaskEnd","Stage ID":"\xe9"}\n'
        b'{"Event":"SparkListenerJobStart","Job ID":"\xe9\xff"}\n'
    )
    (tmp_path / "log").write_bytes(damaged + text)
    log = parse_event_log(tmp_path / "log")
    assert len(log.tasks) == 8
    [warning] = log.warnings
    assert "lines 1 and 2 are not JSON" in warning or "lines 1, 2" in warning


def test_without_the_task_table_the_sums_and_gc_are_the_same(tmp_path):
    from numaspark.metrics.gc import gc_by_executor

    path = _bench_log(tmp_path)
    full, lean = parse_event_log(path), parse_event_log(path, tasks=False)
    assert lean.tasks.empty and len(full.tasks) == 2000
    assert aggregate(lean) == aggregate(full)
    assert gc_by_executor(lean) == gc_by_executor(full)
    pd.testing.assert_frame_equal(lean.stages, full.stages)
    some = parse_event_log(path, tasks=("stageId", "duration"))
    assert list(some.tasks.columns) == ["stageId", "duration"] and len(some.tasks) == 2000
