"""What a cluster has (placement/cluster_capacity.py): one type for a standalone master's workers,
YARN's nodes, Kubernetes nodes and hosts over SSH, and the plans made from it.

No cluster runs here: the hosts are a recorded master's and ResourceManager's answers,
synthetic topologies, and real servers' hwloc XML from shared/topologies (this machine has
one NUMA node; the multi-node hosts are those files).
"""

from __future__ import annotations

import pytest
from conftest import topology_file
from statuspage import recorded_status, serving
from test_learned import WHEN, _reports
from test_yarn import recorded_nodes, site

from numaspark.errors import UsageError
from numaspark.hosts import Host, Inventory, hosts_capacity, plan_hosts
from numaspark.placement import Layout, plan
from numaspark.placement.cluster_capacity import (
    ClusterCapacity,
    Fitting,
    HostHas,
    Source,
    container_mb,
)
from numaspark.spark.learned_topology import learn
from numaspark.spark.managers import read_cluster
from numaspark.spark.standalone_master import FITTING
from numaspark.topology import load_synthetic, load_xml
from numaspark.units import GIB, MIB

TWO_NODES = "24em64t-2n6c2t-pci.xml"  # 2 packages, 2 nodes of 6 cores x 2 threads
FOUR_NODES = "16amd64-4distances.xml"  # an AMD server whose nodes have 2 CPUs each


def _standalone(*workers: tuple[str, int, int]) -> ClusterCapacity:
    return ClusterCapacity(
        "standalone",
        "spark://10.0.0.5:7077",
        tuple(HostHas(name, cores, memory) for name, cores, memory in workers),
        FITTING,
    )


def _plan(has: ClusterCapacity, layout: Layout):
    return has.place(lambda topology: plan(topology, layout), layout.memory_per_executor)


def test_a_standalone_cluster_is_planned_on_its_largest_worker_and_sized_by_its_smallest():
    has = _standalone(("10.0.0.11", 8, 6144), ("10.0.0.12", 4, 3072))
    assert has.describe() == "2 alive worker(s), 12 cores and 9216 MB free"
    # the largest worker alone (the smaller one is left out of the plan): by default one
    # executor of its 8 cores; workers of equal size are the nodes of one machine, so that
    # the master's spreading is planned (two one-core workers hold two executors)
    assert [len(n.cpus) for n in has.topology().cpu_nodes] == [8]
    assert [e.cores for e in _plan(has, Layout()).executors] == [8]
    even = _standalone(("a", 1, 1024), ("b", 1, 1024))
    assert [len(n.cpus) for n in even.topology().cpu_nodes] == [1, 1]
    assert [e.cores for e in _plan(even, Layout(executors=2, cores_per_executor=1)).executors] == [
        1,
        1,
    ]
    executors = _plan(has, Layout(executors=2, cores_per_executor=4)).executors
    # one executor per worker: the smaller one's 3072 MB is each one's heap (no overhead)
    assert [(e.cores, e.heap) for e in executors] == [(4, 3072 * MIB)] * 2
    with pytest.raises(UsageError) as refused:
        _plan(has, Layout(executors=2, cores_per_executor=4, memory_per_executor=4 * GIB))
    message = str(refused.value)
    assert message.startswith(
        "the cluster at spark://10.0.0.5:7077 cannot hold 2 executor(s) "
        "of 4 core(s) and 4096 MB heap (room for 1; its alive workers: "
        "10.0.0.11: 8 cores, 6144 MB free, 10.0.0.12: 4 cores"
    )
    with pytest.raises(UsageError, match="planned on the workers of the cluster at"):
        _plan(has, Layout(executors=3, cores_per_executor=4))  # 12 cores on 8
    assert "\n" not in message


def test_yarn_counts_containers_rounded_up_beside_the_application_master(tmp_path, monkeypatch):
    """The same type from the ResourceManager's recorded answer: one node of 2 vcores and
    4096 MB, a minimum allocation of 128 MB, the application master's 896 MB on it."""
    with serving(recorded_nodes()) as rm:
        monkeypatch.setenv("HADOOP_CONF_DIR", str(site(tmp_path / "conf", rm)))
        monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
        has = read_cluster("yarn")
    assert (has.kind, has.address) == ("yarn", rm) and has.ui is None
    assert [(h.name, h.cores, h.memory_mb, h.source) for h in has.hosts] == [
        ("localhost", 2, 4096, Source.MANAGER)
    ]
    two = _plan(has, Layout(executors=2, cores_per_executor=1)).executors
    assert [(e.cores, e.heap) for e in two] == [(1, 1152 * MIB)] * 2
    assert has.fitting.container_mb(1152) == container_mb(1152, 128) == 1536
    assert 2 * 1536 + has.fitting.reserved_mb <= 4096
    with pytest.raises(UsageError, match=r"grants at most 4096 MB and 2 vcore\(s\)"):
        _plan(has, Layout(executors=1, cores_per_executor=1, memory_per_executor=4 * GIB))


