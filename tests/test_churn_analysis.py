"""Analysis with executors that come and go (issue 57, item 4), no JVM: two event logs of a
dynamic-allocation application recorded here (tests/apps/bursts.py, three bursts with ~10 s
idle spells, idle timeout 4 s, at most 2 one-core executors on a standalone cluster of two
workers; tests/fixtures/eventlogs/make_fixtures.py says how), one of them with the affinity
plugin's placement reports. In each, six executors came and went, at most two at once: each
reader counts what was alive at each moment, not every executor ever added."""

from __future__ import annotations

import dataclasses
import json

import pytest
from conftest import FIXTURES, SPARK_EVENTS, invoke_cli
from test_report import open_in_chromium

from numaspark.decide.advise import Severity, advise_event_log
from numaspark.decide.history import read_application, scan_log
from numaspark.decide.whatif import TASK_COLUMNS, default_counts, measured_s, simulate
from numaspark.metrics.eventlog import parse_event_log
from numaspark.metrics.executors import (
    APPLICATION_END,
    DECOMMISSIONED,
    IDLE,
    KILLED,
    LOST,
    churn,
    placement_seconds,
    removal_kind,
    spark_time_ms,
)
from numaspark.report.applications import build_log_report

DYNAMIC = FIXTURES / "eventlogs" / "dynamic-allocation"
DYNAMIC_PLUGIN = FIXTURES / "eventlogs" / "dynamic-allocation-plugin"


@pytest.mark.parametrize("log", [DYNAMIC, DYNAMIC_PLUGIN], ids=["plain", "plugin"])
def test_peak_executors_and_slots_beside_the_total_ever_added(log):
    executors = churn(parse_event_log(log))
    assert executors.total == 6 and len(parse_event_log(log).executors) == 6
    assert (executors.peak_executors, executors.peak_slots) == (2, 2)
    assert executors.dynamic and executors.idle_timeout_ms == 4000
    # executor-seconds: each executor's added to removed (or the application's end)
    assert 0 < executors.executor_seconds < 2 * executors.duration_ms / 1000


