"""A standalone cluster numaspark did not start: planned from its master's status page, never
from this machine. The page is a real Spark 4.3.0 master's (tests/fixtures/standalone),
served over HTTP by the test; the real cluster path is tests/test_plugin_report.py's."""

from dataclasses import replace

import pytest
from conftest import topology_file
from statuspage import recorded_status, serving

from numaspark.errors import UsageError
from numaspark.experiment.request import RunRequest
from numaspark.experiment.runner import Runner
from numaspark.experiment.target import ExternalTarget
from numaspark.experiment.venue import ClusterAt
from numaspark.placement import (
    Binding,
    Layout,
    MemPolicy,
    bound_from_inside,
    plan,
    shipped_plugin_conf,
)
from numaspark.placement.plugin import LEVEL_KEY, MEM_POLICY_KEY
from numaspark.spark.standalone_master import StandingCluster
from numaspark.supervise.processes import ProcessTracker
from numaspark.topology import load, load_xml
from numaspark.units import GIB, MIB

MASTER = "spark://127.0.0.1:7077"


@pytest.fixture(autouse=True)
def _own_state(tmp_path, monkeypatch):
    """Nothing learned of a cluster before (tests/test_learned.py plans with what was)."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))


def _place(cluster: StandingCluster, layout: Layout):
    return cluster.place(lambda topology: plan(topology, layout), layout.memory_per_executor)


def test_the_plan_fits_the_clusters_worker_not_this_machine():
    """The user's report: on a worker of 2 cores and 2 GiB the plan was a 5705m executor from
    this machine's 24 GiB, and the application waited for resources until its timeout."""
    with serving(recorded_status()) as ui:
        cluster = StandingCluster.read(MASTER, ui)
    assert [(w.host, w.cores, w.memory_mb) for w in cluster.workers] == [("127.0.0.1", 2, 2048)]
    (executor,) = _place(cluster, Layout()).executors
    assert (executor.cores, executor.heap) == (2, 2048 * MIB)
    two = _place(cluster, Layout(executors=2, cores_per_executor=1)).executors
    assert [(e.cores, e.heap) for e in two] == [(1, 1024 * MIB)] * 2  # both on the one worker


def test_what_the_cluster_cannot_hold_is_refused_in_one_line():
    with serving(recorded_status()) as ui:
        cluster = StandingCluster.read(MASTER, ui)
    with pytest.raises(UsageError) as heap:
        _place(cluster, Layout(memory_per_executor=4 * GIB))
    assert "cannot hold 1 executor(s) of 2 core(s) and 4096 MB heap (room for 0" in str(heap.value)
    assert "127.0.0.1: 2 cores, 2048 MB free" in str(heap.value)
    with pytest.raises(UsageError, match="planned on the workers of the cluster at .* 2 cores"):
        _place(cluster, Layout(executors=3, cores_per_executor=1))
    assert "\n" not in str(heap.value)


def test_what_running_applications_hold_is_not_free():
    status = recorded_status()
    status["workers"][0].update(coresused=1, memoryused=1536)
    with serving(status) as ui:
        cluster = StandingCluster.read(MASTER, ui)
    assert cluster.describe() == "1 alive worker(s), 1 cores and 512 MB free"
    (executor,) = _place(cluster, Layout()).executors
    assert (executor.cores, executor.heap) == (1, 512 * MIB)
    with pytest.raises(UsageError, match="cannot hold 1 executor"):
        _place(cluster, Layout(memory_per_executor=1 * GIB))
    status["workers"][0].update(memoryused=1700)
    with serving(status) as ui:
        cluster = StandingCluster.read(MASTER, ui)
    with pytest.raises(UsageError, match="would get 348 MB heap each, below Spark's minimum"):
        _place(cluster, Layout())


