"""Many event logs at once (issue 49, item 3): `numaspark advise DIR` over a directory of logs
(copies of the recorded fixtures, and small logs written here with the affinity plugin's
events as Spark's writer lays them out), a History Server's REST API (a real HTTP server on
127.0.0.1 serving Spark's own expected application list and zips of Spark's own test logs),
the summaries kept between scans, bound against unbound from history, and Spark's History
Server test logs (Spark 1.2 to 4.2) as one directory. No JVM."""

from __future__ import annotations

import io
import json
import os
import shutil
import statistics
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from conftest import FIXTURES, SPARK_EVENTS, invoke_cli, run_cli, spark_expectation

from numaspark import records
from numaspark.decide.advise import advise_event_log
from numaspark.decide.history import NUMA_RULE_NAMES, many_logs, scan_directory, summarize_log
from numaspark.decide.observational import MIN_RUNS, OBSERVATIONAL
from numaspark.errors import UsageError
from numaspark.metrics.aggregate import task_total
from numaspark.metrics.eventlog import parse_event_log
from numaspark.placement.plugin import LEVEL_KEY, PLACEMENT_EVENT

LOGS = FIXTURES / "eventlogs"
ONE_NODE = {"nodes": {"0": "0-1"}, "cores": ["0", "1"]}


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    """Each test keeps its scans' summaries (and fetched logs) in a state directory of its own."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))


def _report(**fields) -> dict:
    return {"executor": "1", "host": "h", "pid": 7, "cpus": "0-1", "mems": "0", **fields}


def _write_log(
    path: Path, name: str, app_id: str, seconds: float, placement: str | None = None
) -> Path:
    """A plain log of ``seconds``; ``placement``: None (no plugin), bound (executor 1 on node
    0, level node) or unbound (no node chosen, policy default, level none)."""
    bound = placement == "bound"
    reports = [
        _report(
            host_topology=ONE_NODE,
            policy="bind:0" if bound else "default",
            local_share=0.97,
            numa_balancing="0",
            **({"chosen_nodes": "0"} if bound else {}),
        )
    ]
    events = [
        {"Event": "SparkListenerLogStart", "Spark Version": "4.0.1"},
        {"Event": "SparkListenerApplicationStart", "App Name": name, "App ID": app_id}
        | {"Timestamp": 1_000_000, "User": "u"},
        {
            "Event": "SparkListenerEnvironmentUpdate",
            "Spark Properties": {"spark.master": "spark://m:7077"}
            | ({LEVEL_KEY: "node" if bound else "none"} if placement else {}),
        },
        *(
            [{"Event": PLACEMENT_EVENT, "version": 1, "time_ms": 1, "reports": reports}]
            * bool(placement)
        ),
        {"Event": "SparkListenerApplicationEnd", "Timestamp": 1_000_000 + int(seconds * 1000)},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _fixtures(directory: Path) -> Path:
    """Copies of the recorded logs as a History Server's directory holds them."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("plain", "lz4.lz4", "snappy.snappy"):
        shutil.copy(LOGS / name, directory / name)
    shutil.copytree(LOGS / "rolling-zstd", directory / "eventlog_v2_local-1795304350000")
    shutil.copytree(LOGS / "plugin-standalone", directory / "eventlog_v2_app-20261127184624-0000")
    return directory


# --- the table -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_directory_of_logs_is_one_table_grouped_by_name(tmp_path):
    directory = _fixtures(tmp_path / "events")
    _write_log(directory / "app-2", "squares", "app-2", 20.0, "unbound")
    printed = run_cli("advise", str(directory))  # a process of its own: 200 columns wide
    assert printed.returncode == 0, printed.stderr
    for text in ("application", "straddle", "py mem", "squares", "app-20261127184624-0000"):
        assert text in printed.stdout, text
    assert "6 log(s) read, 0 from the cache" in printed.stdout
    found = json.loads(invoke_cli("advise", str(directory), "--json").stdout)
    assert found["read"] == 0 and found["from_cache"] == 6  # the text's scan kept them
    groups = {g["name"]: g["applications"] for g in found["groups"]}
    assert sorted(groups) == ["lz4", "plain", "rolling-zstd", "snappy", "squares"]
    written, recorded = groups["squares"]  # by start: the one written here "ran" in 1970
    assert recorded["app_id"] == "app-20261127184624-0000" and recorded["spark_version"]
    assert recorded["placement"] == "bound" and recorded["bound_nodes"] == "0"
    assert recorded["severities"]["numa-straddle"] == "none"
    assert recorded["severities"]["remote-pages"] == "none"
    assert recorded["duration_s"] == pytest.approx(17.757) and recorded["executors"] >= 1
    assert written["placement"] == "unbound" and written["severities"]["remote-pages"] == (
        "not assessed"  # nothing bound: nothing to judge
    )
    plain = groups["plain"][0]
    assert plain["placement"] == "not recorded" and plain["worst"] is None
    assert set(plain["severities"].values()) <= {"not assessed", "none"}


