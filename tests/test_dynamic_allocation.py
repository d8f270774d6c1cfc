"""Dynamic allocation (issue 57, items 1 and 3): executors that come and go.

No-JVM tests of the rules, each with its figure:

- the user's settings are kept: numaspark leaves the plan's spark.executor.instances out
  (it would be Spark's initial and lowest count) unless the user gave it, and on a
  standalone master sets spark.cores.max to maxExecutors x cores, in one line;
- the runner's checks: with minExecutors 0 no executor is not a failure until the driver asks
  for one; executors removed when idle and launched again are not "executors that keep
  dying";
- the heaps fit maxExecutors executors, not the planned count (the planner's auto heap and
  the capacity check of a cluster numaspark did not start);
- -XX:ActiveProcessorCount: the executor's CPUs at core and hardware-thread level; at node
  level the node's CPUs divided by the most executors that may share it (with dynamic
  allocation from maxExecutors), never fewer than its cores; how it agrees with Spark's own
  setting on YARN (SPARK-53209) and with Spark 3.5, which has none.

This machine has one NUMA node: the multi-node rules are tested on the saved topologies of
shared/topologies (hwloc XML of real servers) and on synthetic ones, not on this machine.

One JVM test runs ``numaspark run`` of a PySpark application of two bursts on a standalone
cluster numaspark starts here, with dynamic allocation (min 0, max 2, shuffle tracking, idle
timeout 4 s), and reads from its event log that executors were added, removed when idle, and
added again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli, topology_file

from numaspark.errors import ClusterRefusal, PlacementError
from numaspark.metrics.logfiles import event_log_files, lines, segments
from numaspark.placement import Binding, Layout, plan, shipped_plugin_conf
from numaspark.placement.cluster_capacity import ClusterCapacity, HostHas
from numaspark.placement.render import (
    DynamicAllocation,
    bound_from_inside,
    executors_per_node,
    inside_slice_cpus,
    pinned_from_inside,
    spark_conf,
)
from numaspark.spark.app import Driver, _relaunches, _submit_conf
from numaspark.spark.conf import (
    SPARK_PROCESSOR_COUNT_KEY,
    spark_processor_count,
    with_dynamic_allocation,
)
from numaspark.spark.first_executor import FirstExecutorWait
from numaspark.spark.standalone_master import FITTING
from numaspark.topology import load_synthetic, load_xml
from numaspark.units import GIB, MIB

TWO_NODES = "24em64t-2n6c2t-pci.xml"  # 2 nodes of 6 cores x 2 threads: 12 CPUs each
APPS = Path(__file__).parent / "apps"
DA = {
    "spark.dynamicAllocation.enabled": "true",
    "spark.dynamicAllocation.minExecutors": "0",
    "spark.dynamicAllocation.maxExecutors": "2",
    "spark.dynamicAllocation.shuffleTracking.enabled": "true",
    "spark.dynamicAllocation.executorIdleTimeout": "4s",
}


def _xeon():
    return load_xml(topology_file(TWO_NODES))


# --- the user's settings ----------------------------------------------------------------------


def test_the_settings_are_read_as_spark_reads_them():
    assert DynamicAllocation.of({}) is None
    assert DynamicAllocation.of({"spark.dynamicAllocation.enabled": "false"}) is None
    bare = DynamicAllocation.of({"spark.dynamicAllocation.enabled": "true"})
    assert bare.minimum == 0 and bare.maximum is None and bare.at_start == 0  # Spark's defaults
    assert bare.at_most(3) == 3  # unbounded: the plan's own count sizes it
    given = DynamicAllocation.of(
        {**DA, "spark.dynamicAllocation.initialExecutors": "1", "spark.executor.instances": "3"}
    )
    assert (given.minimum, given.maximum, given.at_start) == (0, 2, 3)  # max(min, initial, inst)


def test_the_plans_instances_are_left_out_and_the_users_kept_in_one_line():
    """The plan's spark.executor.instances=2 would be dynamic allocation's floor: left out;
    on a standalone master spark.cores.max (the plan's 1 x 1) would cap it below
    maxExecutors: 2 x 1. A user's own instances stand."""
    ours = {**DA, "spark.executor.instances": "1", "spark.cores.max": "1"}
    ours["spark.executor.cores"] = "1"
    conf, said = with_dynamic_allocation(ours, dict(DA), "spark://127.0.0.1:7077")
    assert "spark.executor.instances" not in conf and conf["spark.cores.max"] == "2"
    assert said == [
        "dynamic allocation is on: executors come and go between 0 and 2, 0 at the start; "
        "numaspark left spark.executor.instances unset (the plan's count would be its floor) "
        "and set spark.cores.max to maxExecutors x cores, 2"
    ]
    users = {**DA, "spark.executor.instances": "1"}
    conf, said = with_dynamic_allocation({**ours, "spark.executor.instances": "2"}, users, "yarn")
    assert conf["spark.executor.instances"] == "1" and conf["spark.cores.max"] == "1"
    assert said == [
        "dynamic allocation is on: executors come and go between 0 and 2, 1 at the start"
    ]
    assert with_dynamic_allocation({"spark.executor.instances": "2"}, {}, "yarn") == (
        {"spark.executor.instances": "2"},
        [],
    )


def test_a_spark_submit_lines_own_settings_survive_the_merge(tmp_path):
    """The whole merge (spark/app.py): the application's own spark-submit line turns dynamic
    allocation on with spark.executor.instances=1; the plan's 2 do not replace it, and no
    "replaced" line is said of it."""
    placement = plan(
        load_synthetic("numa:1 core:2 pu:1"), Layout(executors=2, cores_per_executor=1)
    )
    own = {**DA, "spark.executor.instances": "1"}
    conf, notes = _submit_conf(
        placement,
        Driver(master="yarn"),
        tmp_path,
        "127.0.0.1",
        own,
        {},
        pyspark=True,
        java_options=([], []),
    )
    assert conf["spark.executor.instances"] == "1"
    assert all(conf[k] == v for k, v in DA.items())
    assert not any("replaced" in n and "instances" in n for n in notes), notes
    assert any(n.startswith("dynamic allocation is on") for n in notes), notes


# --- the runner's checks ----------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _wait(tmp_path, dynamic):
    clock = _Clock()
    log = tmp_path / "spark-submit.log"
    log.write_text("26/01/01 10:00:00 INFO SparkContext: Running Spark version 4.3.0\n")
    placement = plan(
        load_synthetic("numa:1 core:2 pu:1"), Layout(executors=2, cores_per_executor=1)
    )
    wait = FirstExecutorWait(
        "spark://10.0.0.5:7077",
        60.0,
        tmp_path / "reports.jsonl",
        log,
        placement,
        clock=clock,
        dynamic=dynamic,
    )
    return wait, clock, log


def test_with_min_executors_0_no_executor_is_no_failure_until_one_is_asked_for(tmp_path):
    """minExecutors 0 (Spark's default under dynamic allocation): an application that asks for
    no executor for 10 minutes is not failed (the check stops with the application); once the
    driver asks, the --executor-wait of 60 s counts from then."""
    wait, clock, log = _wait(tmp_path, DynamicAllocation.of(DA))
    clock.now = 600.0
    assert wait() is None
    with log.open("a") as handle:
        handle.write(
            "26/01/01 10:10:00 INFO ExecutorAllocationManager: Requesting 1 new executor "
            "because tasks are backlogged (new desired total will be 1 for resource profile "
            "id: 0)\n"
        )
    assert wait() is None  # asked now: 60 s from here
    clock.now = 650.0
    assert wait() is None
    clock.now = 661.0
    assert "no executor started within 60 s" in (wait() or "")
    # without dynamic allocation the same silence is a failure after 60 s
    (tmp_path / "static").mkdir()
    static, clock, _ = _wait(tmp_path / "static", None)
    clock.now = 61.0
    assert "no executor started within 60 s" in (static() or "")


def test_a_first_report_ends_the_wait_under_dynamic_allocation_too(tmp_path):
    wait, clock, _ = _wait(tmp_path, DynamicAllocation.of(DA))
    (tmp_path / "reports.jsonl").write_text('{"host": "a"}\n')
    clock.now = 10_000.0
    assert wait() is None


class _Cluster:
    """Two workers here, and the launches of one application (a work directory each)."""

    workers = [{"index": 0}, {"index": 1}]

    def __init__(self, launches: int) -> None:
        self.launches = [Path(f"/w/app-1/{i}") for i in range(launches)]

    def lost(self):
        return None

    def app_ids(self):
        return ["app-1"]

    def executor_launches(self, app):
        return self.launches


def test_executors_removed_when_idle_and_added_again_are_not_dying(tmp_path):
    """Six launches on two workers: without dynamic allocation they are relaunches (more than
    2 + 3); with it, only the deaths the driver's log names count: none here, then six."""
    cluster = _Cluster(6)
    assert "executors keep dying" in (_relaunches(cluster, set())() or "")
    log = tmp_path / "spark-submit.log"
    log.write_text(
        "".join(
            f"26/01/01 10:00:0{i} INFO StandaloneAppClient$ClientEndpoint: Executor updated: "
            f"app-1/{i} is now KILLED\n"
            for i in range(6)
        )
    )
    assert _relaunches(cluster, set(), log)() is None  # removed by the driver: no death
    log.write_text(
        "".join(
            f"26/01/01 10:00:0{i} INFO StandaloneAppClient$ClientEndpoint: Executor updated: "
            f"app-1/{i} is now EXITED (Command exited with code 1)\n"
            for i in range(6)
        )
    )
    assert "executors keep dying" in (_relaunches(cluster, set(), log)() or "")


# --- heaps for maxExecutors -------------------------------------------------------------------


def test_the_auto_heap_fits_max_executors_not_the_planned_count():
    """The saved 2-node server (36 GiB, 18 a node): one unbound executor planned gets 28873
    MB of heap; with maxExecutors 2, 14436 MB, so that two fit (the issue's case: one 18 GiB
    heap planned, two allowed, on a 24 GiB machine). Node-bound, the executors that may share
    a node are spread as the plan spreads its own: one planned on node 0, maxExecutors 2,
    both counted there (7216 MB): the plugin may spread them, the heap does not count on it."""
    xeon = _xeon()
    layout = Layout(executors=1, cores_per_executor=1)
    one, two = plan(xeon, layout), plan(xeon, layout, max_executors=2)
    alone, shared = one.executors[0], two.executors[0]
    assert (alone.heap // MIB, shared.heap // MIB) == (28873, 14436)
    assert 2 * (shared.heap + shared.overhead) <= xeon.total_memory
    assert 2 * (alone.heap + alone.overhead) > xeon.total_memory
    assert any("up to 2 executor(s) at once" in n for n in two.notes)
    bound = plan(xeon, layout, Binding.NODE, max_executors=2)
    assert bound.executors[0].heap // MIB == 7216  # 14432 MB alone on its node
    assert plan(xeon, layout, max_executors=1).executors[0].heap == alone.heap  # not more


def test_an_asked_heap_that_max_executors_cannot_share_is_refused():
    """12 GiB heaps (13.2 with overhead) on the 36 GiB server: one fits, three do not."""
    layout = Layout(executors=1, cores_per_executor=1, memory_per_executor=12 * GIB)
    plan(_xeon(), layout)
    with pytest.raises(PlacementError, match="3 executor"):
        plan(_xeon(), layout, max_executors=3)


def _standalone(*workers):
    return ClusterCapacity(
        "standalone",
        "spark://10.0.0.5:7077",
        tuple(HostHas(name, cores, memory) for name, cores, memory in workers),
        FITTING,
    )


def test_the_capacity_check_sizes_and_checks_max_executors():
    """A master with one worker of 2 cores and 24576 MB: one executor planned would get the
    whole 24576 MB; with maxExecutors 2, 12288 MB each. maxExecutors 3 of 1 core do not fit
    its 2 cores: refused, naming the setting."""
    has = _standalone(("10.0.0.11", 2, 24576))
    layout = Layout(executors=1, cores_per_executor=1)

    def planned(topology):
        return plan(topology, layout)

    assert has.place(planned, None).executors[0].heap == 24576 * MIB
    assert has.place(planned, None, at_most=2).executors[0].heap == 12288 * MIB
    with pytest.raises(ClusterRefusal, match="spark.dynamicAllocation.maxExecutors"):
        has.place(planned, None, at_most=3)


# --- -XX:ActiveProcessorCount -----------------------------------------------------------------


def _count(placement):
    options = {o for e in placement.executors for o in e.java_options}
    found = [int(o.split("=")[1]) for o in options if o.startswith("-XX:ActiveProcessorCount=")]
    assert len(found) <= 1, options
    return found[0] if found else None


def test_at_node_level_a_node_is_divided_among_the_executors_that_may_share_it():
    """The saved 2-node server (12 CPUs a node; this machine has one node). From inside (a
    cluster numaspark did not start): two 1-core executors, one per node, get 12 each, as
    before; with maxExecutors 16 eight may share a node: 12 // 8 = 1; 2-core executors never
    get fewer than their 2 cores."""
    xeon = _xeon()
    two = plan(xeon, Layout(executors=2, cores_per_executor=1), Binding.NODE)
    assert executors_per_node(two) == {0: 1, 1: 1}
    assert _count(bound_from_inside(two, slice_known=True)) == 12
    assert executors_per_node(two, 16) == {0: 8, 1: 8}
    assert _count(bound_from_inside(two, slice_known=True, at_most=16)) == 1
    wide = plan(xeon, Layout(executors=2, cores_per_executor=2), Binding.NODE)
    assert _count(bound_from_inside(wide, slice_known=True, at_most=16)) == 2
    # eight planned (four a node): 12 // 4 = 3, from inside and with numactl alike
    eight = plan(xeon, Layout(executors=8, cores_per_executor=1), Binding.NODE)
    assert _count(eight) == 3 and _count(bound_from_inside(eight, slice_known=True)) == 3
    assert "-XX:ActiveProcessorCount=3" in spark_conf(eight)["spark.executor.extraJavaOptions"]
    # alone on its node, numactl's binding already shows the JVM its 12 CPUs: nothing is set
    assert _count(two) is None


def test_the_slice_of_a_learned_host_is_divided_by_the_executors_per_host():
    """A standalone worker whose host reported the 2-node server: 16 executors on that host
    spread over its 2 nodes (8 each): 12 // 8 = 1; one executor on the host: 12."""
    xeon = _xeon()
    assert inside_slice_cpus([xeon], 1) == 12
    assert inside_slice_cpus([xeon], 1, per_host=16) == 1
    assert inside_slice_cpus([xeon], 6, per_host=16) == 6  # never below its cores


def test_at_core_and_thread_level_it_is_the_executors_cpus_as_sparks_own_setting():
    """Core level with 2 threads per core: the executor owns 1 core, runs on 2 hardware
    threads, has 2 task slots: -XX:ActiveProcessorCount=2 = spark.executor.cores, which is
    what Spark's own spark.executor.limitActiveProcessorCount.enabled gives on YARN
    (SPARK-53209: its cores). At node level numaspark's count is never below it."""
    xeon = _xeon()
    core = plan(xeon, Layout(executors=2, cores_per_executor=1, threads_per_core=2), Binding.CORE)
    pinned = pinned_from_inside(core)
    assert _count(pinned) == 2 == int(spark_conf(pinned)["spark.executor.cores"])
    pu = pinned_from_inside(plan(xeon, Layout(executors=4, cores_per_executor=3), Binding.PU))
    assert _count(pu) == 3 == int(spark_conf(pu)["spark.executor.cores"])
    node = bound_from_inside(
        plan(xeon, Layout(executors=2, cores_per_executor=3), Binding.NODE), True, at_most=16
    )
    assert _count(node) >= int(spark_conf(node)["spark.executor.cores"])


def test_sparks_own_setting_on_yarn_replaces_numaspark_and_nowhere_else():
    """On YARN with Spark's setting on (pyspark 4.3), Spark puts -XX:ActiveProcessorCount=
    spark.executor.cores on the executor's command line: numaspark's is left out, in one
    line, so that one count is given. Elsewhere (standalone, Kubernetes) and in Spark 3.5,
    which has no such setting, it does nothing: numaspark's stands."""
    conf = {
        SPARK_PROCESSOR_COUNT_KEY: "true",
        "spark.executor.cores": "2",
        "spark.executor.extraJavaOptions": "-Dx=1 -XX:ActiveProcessorCount=12",
    }
    yarn, said = spark_processor_count(conf, "yarn")
    assert yarn["spark.executor.extraJavaOptions"] == "-Dx=1"
    assert said == [
        f"{SPARK_PROCESSOR_COUNT_KEY}=true: Spark gives each executor "
        "-XX:ActiveProcessorCount=2 (its cores); numaspark's -XX:ActiveProcessorCount=12 is "
        "left out"
    ]
    assert spark_processor_count(conf, "spark://h:7077") == (conf, [])
    assert spark_processor_count({**conf, SPARK_PROCESSOR_COUNT_KEY: "false"}, "yarn") == (
        {**conf, SPARK_PROCESSOR_COUNT_KEY: "false"},
        [],
    )
    # the plugin's own conf is untouched by it: it binds as before
    assert "spark.plugins" in shipped_plugin_conf(plan(_xeon(), Layout(executors=2), Binding.NODE))


# --- for real: a standalone cluster numaspark starts here -----------------------------------


# DA as run options: --conf KEY=VALUE for each
DA_OPTIONS = [a for key, value in DA.items() for a in ("--conf", f"{key}={value}")]


def removed_then_added(out: Path) -> list[dict]:
    """The events of the one run in results directory ``out``, once it is checked that an
    executor was added again after one was removed (what dynamic allocation does between
    bursts)."""
    (run_dir,) = (out / "runs").iterdir()
    events = _events(run_dir)
    kinds = [e["Event"] for e in events]
    first_removal = kinds.index("SparkListenerExecutorRemoved")
    assert "SparkListenerExecutorAdded" in kinds[first_removal:], f"none added again: {kinds}"
    return events


def _events(run_dir: Path) -> list[dict]:
    (log,) = [p for p in (run_dir / "eventlog").iterdir() if not p.name.startswith(".")]
    warnings: list[str] = []
    return [
        json.loads(raw)
        for segment in segments(event_log_files(log))
        for batch in lines(segment, warnings)
        for raw in batch
        if raw.strip()
    ]


@pytest.mark.jvm
@pytest.mark.integration
def test_dynamic_allocation_runs_on_a_standalone_cluster_numaspark_starts(tmp_path, no_spark_left):
    """Two node-bound one-core workers here; dynamic allocation from 0 to 2 with shuffle
    tracking and a 4 s idle timeout; two bursts 12 s apart. The run succeeds (the relaunch
    check does not take removed executors for dying ones), and its event log shows executors
    added, removed when idle ("killed by driver"), and added again; spark.cores.max is
    maxExecutors x cores. About 2 minutes on this loaded 2-core machine."""
    out, answer = tmp_path / "out", tmp_path / "answer.json"
    proc = run_cli(
        "run",
        str(APPS / "two_bursts.py"),
        "--mode",
        "standalone",
        "--executors",
        "2",
        "--cores-per-executor",
        "1",
        "--bind",
        "node",
        "--memory-per-executor",
        "512m",
        "--out",
        str(out),
        "--timeout",
        "150",
        *DA_OPTIONS,
        "--",
        str(answer),
        "12",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(answer.read_text())["sums"] == [sum(x * x for x in range(400))] * 2
    (run,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert run["status"] == "ok", run.get("failure")
    assert all(run["spec"]["spark_conf"][k] == v for k, v in DA.items())  # kept as given
    events = removed_then_added(out)
    added = [e for e in events if e["Event"] == "SparkListenerExecutorAdded"]
    removed = [e for e in events if e["Event"] == "SparkListenerExecutorRemoved"]
    assert len(added) >= 2 and removed, [e["Event"] for e in events]
    # an idle executor is removed by the driver's request: Spark's words on standalone
    assert all(e["Removed Reason"] == "Executor killed by driver." for e in removed), removed
    assert "dynamic allocation is on: executors come and go between 0 and 2" in proc.stderr
    start = next(e for e in events if e["Event"] == "SparkListenerEnvironmentUpdate")
    props = start["Spark Properties"]
    props = dict(props) if isinstance(props, list) else props
    assert props.get("spark.dynamicAllocation.maxExecutors") == "2"
    assert props.get("spark.cores.max") == "2"
