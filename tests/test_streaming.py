"""Streaming workloads: the rate-controlled source, progress-event metrics, and real queries."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest
from conftest import run_cli

from numaspark.metrics.streaming import compact_progress, summarize_stream
from numaspark.spark.home import spark_env, spark_home
from numaspark.supervise.processes import ProcessTracker, wait_for
from numaspark.workloads import all_workloads, get_workload
from numaspark.workloads.jobs.streaming import QUERIES
from numaspark.workloads.streamsource import (
    LEDGER_FILE,
    PORT_FILE,
    Events,
    read_ledger,
    send,
    source_argv,
)

STREAMING = [w for w in all_workloads() if w.streaming]


def test_the_suite_has_the_eight_streaming_workloads():
    assert {w.name for w in STREAMING} == {
        "network-wordcount",
        "windowed-wordcount",
        "stateful-wordcount",
        "sql-wordcount",
        "clicks-error-rate",
        "clicks-page-counts",
        "clicks-active-users",
        "clicks-sliding-page-counts",
    }
    assert len([w for w in all_workloads() if not w.streaming]) >= 17


@pytest.mark.parametrize("kind", ["words", "clicks"])
def test_events_are_seeded_and_tallied(kind):
    one, two = Events(kind, 7, {"window_s": 10}), Events(kind, 7, {"window_s": 10})
    assert one.make(50, 1_000) == two.make(50, 1_000)
    assert Events(kind, 8, {}).make(50, 1_000) != one.make(50, 1_000)
    lines = one.make(200, 12_345).decode().splitlines()
    assert len(lines) == 200 and all(line.startswith("12345\t") for line in lines)
    facts = one.facts()
    if kind == "words":  # 300 events of 5 words
        assert facts["words"] == 300 * 5
    else:
        assert facts["windows"] == 2  # events at 1 s and 12.345 s: windows [0, 10) and [10, 20)
        assert 0 < facts["errors"] < 300


def test_sender_keeps_the_rate_and_counts_what_it_sent():
    left, right = socket.socketpair()
    received = bytearray()
    reader = threading.Thread(target=lambda: _drain(right, received))
    reader.start()
    with left:
        sent = send(left, Events("words", 1, {}), rate=400, seconds=1.0)
    reader.join()
    assert sent["events"] == 400 == received.count(b"\n")
    assert 300 < sent["send_rate"] < 500
    assert sent["last_ms"] - sent["first_ms"] >= 900


def _drain(sock: socket.socket, into: bytearray) -> None:
    with sock:
        while chunk := sock.recv(65536):
            into.extend(chunk)


def _progress(run_id, start_ms, duration_ms, rows, avg_ts=None, min_ts=None):
    raw = {
        "runId": run_id,
        "name": "q",
        "batchId": 0,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(start_ms / 1000))
        + f".{start_ms % 1000:03d}Z",
        "durationMs": {"triggerExecution": duration_ms},
        "sources": [
            {"numInputRows": rows, "inputRowsPerSecond": 0.0, "processedRowsPerSecond": 0.0}
        ],
        "observedMetrics": {
            "numaspark_events": {
                "values": [rows, avg_ts, min_ts],
                "schema": {"fields": [{"name": "events"}, {"name": "avg_ts"}, {"name": "min_ts"}]},
            }
        }
        if rows
        else {},
    }
    return compact_progress(raw)


def test_stream_summary_measures_only_the_window_and_its_drain():
    t0 = 1_700_000_000_000
    progress = [
        _progress("r", t0, 500, 900, t0 - 500, t0 - 1000),  # warm-up: left out
        _progress("r", t0 + 1000, 400, 1000, t0 + 500, t0),
        _progress("r", t0 + 2000, 600, 1000, t0 + 1500, t0 + 1000),
        _progress("r", t0 + 3000, 2000, 1000, t0 + 2500, t0 + 2000),
        _progress("r", t0 + 5000, 300, 10, t0 + 2990, t0 + 2980),  # the drain after the window
        _progress("other", t0 + 1000, 9999, 5, t0, t0),  # another query's batch
        _progress("r", t0 + 3500, 10, 0),  # an idle trigger: no rows, not a batch
    ]
    s = summarize_stream(progress, "r", from_ms=t0 + 1000, until_ms=t0 + 4000, trigger_ms=1000)
    assert s["batches"] == 3
    assert s["inputRate"] == pytest.approx(1000.0)  # 3000 rows in the 3 s window
    assert s["batchDurationMean"] == pytest.approx(1000.0)
    assert s["batchDurationMax"] == 2000
    assert s["behindBatches"] == 1
    assert s["latencyMax"] == pytest.approx(5000 - 2000)  # the slow batch ends 3 s after its oldest
    assert s["drainMs"] == pytest.approx(1300)
    # mean latency weighted by events: 900, 1100, 2500 ms for 1000 each, 2310 ms for 10
    assert s["latencyMean"] == pytest.approx((900 + 1100 + 2500) * 1000 / 3010 + 2310 * 10 / 3010)
    assert summarize_stream(progress, "none")["batches"] == 0


def test_a_users_stream_without_a_window_is_not_rated_by_its_first_batchs_backlog():
    """A rate source of 200 rows/s whose query started 14 s late: its first batch read the
    2800 rows that waited (the CI failure of 2026-11-28: 460 rows/s from two batches); each
    later batch reads what came since the one before started."""
    t0 = 1_700_000_000_000
    progress = [
        _progress("r", t0, 1500, 2800),
        _progress("r", t0 + 1500, 1000, 300),
        _progress("r", t0 + 2500, 1000, 200),
    ]
    s = summarize_stream(progress, "r")
    assert s["batches"] == 3 and s["inputRate"] == pytest.approx(500 / 2.5)
    assert summarize_stream(progress[:1], "r")["inputRate"] is None  # one batch: no rate


def test_window_must_be_a_multiple_of_the_slide(tmp_path):
    proc = run_cli(
        "run",
        "windowed-wordcount",
        "--param",
        "slide_s=3",
        "--duration",
        "5s",
        "--out",
        str(tmp_path),
    )
    assert proc.returncode == 2
    assert "window_s=10 must be a whole multiple of slide_s=3" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rate", "0"], "--rate and --duration must be positive"),
        (["--duration", "soon"], "bad --duration 'soon'"),
        (["--param", "windows=3"], "has no parameter 'windows'"),
        (["--param", "window_s=ten"], "bad --param window_s='ten': expected a int"),
    ],
)
def test_bad_streaming_options_are_one_line_errors(tmp_path, args, message):
    proc = run_cli("run", "windowed-wordcount", *args, "--out", str(tmp_path))
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_rate_is_for_streaming_workloads_only(tmp_path):
    proc = run_cli("run", "wordcount", "--rate", "100", "--out", str(tmp_path))
    assert proc.returncode == 2 and "for streaming workloads" in proc.stderr


def test_datagen_explains_that_streams_are_live():
    proc = run_cli("datagen", "clicks-error-rate")
    assert proc.returncode == 2 and "live event source" in proc.stderr


# --- real Spark --------------------------------------------------------------------------------

# Each query's answer is checked exactly against what its source sent, whatever the count:
# 75 events over 1.5 s and a 0.5 s trigger (the suite's is 1 s) give each query several
# batches; the eight queries run one after another, so each second here is eight in the test.
SECONDS, WARMUP, RATE, TRIGGER = 1.0, 0.5, 50.0, 0.5


@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
def test_every_streaming_query_matches_what_the_source_sent(tmp_path):
    """All eight queries, in one application (see drivers/all_streams.py), against real sources."""
    params = {
        w.name: {
            **w.params,
            "query": w.name,
            "warmup_s": WARMUP,
            "duration_s": SECONDS,
            "trigger_s": TRIGGER,
        }
        for w in STREAMING
    }
    counts = {"words": 0, "clicks": 0}
    for w in STREAMING:
        counts[w.stream] += 1
    out = tmp_path / "answers.json"
    with ProcessTracker() as tracker:
        dirs = {}
        for kind, connections in counts.items():
            dirs[kind] = tmp_path / kind
            # every window parameter of the suite is 10 s: one ledger serves them all
            argv = source_argv(
                dirs[kind], kind, RATE, WARMUP, SECONDS, 42, {"window_s": 10}, connections
            )
            tracker.start(argv, name=f"{kind}-source", log=tmp_path / f"{kind}.log")
            assert wait_for(lambda d=dirs[kind]: (d / PORT_FILE).exists(), timeout_s=30)
        driver = tracker.start(
            [
                str(spark_home() / "bin" / "spark-submit"),
                "--master",
                "local[2]",
                "--conf",
                "spark.sql.shuffle.partitions=2",
                "--conf",
                "spark.ui.enabled=false",
                str(Path(__file__).parent / "drivers" / "all_streams.py"),
                str(dirs["words"]),
                str(dirs["clicks"]),
                str(out),
                json.dumps(params),
            ],
            name="spark-submit",
            log=tmp_path / "driver.log",
            env=spark_env(),
        )
        assert driver.popen.wait(timeout=600) == 0, (tmp_path / "driver.log").read_text()[-3000:]
    answers = json.loads(out.read_text())
    ledgers = {kind: read_ledger(d / LEDGER_FILE) for kind, d in dirs.items()}
    connection = {}  # the driver's order: the i-th query of a kind read connection i
    for name, (kind, _) in QUERIES.items():
        connection[name] = sum(1 for k, _ in list(QUERIES.values())[: len(connection)] if k == kind)
    for w in STREAMING:
        (entry,) = [e for e in ledgers[w.stream] if e["connection"] == connection[w.name]]
        assert entry["events"] == RATE * (SECONDS + WARMUP)
        verdict = w.check({**entry, "params": w.params}, answers[w.name])
        assert verdict.passed, f"{w.name}: {verdict.details}\n{entry}\n{answers[w.name]}"


def _stream_run(out: Path, rate: int) -> dict:
    proc = run_cli(
        "run",
        "windowed-wordcount",
        "--rate",
        str(rate),
        "--duration",
        "6s",
        "--stream-warmup",
        "2s",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "input rate" in proc.stdout and "latency p95" in proc.stdout
    (run,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert run["status"] == "ok", run["failure_reason"]
    assert run["spec"]["stream"] == {"rate": float(rate), "duration_s": 6.0, "warmup_s": 2.0}
    assert run["spec"]["params"]["window_s"] == 10 and run["spec"]["params"]["slide_s"] == 5
    return run


# a scenario of a minute, run by the long lane to keep CI short:
# the streaming queries' own test stays in the default lane
@pytest.mark.long(script="bash scripts/test.sh --long")
@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
def test_a_higher_rate_shows_in_the_recorded_input_rate(tmp_path):
    # one run after the other: run at once on two cores, their batches took 4 s each and
    # the 6 s window held one batch, too few to measure a rate (tried, 2026-11-26)
    slow, fast = _stream_run(tmp_path / "slow", 20), _stream_run(tmp_path / "fast", 200)
    assert slow["streaming"]["inputRate"] == pytest.approx(20, rel=0.35)
    assert fast["streaming"]["inputRate"] == pytest.approx(200, rel=0.35)
    assert fast["streaming"]["inputRate"] > 3 * slow["streaming"]["inputRate"]
    listing = run_cli("results", str(tmp_path / "fast"), "--csv", str(tmp_path / "runs.csv"))
    assert listing.returncode == 0 and "Streaming runs" in listing.stdout
    assert "stream.inputRate" in (tmp_path / "runs.csv").read_text().splitlines()[0]
    for run in (slow, fast):
        s = run["streaming"]
        assert s["batches"] >= 2 and s["batchDurationMean"] > 0 and s["latencyMean"] > 0
        assert run["metrics"]["numTasks"] > 0  # the query's batches, by its run id


def test_streaming_listing_and_workload_metadata():
    proc = run_cli("workloads")
    assert proc.returncode == 0
    for w in STREAMING:
        assert w.name in proc.stdout
    assert get_workload("windowed-wordcount").params["slide_s"] == 5