def test_a_remote_pages_finding_is_the_worst_and_said_in_words(tmp_path):
    directory = tmp_path / "events"
    directory.mkdir()
    log = _write_log(directory / "app-1", "etl", "app-1", 10.0, "bound")
    log.write_text(log.read_text().replace('"local_share": 0.97', '"local_share": 0.6'))
    _write_log(directory / "app-2", "etl", "app-2", 10.0)
    printed = invoke_cli("advise", str(directory))
    summary = json.loads(invoke_cli("advise", str(directory), "--json").stdout)
    worst = summary["groups"][0]["applications"][0]["worst"]
    assert worst["rule"] == "remote-pages" and worst["severity"] != "none"
    assert f"app-1: {worst['severity']} remote-pages: executor 1: 40% of its" in printed.stdout


def test_a_logs_summary_is_the_advice_on_that_log_alone(tmp_path):
    """The table's severities, from a parse without stage sums, are advise LOG's own, task CPU
    (python-cpu's evidence) included."""
    for log in (LOGS / "plugin-standalone", LOGS / "pyspark-process-tree", LOGS / "plain"):
        summary = summarize_log(log)
        advice = advise_event_log(log)
        alone = {f.rule: f.severity.word for f in advice.findings}
        alone |= {n.rule: "not assessed" for n in advice.not_assessed}
        assert summary.severities == {r: alone[r] for r in summary.severities}, log
        assert list(summary.severities) == list(NUMA_RULE_NAMES)
    recorded = LOGS / "plugin-standalone"
    light = parse_event_log(recorded, tasks=("executorCpuTime",), sums=False)
    full = parse_event_log(recorded, tasks=False)
    assert light.stage_sums.empty and not full.stage_sums.empty
    cpu_ms = task_total(full, "executorCpuTime")
    assert task_total(light, "executorCpuTime") == pytest.approx(cpu_ms) and cpu_ms > 0


# --- bound against unbound -----------------------------------------------------------------


@pytest.mark.slow
def test_bound_against_unbound_matches_a_direct_computation(tmp_path):
    directory = tmp_path / "events"
    directory.mkdir()
    bound, unbound = [300.0, 310.0, 322.0, 305.0], [350.0, 356.0, 341.0]
    for i, seconds in enumerate(bound):
        _write_log(directory / f"app-b{i}", "etl", f"app-b{i}", seconds, "bound")
    for i, seconds in enumerate(unbound):
        _write_log(directory / f"app-u{i}", "etl", f"app-u{i}", seconds, "unbound" if i else None)
    _write_log(directory / "app-w1", "wordcount", "app-w1", 5.0, "bound")
    _write_log(directory / "app-w2", "wordcount", "app-w2", 6.0)
    for i in range(2):
        _write_log(directory / f"app-k{i}", "kmeans", f"app-k{i}", 7.0, "bound")
    from scipy.stats import bootstrap  # ~2 s to import: only in the test that needs it

    etl, kmeans, wordcount = scan_directory(directory).comparisons()
    assert kmeans.ratio is None and kmeans.why_not == "no unbound run to compare with"
    assert (etl.bound_runs, etl.unbound_runs) == (4, 3)
    assert etl.bound_median_s == statistics.median(bound) == 307.5
    assert etl.unbound_median_s == statistics.median(unbound) == 350.0
    assert etl.ratio == pytest.approx(350.0 / 307.5)
    direct = bootstrap(
        (np.array(bound), np.array(unbound)),
        lambda b, u, axis=-1: np.median(u, axis=axis) / np.median(b, axis=axis),
        vectorized=True,
        paired=False,
        method="percentile",
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert (etl.low, etl.high) == pytest.approx((direct.low, direct.high))
    assert etl.low <= etl.ratio <= etl.high
    assert wordcount.ratio is None and f"fewer than {MIN_RUNS}" in (wordcount.why_not or "")
    printed = invoke_cli("advise", str(directory)).stdout
    assert f"Bound against unbound runs, {OBSERVATIONAL}:" in printed
    assert (
        f"etl: 4 runs node-bound, 3 unbound; median 308 s against 350 s, {350 / 307.5:.2f}x, "
        f"95% interval {direct.low:.2f}x-{direct.high:.2f}x"
    ) in printed
    assert "wordcount: 1 runs node-bound, 1 unbound: not compared (fewer than 3" in printed


# --- the summaries kept between scans ------------------------------------------------------


def test_a_second_scan_reads_only_new_or_changed_logs(tmp_path):
    directory = _fixtures(tmp_path / "events")
    first = scan_directory(directory)
    assert (first.read, first.from_cache) == (5, 0)
    again = scan_directory(directory)
    assert (again.read, again.from_cache) == (5 - 5, 5)
    assert [records.dump(s) for s in again.summaries] == [records.dump(s) for s in first.summaries]
    touched = directory / "plain"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 10**9))
    with (directory / "eventlog_v2_local-1795304350000" / "events_2_local-1795304350000").open(
        "w"
    ) as grown:  # a rolling log that rolled on
        grown.write(json.dumps({"Event": "SparkListenerLogStart", "Spark Version": "4.3.0"}))
    _write_log(directory / "app-new", "etl", "app-new", 3.0)
    third = scan_directory(directory)
    assert (third.read, third.from_cache) == (3, 3)
    shutil.rmtree(directory / "eventlog_v2_app-20261127184624-0000")  # cleaned by the server
    assert (scan_directory(directory).read, len(scan_directory(directory).summaries)) == (0, 5)