def test_a_master_without_a_web_ui_or_workers_is_one_line():
    with pytest.raises(
        UsageError, match="does not answer at http://127.0.0.1:1, so the .* --master-ui"
    ):
        StandingCluster.read(MASTER, "http://127.0.0.1:1")
    status = recorded_status()
    status["workers"][0]["state"] = "DEAD"
    with serving(status) as ui, pytest.raises(UsageError, match="no alive worker"):
        StandingCluster.read(MASTER, ui)


def test_an_application_with_no_executor_stops_after_the_wait(tmp_path):
    """No executor, no death, a cluster with room: the wait ends in one line that does not
    blame the cluster's size (its recorded status page holds the plan)."""
    now = [0.0]
    with serving(recorded_status()) as ui:
        target = ExternalTarget(
            ProcessTracker(),
            MASTER,
            executor_wait_s=0.2,
            has="1 worker",
            ui=ui,
            clock=lambda: now[0],
        )
        placement = _place(StandingCluster.read(MASTER, ui), Layout())
        reports = tmp_path / "placement.jsonl"
        check = target.first_executor(placement, reports, tmp_path)
        assert check() is None  # not yet
        now[0] = 0.3
        why = check()
    assert why.startswith(
        f"no executor started within 0.2 s: the cluster at {MASTER} (it has 1 worker) gave the "
        "application none (the application has not reached the cluster yet)"
    ), why
    assert "cannot hold" not in why
    reports.write_text('{"executor": "0"}\n')  # an executor's plugin reported
    assert check() is None


def test_kubernetes_is_planned_on_the_nodes_topology_given(tmp_path):
    """--master k8s:// with --xml: executors sized for the cluster's node (a saved 4-node,
    96-thread server's topology: this machine has 2 CPUs and could not hold them)."""
    node = load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))
    request = RunRequest(
        workload="wordcount",
        venue=ClusterAt(master="k8s://https://127.0.0.1:6443", node_topology=node),
        layout=Layout(executors=4, cores_per_executor=24),
        out=tmp_path,
    )
    with Runner(load(), tmp_path) as runner:
        target, placement = runner.place(request)
    assert [e.cores for e in placement.executors] == [24] * 4
    assert placement.topology_fingerprint == node.fingerprint
    assert target.where == request.venue.master


def test_bind_node_on_a_cluster_it_did_not_start_is_the_plugins_from_inside(tmp_path):
    """On Kubernetes nodes of a saved 4-node server (this machine has one node): each executor
    is planned a node, starts unbound (no -XX:+UseNUMA) with -XX:ActiveProcessorCount of the
    node's CPUs, and the plugin is set to level node; preferred, its default, is not named."""
    node = load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))
    request = RunRequest(
        workload="wordcount",
        venue=ClusterAt(master="k8s://https://127.0.0.1:6443", node_topology=node),
        layout=Layout(executors=4, cores_per_executor=20),
        binding=Binding.NODE,
        out=tmp_path,
    )
    with Runner(load(), tmp_path) as runner:
        _, placement = runner.place(request)
        _, interleaved = runner.place(replace(request, mem_policy=MemPolicy.INTERLEAVE))
        for wrong, says in (
            (
                replace(request, binding=Binding.CORE, mem_policy=MemPolicy.BIND),
                "goes with --bind node",
            ),
            (replace(request, mem_policy=MemPolicy.LOCAL), "--mem-policy local"),
        ):
            with pytest.raises(UsageError, match=says):
                runner.place(wrong)
    assert placement.mem_policy is MemPolicy.PREFERRED
    assert [e.java_options for e in placement.executors] == [("-XX:ActiveProcessorCount=24",)] * 4
    conf = shipped_plugin_conf(placement)
    assert conf[LEVEL_KEY] == "node" and MEM_POLICY_KEY not in conf
    assert shipped_plugin_conf(interleaved)[MEM_POLICY_KEY] == "interleave"
    wide = bound_from_inside(
        plan(node, Layout(executors=1, cores_per_executor=30), Binding.NODE), slice_known=False
    )
    assert wide.executors[0].java_options == ()  # spans two nodes, yet no -XX:+UseNUMA