def test_results_json_gives_peak_and_total_executors():
    proc = invoke_cli("results", str(DYNAMIC), "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)["applications"]
    assert (row["executors"], row["peak_executors"], row["peak_slots"]) == (6, 2, 2)
    assert row["executor_seconds"] > 0 and row["bound_share"] is None  # no plugin
    table = invoke_cli("results", str(DYNAMIC))
    assert "at once" in table.stdout and "2 (2 slots)" in table.stdout


def test_removal_reasons_are_classified_and_their_text_kept():
    executors = churn(parse_event_log(DYNAMIC))
    ended = {s.executor: (s.ended, s.reason) for s in executors.spans}
    # without decommissioning Spark kills an idle executor: "Executor killed by driver.", and
    # each had run no task for the 4 s idle timeout (its bursts were 10 s apart)
    for executor in ("0", "1", "2", "3"):
        assert ended[executor] == (IDLE, "Executor killed by driver."), executor
    assert ended["4"] == ended["5"] == (APPLICATION_END, None)  # alive at the end
    assert executors.endings == {IDLE: 4, APPLICATION_END: 2}
    figures = executors.figures()["executors"]
    assert {e["reason"] for e in figures} == {"Executor killed by driver.", None}


@pytest.mark.parametrize(
    ("reason", "idle_for", "timeout", "kind"),
    [
        ("Executor killed by driver.", 9000, 4000, IDLE),  # dynamic allocation's idle kill
        ("Executor killed by driver.", 1000, 4000, KILLED),  # busy a second before
        ("Executor killed by driver.", 9000, None, KILLED),  # dynamic allocation off
        # YARN's (and Kubernetes') text for a container the driver released
        (
            "Container container_e18_1_01_000002 exited from explicit termination request.",
            2e5,
            15e4,
            IDLE,
        ),
        (
            "Container container_e18_1_01_000002 exited from explicit termination request.",
            1,
            None,
            KILLED,
        ),
        ("Container container_1_01_000003 on host: h was preempted.", None, 60000, LOST),
        ("Executor decommission: spark scale down", None, 60000, IDLE),
        ("Executor decommission: worker decommissioned", None, 60000, DECOMMISSIONED),
        ("Executor decommission: Spot instance interruption", None, None, DECOMMISSIONED),
        ("Command exited with code 137", None, 4000, LOST),  # SIGKILL: the OOM killer
        ("Container killed by YARN for exceeding memory limits.", None, None, LOST),
        ("Executor heartbeat timed out after 120000 ms", None, None, LOST),
        ("Worker lost", None, None, LOST),
        ("Application finished", None, None, APPLICATION_END),
    ],
)
def test_sparks_removal_texts(reason, idle_for, timeout, kind):
    assert removal_kind(reason, idle_for, timeout) == kind


def test_spark_time_settings():
    assert spark_time_ms("4s", 0) == 4000 and spark_time_ms("2min", 0) == 120_000
    assert spark_time_ms("500ms", 0) == 500 and spark_time_ms("30", 0) == 30_000
    assert spark_time_ms(None, 60_000) == 60_000 and spark_time_ms("soon", 1) == 1


def test_whatif_counts_the_peak_slots_not_the_executors_ever_added():
    log = parse_event_log(DYNAMIC, tasks=TASK_COLUMNS)
    counts, origin = default_counts(log, DYNAMIC)
    # before: "up to twice the application's 6 task slot(s)", one per executor ever added
    assert counts == [1, 2, 4] and "2 task slot(s)" in origin and "6 added" in origin
    measured = measured_s(log)
    now = simulate(log, 2)
    # the old reading: every slot at each job's start, as many as executors ever added
    static = dataclasses.replace(
        log, spark_properties={**log.spark_properties, "spark.dynamicAllocation.enabled": "false"}
    )
    before = [simulate(static, 6), simulate(static, 2)]
    assert now.startup_s == pytest.approx(34.76, abs=0.01)  # three waits for executors
    assert abs(now.time_s - measured) < 0.1 * measured  # 92.0 s against 96.4 s
    for old in before:  # 52.5 s and 57.3 s
        assert abs(now.time_s - measured) < abs(old.time_s - measured) / 4
    assert simulate(log, 1).time_s > now.time_s >= simulate(log, 4).time_s


def test_whatif_json_has_the_start_up_wait(tmp_path):
    proc = invoke_cli("whatif", str(DYNAMIC), "--json")
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert [p["cores"] for p in found["predictions"]] == [1, 2, 4]
    assert all(p["startup_s"] > 30 for p in found["predictions"])
    # the width the replay counts, in keys of their own: 2 at once of 6 added in all
    assert found["executors"] == {
        "added": 6,
        "peak": 2,
        "peak_slots": 2,
        "dynamic_allocation": True,
    }
    table = invoke_cli("whatif", str(DYNAMIC))
    assert "executor start-up s" in table.stdout


def test_advise_finds_executor_churn_with_its_figure_and_the_setting_to_try():
    found = {f.rule: f for f in advise_event_log(DYNAMIC).findings}
    churned = found["executor-churn"]
    assert churned.severity == Severity.SEVERE  # 36% of the application
    assert churned.evidence["share"] == pytest.approx(0.36, abs=0.01)
    assert churned.evidence["jobs_that_waited"] == 3 and churned.evidence["removed_idle"] == 4
    assert churned.evidence["suggested_idle_timeout_s"] == 13  # gaps of 10.1 s, 1.25x
    assert "36% of the application waited for executors to start" in churned.finding
    assert "spark.dynamicAllocation.executorIdleTimeout=13s" in churned.recommendation
    assert "--conf spark.dynamicAllocation.executorIdleTimeout=13s" in churned.command
    # the other rules count the slots and executors alive at once too, not the 6 ever added
    assert found["tasks-per-core"].evidence["slots"] == 2
    assert found["executor-count"].evidence["executors"] == 2


def test_advise_judges_a_log_without_churn_and_says_nothing_found_with_its_figure():
    found = {f.rule: f for f in advise_event_log(FIXTURES / "eventlogs" / "plain").findings}
    churned = found["executor-churn"]
    assert churned.severity == Severity.NONE and "dynamic allocation is off" in churned.finding
    assert "waited for executors to start" in churned.finding and "share" in churned.evidence


def test_placement_is_weighted_by_executor_seconds():
    log = parse_event_log(DYNAMIC_PLUGIN)
    executors = churn(log)
    seconds = placement_seconds(executors, log.placement)
    # every executor bound to node 0 by its plugin, unbound for the second or two before
    assert seconds["not_reported_s"] == 0 and 0 < seconds["unbound_s"] < 12
    assert seconds["bound_share"] == pytest.approx(0.936, abs=0.01)
    assert seconds["bound_s"] + seconds["unbound_s"] == pytest.approx(
        executors.executor_seconds, abs=0.01
    )
    (summary,) = scan_log(DYNAMIC_PLUGIN).summaries
    assert summary.placement == "bound" and summary.bound_share == seconds["bound_share"]
    found = {f.rule: f for f in advise_event_log(DYNAMIC_PLUGIN).findings}
    assert found["numa-straddle"].evidence["executor_seconds_share"] == 0  # none spans
    assert (
        placement_seconds(churn(parse_event_log(DYNAMIC)), parse_event_log(DYNAMIC).placement)
        is None
    )


@pytest.mark.slow  # 1.2 s of CPU: an HTML report with its plots
def test_the_report_has_the_executors_per_node_timeline(tmp_path):
    application = read_application(DYNAMIC_PLUGIN)
    lanes = application.executors["per_node"]
    assert set(lanes) == {"127.0.0.1 node 0", "127.0.0.1 unbound"}
    node = [n for _, n in lanes["127.0.0.1 node 0"]]
    assert max(node) == 2 and node.count(0) >= 3  # filled and emptied three times
    html = build_log_report(scan_log(DYNAMIC_PLUGIN), [application], [])
    assert "Executors per node over time" in html and "127.0.0.1 node 0" in html
    assert "6 executor(s) added in all, at most 2 at once (2 task slots)" in html
    assert "94% of the executor-seconds bound" in html
    page = tmp_path / "report.html"
    page.write_text(html)
    plots, _, errors = open_in_chromium(page, "report-executors-per-node.png")
    assert errors == [] and plots == 2  # the stage times and the executors per node
    # a fixed set of executors draws no timeline: a flat line tells nothing
    plain = read_application(FIXTURES / "eventlogs" / "plugin-standalone")
    assert "Executors per node over time" not in build_log_report(
        scan_log(FIXTURES / "eventlogs" / "plugin-standalone"), [plain], []
    )


def test_analyze_json_gives_the_executors_and_a_reading():
    proc = invoke_cli("analyze", str(DYNAMIC), "--json")
    assert proc.returncode == 0, proc.stderr
    (log,) = json.loads(proc.stdout)["logs"]
    assert (log["executors"]["total"], log["executors"]["peak_executors"]) == (6, 2)
    assert any("6 added in all, at most 2 at once" in line for line in log["readings"])
    plain = json.loads(
        invoke_cli("analyze", str(FIXTURES / "eventlogs" / "plain"), "--json").stdout
    )
    assert not any(r.startswith("executors:") for r in plain["logs"][0]["readings"])


def test_sparks_own_yarn_logs_with_dynamic_allocation():
    """Spark's History Server test data (../shared/spark-events): two YARN applications with
    dynamic allocation, read as they are (the other logs read as before: their tests)."""
    logs = SPARK_EVENTS / "logs"
    if not logs.is_dir():
        pytest.fail(f"{logs} missing: clone shared/ beside this repository")
    # idle timeout 150 s: six executors that ran no task released 150-154 s after they came
    released = churn(parse_event_log(logs / "application_1628109047826_1317105"))
    assert released.endings == {IDLE: 6, APPLICATION_END: 4}
    assert all(
        "exited from explicit termination request" in (s.reason or "")
        for s in released.spans
        if s.ended == IDLE
    )
    # eight containers that failed to launch (exit status 56), one executor at the end
    failed = churn(parse_event_log(logs / "application_1538416563558_0014"))
    assert failed.endings == {LOST: 8, APPLICATION_END: 1}
    assert (failed.total, failed.peak_executors) == (9, 2)


DYNAMIC_YARN = FIXTURES / "eventlogs" / "dynamic-allocation-yarn"


def test_a_recorded_yarn_application_with_dynamic_allocation():
    """The mini YARN's log of tests/apps/two_bursts.py with dynamic allocation (0 to 2
    one-core executors, shuffle tracking, idle timeout 4 s; recorded by
    tests/test_yarn_mini.py::test_dynamic_allocation_on_yarn_with_shuffle_tracking, 50 KB):
    four executors added in all, at most two at once; idle removals are Spark's "Executor
    killed by driver." on YARN too. results, whatif and advise count the peak, not the four."""
    log = parse_event_log(DYNAMIC_YARN)
    executors = churn(log)
    assert (executors.total, executors.peak_executors, executors.peak_slots) == (4, 2, 2)
    assert executors.dynamic and set(executors.endings) <= {IDLE, APPLICATION_END}
    assert executors.endings.get(IDLE, 0) >= 2
    (row,) = json.loads(invoke_cli("results", str(DYNAMIC_YARN), "--json").stdout)["applications"]
    assert (row["executors"], row["peak_executors"], row["peak_slots"]) == (4, 2, 2)
    whatif = json.loads(invoke_cli("whatif", str(DYNAMIC_YARN), "--json").stdout)
    assert whatif["executors"] == {
        "added": 4,
        "peak": 2,
        "peak_slots": 2,
        "dynamic_allocation": True,
    }
    assert [p["cores"] for p in whatif["predictions"]] == [1, 2, 4]  # twice the 2 slots
    churned = next(f for f in advise_event_log(DYNAMIC_YARN).findings if f.rule == "executor-churn")
    assert churned.evidence["share"] > 0.2 and "waited for executors to start" in churned.finding