def test_an_unwritable_state_directory_is_a_warning_not_a_failure(tmp_path, monkeypatch):
    directory = _fixtures(tmp_path / "events")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(blocker))
    scan = scan_directory(directory)
    assert scan.read == 5 and any("the next scan reads every log again" in w for w in scan.warnings)


# --- bad input -----------------------------------------------------------------------------


def test_a_damaged_log_among_many_is_one_warning(tmp_path):
    directory = _fixtures(tmp_path / "events")
    (directory / "app-garbage").write_bytes(bytes(range(256)) * 8)
    lines = (LOGS / "plain").read_bytes().splitlines(keepends=True)
    (directory / "app-cut").write_bytes(b"".join(lines[:10]) + lines[10][:50])  # mid-event
    proc = run_cli("advise", str(directory))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    [garbage] = [w for w in warnings if "app-garbage" in w]
    assert "app-garbage: not read: not a Spark event log: its first bytes are binary" in garbage
    assert any("app-cut" in w and "truncated: cut at byte" in w for w in warnings)
    assert "7 log(s) read" in proc.stdout


@pytest.mark.parametrize(
    "make",
    [
        lambda d: None,  # empty
        lambda d: (d / "notes.txt").write_text("hello\n"),
        lambda d: (d / "sub").mkdir(),
    ],
    ids=["empty", "a text file", "a subdirectory"],
)
def test_a_directory_with_neither_results_nor_logs_is_one_line(tmp_path, make):
    directory = tmp_path / "d"
    directory.mkdir()
    make(directory)
    proc = run_cli("advise", str(directory))
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "holds neither numaspark's results" in line, proc.stderr


def test_the_explicit_option_and_what_a_directory_holds(tmp_path):
    results = tmp_path / "out"
    results.mkdir()
    (results / "results.jsonl").write_text("")
    assert not many_logs(str(results))  # a results directory, by its results.jsonl
    assert many_logs(str(results), forced=True)
    run = tmp_path / "run" / "eventlog"
    shutil.copytree(LOGS / "rolling-zstd", run / "eventlog_v2_local-1795304350000")
    assert not many_logs(str(run))  # a run's eventlog/ folder: its one log, as analyze reads it
    assert many_logs("http://127.0.0.1:1")
    with pytest.raises(UsageError, match="not a directory"):
        many_logs(str(LOGS / "plain"), forced=True)
    proc = run_cli("advise", str(LOGS / "plain"), "--event-logs")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    forced = json.loads(invoke_cli("advise", str(run), "--event-logs", "--json").stdout)
    assert [g["name"] for g in forced["groups"]] == ["rolling-zstd"]


def test_logs_in_progress_are_skipped_unless_asked(tmp_path):
    directory = _fixtures(tmp_path / "events")
    shutil.copy(LOGS / "plain", directory / "local-9.inprogress")
    rolling = directory / "eventlog_v2_local-1795304350000"
    (rolling / "appstatus_local-1795304350000").rename(
        rolling / "appstatus_local-1795304350000.inprogress"
    )
    skipped = scan_directory(directory)
    assert (skipped.read, skipped.in_progress) == (4, 2)
    assert "2 in progress skipped (--in-progress reads them)" in skipped.tally()
    read = scan_directory(directory, in_progress=True)
    assert (read.read, read.from_cache, read.in_progress) == (2, 4, 0)


# --- a History Server's REST API -----------------------------------------------------------


