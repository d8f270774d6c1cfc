"""`numaspark results` and `numaspark report` of event logs (issue 49, item 2): a directory of
Spark's event logs (copies of the recorded fixtures, Spark's own History Server test logs), one
log, or a History Server's URL, told from a results directory as advise tells it, read by
advise's one reader. The table's values are checked against what analyze and advise read
from the same logs, never against numbers worked out here. No JVM."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from conftest import FIXTURES, SPARK_EVENTS, invoke_cli, run_cli
from test_advise_many import _HistoryServer
from test_report import open_in_chromium

from numaspark.decide.history import APPLICATION_COLUMNS
from numaspark.experiment.store import ResultStore
from numaspark.metrics.eventlog import parse_event_log

LOGS = FIXTURES / "eventlogs"
SPARK35 = LOGS / "plugin-spark35" / "app-20261127200936-0000.zstd"
# every recorded log: Spark 4.3 plain, rolling zstd, lz4, snappy; a PySpark job; a failed task;
# the affinity plugin's events on a standalone cluster (4.3) and a local-cluster (3.5)
RECORDED = {
    "plain": LOGS / "plain",
    "rolling": LOGS / "rolling-zstd",
    "lz4": LOGS / "lz4.lz4",
    "snappy": LOGS / "snappy.snappy",
    "pyspark": LOGS / "pyspark-process-tree",
    "failed-task": LOGS / "failed-task",
    "plugin-standalone": LOGS / "plugin-standalone",
    "plugin-spark35": SPARK35,
}
PLUGIN = {"plugin-standalone", "plugin-spark35"}


@pytest.fixture(autouse=True)
def _state(tmp_path, monkeypatch):
    """Each test keeps its scans' summaries in a state directory of its own."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))


