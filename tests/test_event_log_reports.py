"""The affinity plugin's placement read from Spark's event log alone (issue 49, items 1 and 2),
no JVM: a recorded log of a plain spark-submit against a standalone cluster at another address
(tests/test_event_log_placement.py makes it; tests/fixtures/eventlogs/make_fixtures.py says
how), and small logs written here. This machine has one NUMA node: the rules' multi-node
branches are checked on hand-written reports of a two-node host, said so where they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES

from numaspark.decide.advise import Severity, advise_event_log
from numaspark.metrics.eventlog import parse_event_log
from numaspark.placement.plugin import LEVEL_KEY, PLACEMENT_EVENT
from numaspark.readback.plugin_reports import PluginReports
from numaspark.spark.affinity import plugin_effective

RECORDED = FIXTURES / "eventlogs" / "plugin-standalone"
PLAIN = FIXTURES / "eventlogs" / "plain"  # a word count without the plugin


def _rules(advice) -> tuple[dict, dict]:
    return {f.rule: f for f in advice.findings}, {n.rule: n.why for n in advice.not_assessed}


def test_a_recorded_log_holds_each_executors_placement_and_the_drivers():
    log = parse_event_log(RECORDED)
    jvms = log.placement.jvms(driver=True)
    assert [j.name for j in jvms] == ["executor 0", "driver"]
    executor = jvms[0]
    assert str(executor.nodes) == "0" and str(executor.bound_nodes) == "0"  # level node
    assert executor.latest.numa_balancing == "0" and executor.latest.cpu_s > 0
    assert executor.python and executor.python_rss_peak > 0  # PySpark's daemon and workers
    assert log.placement.hosts() and set(log.placement.balancing().values()) == {"0"}


def test_advice_on_the_recorded_log_assesses_the_placement_rules():
    found, unassessed = _rules(advise_event_log(RECORDED))
    for rule in ("numa-straddle", "remote-pages", "numa-balancing", "python-cpu", "python-memory"):
        assert rule in found, (rule, unassessed.get(rule))
    assert found["remote-pages"].evidence["jvm"] == "executor 0"
    assert found["python-cpu"].evidence["python_cpu_s"] > 0


def test_a_log_without_the_plugin_says_what_would_put_placement_in_it():
    _, unassessed = _rules(advise_event_log(PLAIN))
    for rule in ("numa-straddle", "remote-pages", "numa-balancing"):
        assert "numaspark plan --target ... --out DIR" in unassessed[rule], unassessed[rule]


def _report(executor: str, cpus: str, **fields) -> dict:
    return {
        "executor": executor,
        "host": "two-node",
        "pid": 7,
        "cpus": cpus,
        "mems": "0-1",
        **fields,
    }


TWO_NODES = {"nodes": {"0": "0-3", "1": "4-7"}, "cores": ["0", "1", "2", "3", "4", "5", "6", "7"]}


def _log(path: Path, batches: list[list[dict]], level: str = "node") -> Path:
    """A plain event log of an application on a two-node host (hand-written: this machine
    has one node), with the plugin's events as Spark's writer lays them out."""
    events = [
        {"Event": "SparkListenerLogStart", "Spark Version": "4.0.1"},
        {
            "Event": "SparkListenerApplicationStart",
            "App Name": "etl",
            "App ID": "app-1",
            "Timestamp": 1000,
            "User": "u",
        },
        {
            "Event": "SparkListenerEnvironmentUpdate",
            "Spark Properties": {"spark.master": "spark://m:7077", LEVEL_KEY: level},
        },
        *(
            {"Event": PLACEMENT_EVENT, "version": 1, "time_ms": 2000 + i, "reports": b}
            for i, b in enumerate(batches)
        ),
        {"Event": "SparkListenerApplicationEnd", "Timestamp": 9000},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_an_executor_over_two_nodes_with_remote_pages_and_balancing_on(tmp_path):
    """Two-node host, hand-written: executor 1 bound to node 1 has 40% of its pages on node 0
    and the host balances pages; executor 2, unbound, runs on both nodes."""
    log = _log(
        tmp_path / "app-1",
        [
            [
                _report(
                    "1",
                    "4-7",
                    host_topology=TWO_NODES,
                    chosen_nodes="1",
                    policy="default",
                    local_share=0.9,
                    numa_balancing="1",
                ),
                _report("2", "0-7", policy="default", local_share=0.5, numa_balancing="1"),
            ],
            [
                _report(
                    "1",
                    "4-7",
                    chosen_nodes="1",
                    policy="default",
                    local_share=0.6,
                    bytes_per_node={"0": 40, "1": 60},
                    numa_balancing="1",
                )
            ],
        ],
    )
    found, _ = _rules(advise_event_log(log))
    straddle = found["numa-straddle"]
    assert straddle.severity is Severity.MODERATE and "1 of 2" in straddle.finding
    assert straddle.evidence["jvms"][0]["jvm"] == "executor 2"
    pages = found["remote-pages"]  # the latest report's share, not the first's
    assert pages.evidence["share_on_bound_nodes"] == 0.6 and pages.severity > Severity.NONE
    assert "40%" in pages.finding
    balancing = found["numa-balancing"]
    assert balancing.severity is Severity.LOW and balancing.evidence["numa_balancing"] == "1"


def test_unbound_executors_with_balancing_on_are_no_finding(tmp_path):
    log = _log(
        tmp_path / "app-1",
        [[_report("1", "0-3", host_topology=TWO_NODES, policy="default", numa_balancing="1")]],
        level="none",
    )
    found, unassessed = _rules(advise_event_log(log))
    assert found["numa-balancing"].severity is Severity.NONE
    assert found["numa-straddle"].severity is Severity.NONE  # CPUs 0-3: node 0 only
    assert "remote-pages" in unassessed  # nothing bound: nothing to judge


def test_numasparks_own_file_and_the_event_log_go_through_one_reader(tmp_path):
    """The same reports, as the driver appends them to placement.jsonl and as it posts them to
    the event log, give the same effective placement."""
    reports = [
        _report(
            "1",
            "4-7",
            host_topology=TWO_NODES,
            chosen_nodes="1",
            local_share=0.9,
            python=[{"pid": 9, "role": "worker", "rss_bytes": 5}],
        ),
        _report("1", "4-7", chosen_nodes="1", local_share=0.8, python=[]),
    ]
    placement = tmp_path / "placement.jsonl"
    placement.write_text("".join(json.dumps(r) + "\n" for r in reports))
    from_log = parse_event_log(_log(tmp_path / "app-1", [reports])).placement.effective()
    from_file = plugin_effective(placement)
    assert from_file == from_log == PluginReports.of(reports).effective()
    (jvm,) = from_file
    assert jvm.local_share == 0.8 and jvm.python[0].ended  # listed once, gone by the last


@pytest.mark.parametrize("bad", [{"reports": "x"}, {"reports": [1, "two"]}, {}])
def test_a_damaged_placement_event_is_skipped_not_a_traceback(tmp_path, bad):
    path = _log(tmp_path / "app-1", [])
    lines = path.read_text().splitlines()
    lines.insert(3, json.dumps({"Event": PLACEMENT_EVENT, **bad}))
    path.write_text("\n".join(lines) + "\n")
    assert not parse_event_log(path).placement


def test_each_executor_says_who_placed_it_on_its_node():
    """``placed_by`` (issue 60, item 3): the plugin that bound its threads, a cgroup that
    confined its CPUs to part of its host before it started (the kubelet's CPU Manager gives
    a Guaranteed pod such a cpuset), or nothing on a host whose one node is its whole set.
    Reports of a two-node host, hand-written (this machine has one node)."""
    reports = [
        _report(
            "1",
            "4-7",
            host_topology=TWO_NODES,
            chosen_nodes="1",
            binding="every thread (40 now) bound to CPUs 4-7; 12 MB migrated to node(s) 1",
        ),
        _report("2", "5", chosen_nodes="1", binding="already confined to CPUs 5: threads left"),
        _report("3", "0-7", chosen_nodes="0-1", binding="already confined to CPUs 0-7: threads"),
        _report("4", "0-3", chosen_nodes="0", binding="moved from node 1 (move 1): every thread"),
        _report("5", "0-7", binding=None),
    ]
    placed = {e.jvm: e.placed_by for e in PluginReports.of(reports).effective()}
    assert placed == {
        "executor 1": "plugin",
        "executor 2": "cgroup",
        "executor 3": "nothing",
        "executor 4": "plugin",
        "executor 5": None,
    }
