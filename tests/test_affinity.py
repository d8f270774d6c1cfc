"""Thread affinity inside the JVM with real Spark on this machine: the affinity plugin pins each
running task to its own core (2 task slots: CPU 0 and CPU 1), in local mode and in a
standalone executor; the Java library's example binds its thread. (A slot outside the allowed
CPUs, which leaves the run complete but unpinned, is checked by the small-heap run of
test_report.py, to share its Spark start.) Multi-node slot plans are checked on a recorded
2-node server (this machine has one node). The JUnit tests run in scripts/test.sh."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import run_cli, topology_file

from numaspark.placement import Binding, Layout, placement_to_dict, plan
from numaspark.spark.affinity import jar_path, overlapping_on_one_cpu
from numaspark.topology import CpuSet, load

CPUS = CpuSet(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs 2 allowed CPUs")


def test_slots_are_the_planned_cores_of_each_executor():
    topo = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))  # 2 nodes, 6 cores x 2 threads
    core = placement_to_dict(
        plan(topo, Layout(executors_per_node=1, cores_per_executor=2), Binding.CORE)
    )
    executors = [j for j in core["jvms"] if j["runs_tasks"]]
    assert [j["slots"] for j in executors] == [["0,12", "2,14"], ["1,13", "3,15"]]
    assert core["spark_conf"]["spark.plugins"] == "io.numaspark.affinity.spark.AffinityPlugin"
    assert core["spark_conf"]["spark.numaspark.affinity.level"] == "core"
    pu = placement_to_dict(plan(topo, Layout(executors=2, cores_per_executor=4), Binding.PU))
    assert [j["slots"] for j in pu["jvms"] if j["runs_tasks"]] == [
        ["0", "2", "4", "6"],
        ["1", "3", "5", "7"],
    ]
    node = placement_to_dict(plan(topo, Layout(executors_per_node=1), Binding.NODE))
    assert "spark.plugins" not in node["spark_conf"]  # node level: numactl alone


@pytest.mark.jvm  # a JVM of its own: the lane that may start them
def test_the_example_binds_its_thread():
    proc = subprocess.run(
        [
            "java",
            "-cp",
            str(jar_path()),
            "io.numaspark.affinity.example.PinExample",
            str(min(CPUS)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"Cpus_allowed_list:\t{min(CPUS)}" in proc.stdout
    assert f"running on CPU {min(CPUS)}" in proc.stdout


def _pinned_run(tmp_path, *extra: str) -> dict:
    out = tmp_path / "out"
    proc = run_cli(
        "run",
        "wordcount",
        "--bind",
        "core",
        "--repeat",
        "1",
        "--out",
        str(out),
        "--data",
        str(tmp_path / "data"),
        "--conf",
        "spark.default.parallelism=8",
        *extra,
    )
    return _pinned(proc, [json.loads(line) for line in (out / "results.jsonl").open()])


def _pinned(proc, runs: list[dict]) -> dict:
    assert proc.returncode == 0, proc.stderr
    (run,) = runs
    assert run["status"] == "ok"
    assert "task pinning (core)" in proc.stdout
    return run


def _assert_two_slots(affinity: dict) -> None:
    tasks = affinity["tasks_detail"]
    assert affinity["pinned"] == affinity["tasks"] == len(tasks) > 2
    assert all(t["cpu_end"] == int(t["cpus"]) for t in tasks)  # every task ran on its slot
    assert {t["cpus"] for t in tasks} == {"0", "1"}
    assert overlapping_on_one_cpu(tasks) == []
    overlapping = [
        (a, b)
        for a in tasks
        for b in tasks
        if a["task"] < b["task"] and a["start_ms"] < b["end_ms"] and b["start_ms"] < a["end_ms"]
    ]
    assert overlapping, "no two tasks ran at once: the check would be empty"
    assert all({a["cpus"], b["cpus"]} == {"0", "1"} for a, b in overlapping)


@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
@needs_two_cpus
def test_local_run_pins_each_task_to_its_own_core(local_core_run):
    """The local run that test_spark_runs.py's binder test reads too (conftest.py)."""
    proc, run = local_core_run
    run = _pinned(proc, [run])
    _assert_two_slots(run["affinity"])
    assert run["affinity"]["level"] == "core"


@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
@needs_two_cpus
def test_standalone_executor_pins_each_task_to_its_own_core(tmp_path):
    run = _pinned_run(
        tmp_path, "--mode", "standalone", "--executors", "1", "--cores-per-executor", "2"
    )
    _assert_two_slots(run["affinity"])
    assert {t["executor"] for t in run["affinity"]["tasks_detail"]} == {"0"}