def _events(directory: Path) -> Path:
    """Copies of every recorded log as a History Server's directory holds them."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, log in RECORDED.items():
        if log.is_dir():
            app = next(log.glob("events_1_*")).name.split("_", 2)[2].split(".")[0]
            shutil.copytree(log, directory / f"eventlog_v2_{app}")
        else:
            shutil.copy(log, directory / (log.name if name != "plugin-spark35" else "app-35.zstd"))
    return directory


def _spark_events() -> Path:
    logs = SPARK_EVENTS / "logs"
    if not logs.is_dir():
        pytest.fail(f"{logs} missing: clone shared/ beside this repository")
    return logs


def _listing(*args: str) -> dict:
    proc = invoke_cli("results", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# --- the values: what analyze and advise read from the same log ------------------------


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_a_logs_row_is_what_analyze_and_advise_read(name):
    log = RECORDED[name]
    [row] = _listing(str(log))["applications"]
    [analyzed] = json.loads(invoke_cli("analyze", str(log), "--json").stdout)["logs"]
    aggregates = analyzed["aggregates"]
    assert (row["app_id"], row["application"], row["spark_version"]) == (
        analyzed["app_id"],
        analyzed["app_name"],
        analyzed["spark_version"],
    )
    assert row["duration_s"] == pytest.approx(aggregates["elapsedTime"] / 1000)
    assert (row["stages"], row["tasks"]) == (aggregates["numStages"], aggregates["numTasks"])
    assert row["status"] == ("ok" if analyzed["complete"] else "incomplete")
    parsed = parse_event_log(log, tasks=False)  # the reader analyze prints from
    assert row["jobs"] == len(parsed.jobs) and row["failed_jobs"] == 0
    assert row["executors"] == len(parsed.executors)
    executors = [p for p in analyzed["placement"] if p["jvm"] != "driver"]
    if name in PLUGIN:
        assert executors, "the plugin's log lists its executors"
        assert row["local_share"] == min(p["local_share"] for p in executors)
        assert row["bound_nodes"] == ",".join(sorted({p["bound_nodes"] for p in executors}))
        assert row["placement"] == "bound"
    else:
        assert analyzed["placement"] == [] and row["placement"] == "not recorded"
        assert row["local_share"] is None and row["bound_nodes"] is None
    # advise's table of the same log: the same summary, the same placement
    advised = json.loads(invoke_cli("advise", str(log.parent), "--event-logs", "--json").stdout)
    [summary] = [
        a
        for g in advised["groups"]
        for a in g["applications"]
        if Path(a["log"]).resolve() == log.resolve()
    ]
    for key in ("app_id", "spark_version", "executors", "placement", "bound_nodes", "duration_s"):
        assert row[key] == summary[key], key


def test_a_directory_is_one_row_per_application_grouped_by_name(tmp_path):
    directory = _events(tmp_path / "events")
    listing = _listing(str(directory))
    rows = listing["applications"]
    assert len(rows) == len(RECORDED) and listing["not_read"] == []
    names = [r["application"] for r in rows]
    assert names == sorted(names)  # grouped by name, as advise's table
    squares = [r for r in rows if r["application"] == "squares"]
    assert [r["spark_version"] for r in squares] == ["4.3.0", "3.5.9"]  # by start
    for row in rows:  # each row is the row of its log alone
        [alone] = _listing(row["log"])["applications"]
        assert {**alone, "log": row["log"]} == row
    text = run_cli("results", str(directory))
    assert text.returncode == 0, text.stderr
    for word in ("app-20261127184624-0000", "3.5.9", "bound 0", "100%", "not recorded"):
        assert word in text.stdout, word
    assert f"0 log(s) read, {len(RECORDED)} from the cache" in text.stdout  # the JSON's scan


def test_a_log_without_the_plugins_events_says_not_recorded():
    text = run_cli("results", str(LOGS / "plain"))
    assert text.returncode == 0, text.stderr
    [line] = [x for x in text.stdout.splitlines() if "local-1795304333972" in x]
    assert "not recorded" in line and line.split()[-1] == "-"  # no local pages either


def test_advise_and_results_read_a_directory_once(tmp_path):
    """One reader, one cache: the summaries advise kept are the rows results lists."""
    directory = _events(tmp_path / "events")
    advised = json.loads(invoke_cli("advise", str(directory), "--json").stdout)
    assert advised["read"] == len(RECORDED)
    listing = _listing(str(directory))
    assert (listing["read"], listing["from_cache"]) == (0, len(RECORDED))


@pytest.mark.slow
def test_sparks_history_server_logs_from_spark_1_to_4():
    """Spark's own test logs: every application advise lists, with the same duration and
    executors; each job count and failure is the reader's."""
    logs = _spark_events()
    proc = run_cli("results", str(logs), "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    listing = json.loads(proc.stdout)
    advised = json.loads(invoke_cli("advise", str(logs), "--json").stdout)
    expected = [a for g in advised["groups"] for a in g["applications"]]
    assert [(r["log"], r["duration_s"], r["executors"]) for r in listing["applications"]] == [
        (a["log"], a["duration_s"], a["executors"]) for a in expected
    ]
    assert len(listing["applications"]) >= 20 and listing["warnings"] == advised["warnings"]
    for row in listing["applications"]:
        parsed = parse_event_log(row["log"], tasks=False)
        failed = int((parsed.jobs["result"] == "JobFailed").sum()) if len(parsed.jobs) else 0
        assert (row["jobs"], row["failed_jobs"]) == (len(parsed.jobs), failed), row["log"]
        exited = parsed.exit_code not in (None, 0)  # the driver's status, where Spark wrote it
        assert row["status"] == (
            "incomplete" if not parsed.complete else "failed" if failed or exited else "ok"
        )
    assert {"ok", "failed", "incomplete"} <= {r["status"] for r in listing["applications"]}


def test_a_history_servers_url(tmp_path):
    server = _HistoryServer(tmp_path)
    try:
        listing = _listing(server.url)
    finally:
        server.close()
    squares = [r for r in listing["applications"] if r["application"] == "squares"]
    assert [(r["placement"], r["bound_nodes"]) for r in squares] == [("bound", "0")]
    assert listing["in_progress_skipped"] == 1


# --- what it writes --------------------------------------------------------------------------


def test_json_csv_and_parquet_have_the_same_columns(tmp_path):
    directory = _events(tmp_path / "events")
    csv, parquet = tmp_path / "apps.csv", tmp_path / "apps.parquet"
    proc = run_cli(
        "results", str(directory), "--json", "--csv", str(csv), "--parquet", str(parquet)
    )
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["applications"]  # JSON alone on stdout
    assert f"wrote {len(rows)} application(s) to {csv}" in proc.stderr
    assert [list(r) for r in rows] == [list(APPLICATION_COLUMNS)] * len(rows)
    for frame in (pd.read_csv(csv), pd.read_parquet(parquet)):
        assert list(frame.columns) == list(APPLICATION_COLUMNS)
        assert list(frame["app_id"]) == [r["app_id"] for r in rows]
        assert list(frame["tasks"]) == [r["tasks"] for r in rows]
        assert list(frame["local_share"].dropna()) == [
            r["local_share"] for r in rows if r["local_share"] is not None
        ]


def test_a_results_directory_is_still_its_runs(tmp_path):
    runs = FIXTURES / "runs" / "wordcount-core"
    stored = ResultStore(runs).load()
    listing = json.loads(invoke_cli("results", str(runs), "--json").stdout)
    assert [r["run_id"] for r in listing["runs"]] == [r.run_id for r in stored]
    assert "run(s)" in invoke_cli("results", str(runs)).stdout  # the stored runs' table
    forced = run_cli("results", str(runs), "--event-logs")  # its results.jsonl is no log
    [line] = forced.stderr.strip().splitlines()
    assert forced.returncode == 2 and "could be read" in line


# --- bad input: one line, exit 2 -------------------------------------------------------------


def _neither(root: Path) -> dict[str, list[str]]:
    empty, text, sub = root / "empty", root / "text", root / "sub"
    for d in (empty, text, sub / "inner"):
        d.mkdir(parents=True)
    (text / "notes.txt").write_text("hello\n")
    damaged = root / "damaged"  # logs by their first line, none with an application in it
    damaged.mkdir()
    for name in ("local-1", "local-2"):
        (damaged / name).write_text('{"Event":"SparkListenerLogStart","Spark Version":"4.3.0"}\n')
    return {
        "a directory of logs without an application": [str(damaged)],
        "an empty directory": [str(empty)],
        "a directory of a text file": [str(text)],
        "a directory of a directory": [str(sub)],
        "a text file": [str(text / "notes.txt")],
        "a missing path": [str(root / "missing")],
        "--event-logs on an empty directory": [str(empty), "--event-logs"],
        "--event-logs on a file": [str(LOGS / "plain"), "--event-logs"],
        "--time with event logs": [str(LOGS / "plain"), "--time", "app"],
        "--mixed with event logs": [str(LOGS / "plain"), "--mixed"],
    }


@pytest.mark.slow
@pytest.mark.parametrize("command", ["results", "report"])
def test_what_is_neither_results_nor_logs_is_one_line(tmp_path, command):
    for label, args in _neither(tmp_path / "in").items():
        target = tmp_path / "r.html"
        proc = run_cli(command, *args, *(["-o", str(target)] if command == "report" else []))
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, f"{label}: {proc.stderr}"
        assert lines[0].startswith("Error: ") and "Traceback" not in proc.stderr, label
        assert not target.exists(), label


def test_logs_all_in_progress_say_how_to_read_them(tmp_path):
    directory = tmp_path / "events"
    directory.mkdir()
    shutil.copy(LOGS / "plain", directory / "local-9.inprogress")
    proc = run_cli("results", str(directory))
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "--in-progress reads them" in line
    read = _listing(str(directory), "--in-progress")["applications"]
    assert [r["app_id"] for r in read] == ["local-1795304333972"]


def test_the_table_option_is_for_results_directories_only(tmp_path):
    proc = run_cli("results", str(LOGS / "plain"), "--table", str(tmp_path / "t.csv"))
    [line] = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and "--table: only for a results directory" in line


# --- the report ------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_report_of_event_logs_has_a_section_per_application(tmp_path):
    directory = _events(tmp_path / "events")
    target = tmp_path / "report.html"
    proc = invoke_cli("report", str(directory), "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    text = target.read_text()
    rows = _listing(str(directory))["applications"]
    for row in rows:
        assert row["app_id"] in text and f"<h2>{row['application']} (" in text
    assert text.count('<div class="application"') == len(rows)
    assert text.count('<section id="group-') == len({r["application"] for r in rows})
    # the plugin's executors: their placement, drawn on the host the reports describe
    assert "<td>executor 0</td><td>vm</td><td>0-1</td><td>0</td>" in text
    assert text.count('class="topology"') == len(PLUGIN)
    assert "Not recorded: the log has no placement events" in text
    assert "No rule found anything to change." in text and "numa-straddle: none" in text
    plots, sections, errors = open_in_chromium(target, "report-event-logs.png")
    assert errors == [] and plots == len(rows)  # each application's stage times
    assert {"applications", "group-1"} <= set(sections)


@pytest.mark.slow
def test_the_report_of_one_log_and_of_sparks_own_logs(tmp_path):
    one = tmp_path / "one.html"
    assert invoke_cli("report", str(SPARK35), "-o", str(one)).returncode == 0
    assert "app-20261127200936-0000" in one.read_text() and "3.5.9" in one.read_text()
    spark = tmp_path / "spark.html"
    proc = run_cli("report", str(_spark_events()), "-o", str(spark))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    text = spark.read_text()
    # a test log names its application <script>alert('XSS')</script>: shown, never run
    assert "<script>alert(" not in text and "&lt;script&gt;alert(" in text
    assert "application_1538416563558_0014" in text and "PythonBisectingKMeansExample" in text


def test_a_study_directory_of_cosched_rounds_is_still_a_results_directory(tmp_path):
    directory = tmp_path / "cosched"
    directory.mkdir()
    row = {"split": "2x1", "workload": "wordcount", "cpus": "0", "completions": 3}
    (directory / "cosched.jsonl").write_text(
        json.dumps(row | {"bound": True, "median_completion_s": 1.0, "remote_page_share": 0.0})
        + "\n"
    )
    target = tmp_path / "r.html"
    proc = invoke_cli("report", str(directory), "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    assert "Co-scheduling rounds" in target.read_text()