def test_hosts_the_plugin_named_are_kept_beside_the_workers_the_master_lists(tmp_path, monkeypatch):
    """A master lists its workers by the address they were started on; the plugin names each
    host by its hostname. Both are kept: the workers give the room, the learned hosts their
    NUMA nodes, from which each executor's node slice is sized (two real servers' XML)."""
    two = load_xml(topology_file(TWO_NODES))
    amd = load_xml(topology_file(FOUR_NODES))
    has = _standalone(("10.216.1.11", 2, 1024), ("10.216.1.12", 2, 1024))
    assert not has.numa_known() and has.slice_cpus(2) is None
    learned = has.with_topologies([("spark-a", two), ("spark-b", amd)], Source.LEARNED, "said")
    assert [h.name for h in learned.hosts] == ["10.216.1.11", "10.216.1.12", "spark-a", "spark-b"]
    assert [h.name for h in learned.listed()] == ["10.216.1.11", "10.216.1.12"]
    assert learned.describe() == has.describe()  # the room is the listed workers'
    assert learned.numa_known() and learned.learned == "said"
    # an executor of 2 cores is bound to a node: the Xeon's has 12 CPUs, the AMD's 2; its
    # ActiveProcessorCount is the fewest it may get, on any host
    assert learned.slice_cpus(2) == 2
    assert has.with_topologies([("spark-a", two)], Source.LEARNED).slice_cpus(2) == 12
    wide = learned.span_note(13, bound=True)  # the Xeon's nodes have 12 CPUs
    assert wide is not None and "more than the largest NUMA node of the cluster's hosts" in wide
    assert "(12 CPUs): the plugin binds each to the fewest nodes" in wide
    assert learned.span_note(12, bound=False) is None
    # the same worker named the same way gets the topology itself
    same = has.with_topologies([("10.216.1.11", two)], Source.LEARNED)
    assert same.host("10.216.1.11").topology is two and len(same.hosts) == 2


def test_a_given_topology_is_known_but_sizes_no_slice_on_a_worker():
    """--xml on a standalone cluster: the nodes are known (so --bind node sets
    ActiveProcessorCount from the plan), but the slice comes from learned or read hosts only."""
    given = _standalone(("w", 4, 4096)).with_topologies(
        [("nodes", load_xml(topology_file(TWO_NODES)))], Source.GIVEN
    )
    assert given.numa_known() and given.slice_cpus(2) is None


def test_kubernetes_nodes_are_planned_on_their_own_topology(tmp_path, monkeypatch):
    """Given, the node's topology plans the executors; learned, the largest learned host;
    with neither, a first --bind none run with a layout, else a refusal in one line."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    master = "k8s://https://10.0.0.9:6443"
    two = load_xml(topology_file(TWO_NODES))
    given = read_cluster(master, given=two)
    assert given.fitting is None and given.topology() is two and given.numa_known()
    assert given.describe() == "nodes: 2 NUMA node(s), 24 CPUs"
    executors = _plan(given, Layout(executors_per_node=1)).executors
    assert len(executors) == 2  # one per node of the given server, not of this machine
    said: list[str] = []
    first = read_cluster(master, layout=Layout(executors=2, cores_per_executor=3), say=said.append)
    assert len(first.topology().online_cpus) == 6 and not first.numa_known()
    assert said[0].startswith("planned from your layout alone (2 executor(s) of 3 cores)")
    with pytest.raises(UsageError, match="does not know the topology of the cluster's nodes"):
        read_cluster(master)


def test_learned_hosts_of_a_standalone_cluster_reach_its_plan(tmp_path, monkeypatch):
    """read_cluster adds what spark/learned_topology.py kept for that master, and says so."""
    monkeypatch.setenv("NUMASPARK_STATE_DIR", str(tmp_path / "state"))
    master = "spark://127.0.0.1:7077"
    two = load_xml(topology_file(TWO_NODES))
    learn(master, _reports(tmp_path / "placement.jsonl", ("host-a", two)), print, now=WHEN)
    with serving(recorded_status()) as ui:
        has = read_cluster(master, ui=ui)
    assert has.ui == ui and has.kind == "standalone"
    assert [(h.name, h.source) for h in has.hosts if h.topology is not None] == [
        ("host-a", Source.LEARNED)
    ]
    assert has.learned.startswith("planned with host-a's topology, learned from the plugin's")
    assert has.slice_cpus(6) == 12  # six cores of a node, with their siblings


def test_hosts_over_ssh_are_planned_each_on_its_own_topology():
    """The inventory's hosts (their topologies read with hwloc, here given): one type too."""
    inventory = Inventory((Host("a", "10.0.0.11"), Host("b", "10.0.0.12")))
    read = {
        "a": load_xml(topology_file(TWO_NODES)),
        "b": load_synthetic("pack:1 numa:1 core:4 pu:1"),
    }
    has = hosts_capacity(inventory, read)
    assert has.kind == "hosts" and has.fitting is None
    assert [(h.name, h.cores, h.source) for h in has.hosts] == [
        ("a", 24, Source.READ),
        ("b", 4, Source.READ),
    ]
    plans = plan_hosts(inventory, lambda h, t: plan(t, Layout(executors_per_node=1)), read)
    assert [len(p.placement.executors) for p in plans] == [2, 1]


def test_a_cluster_without_a_listed_host_is_refused():
    with pytest.raises(ValueError, match="at least one host"):
        ClusterCapacity("standalone", "spark://x:7077", (HostHas("n", topology=None),), FITTING)
    with pytest.raises(ValueError, match="at least one host"):
        ClusterCapacity("k8s", "k8s://x", ())
    assert Fitting("c", "h", "l").container_mb(1000) == 1000  # no rounding: the heap alone