def _zip_of(log: Path) -> bytes:
    """A log as the History Server's /logs sends it: the file, or the rolling directory's
    entry and its files."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        if log.is_file():
            archive.write(log, log.name)
        else:
            archive.writestr(f"{log.name}/", b"")
            for file in sorted(log.iterdir()):
                archive.write(file, f"{log.name}/{file.name}")
    return data.getvalue()


class _HistoryServer:
    """/api/v1/applications: Spark's own expected answer, plus a rolling log and an attempt
    still running; /api/v1/applications/ID[/ATTEMPT]/logs: zips of Spark's test logs."""

    def __init__(self, tmp_path: Path) -> None:
        logs = SPARK_EVENTS / "logs"
        listed = json.loads(spark_expectation("application_list_json_expectation.json").read_text())
        rolling = tmp_path / "eventlog_v2_app-20261127184624-0000"
        shutil.copytree(LOGS / "plugin-standalone", rolling)
        running = {"attemptId": "1", "completed": False, "lastUpdatedEpoch": 5}
        listed += [
            {"id": "app-20261127184624-0000", "name": "squares", "attempts": [{"completed": True}]},
            {"id": "app-running", "name": "x", "attempts": [running]},
        ]
        self.listing = json.dumps(listed).encode()
        self.logs = {app["id"]: logs / app["id"] for app in listed}
        self.logs |= {
            "local-1430917381535/1": logs / "local-1430917381535_1",
            "local-1430917381535/2": logs / "local-1430917381535_2",
            "local-1426533911241/1": logs / "local-1426533911241",
            "local-1426533911241/2": logs / "local-1426633911242",
            "app-20261127184624-0000": rolling,
        }
        self.fetched: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.removeprefix("/api/v1/applications")
                if path in ("", "/"):
                    return self._send(server.listing, "application/json")
                key = path.strip("/").removesuffix("/logs")
                log = server.logs.get(key)
                if not path.endswith("/logs") or log is None or not log.exists():
                    return self.send_error(404, f"no such application {key}")
                server.fetched.append(key)
                return self._send(_zip_of(log), "application/octet-stream")

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_port}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def history_server(tmp_path):
    server = _HistoryServer(tmp_path)
    yield server
    server.close()


def test_a_history_servers_logs_are_fetched_once_and_read_as_a_directory(history_server):
    found = json.loads(invoke_cli("advise", history_server.url, "--json").stdout)
    attempts = 16 + 2 + 1  # Spark's list (two apps of two attempts) and the rolling log
    assert len(history_server.fetched) == attempts, history_server.fetched
    assert {"local-1430917381535/1", "local-1426533911241/2"} <= set(history_server.fetched)
    assert "app-running/1" not in history_server.fetched  # still running: skipped
    assert found["read"] == attempts and found["in_progress_skipped"] == 1
    ids = [a["app_id"] for g in found["groups"] for a in g["applications"]]
    assert ids.count("local-1430917381535") == 2 and "app-20261127184624-0000" in ids
    squares = next(g for g in found["groups"] if g["name"] == "squares")["applications"][0]
    assert squares["placement"] == "bound" and not found["not_read"]
    again = json.loads(invoke_cli("advise", history_server.url + "/", "--json").stdout)
    assert len(history_server.fetched) == attempts  # nothing changed: nothing fetched
    assert (again["read"], again["from_cache"]) == (0, attempts)


def test_an_unreachable_history_server_is_one_line(history_server):
    url = history_server.url
    history_server.close()
    proc = run_cli("advise", url)
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "no answer" in line and url in line, proc.stderr


def test_a_server_that_is_not_a_history_server_is_one_line(history_server):
    proc = run_cli("advise", history_server.url + "/not-spark")
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "HTTP 404" in line and "History Server" in line


# --- Spark's own History Server test logs --------------------------------------------------


def test_sparks_history_server_logs_as_one_directory():
    """Logs from Spark 1.2 to 4.2: each one listed, or named in a warning, or counted in
    progress; no traceback."""
    logs = SPARK_EVENTS / "logs"
    if not logs.is_dir():
        pytest.fail(f"{logs} missing: clone shared/ beside this repository")
    proc = run_cli("advise", str(logs), "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    found = json.loads(proc.stdout)
    listed = {
        Path(a["log"]).relative_to(logs).parts[0]
        for g in found["groups"]
        for a in g["applications"]
    }
    warned = {w.split(":")[0] for w in found["warnings"]}
    entries = {p.name for p in logs.iterdir() if not p.name.startswith(".")}
    unaccounted = {e for e in entries - listed if not any(w.endswith(e) for w in warned)}
    assert len(unaccounted) == found["in_progress_skipped"], unaccounted
    assert len(listed) >= 20
