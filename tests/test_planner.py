"""The planner's rules, on real servers' topologies and synthetic ones.

Multi-node rules are tested on shared/topologies and synthetic machines
because the machine these tests run on has a single NUMA node.
"""

import pytest
from conftest import topology_file

from numaspark.errors import PlacementError, UsageError
from numaspark.placement import (
    Binding,
    Layout,
    MemPolicy,
    Mode,
    PuOrder,
    memory_on,
    numactl_argv,
    plan,
)
from numaspark.topology import CpuSet, load_synthetic, load_xml
from numaspark.units import GIB


@pytest.fixture(scope="module")
def xeon24():
    return load_xml(topology_file("24em64t-2n6c2t-pci.xml"))


@pytest.fixture(scope="module")
def synth4():
    return load_synthetic("pack:2 numa:2 core:6 pu:2")


def test_executors_per_node_with_node_binding(synth4):
    placement = plan(synth4, Layout(executors_per_node=2), Binding.NODE)
    executors = placement.executors
    assert len(executors) == 8
    for node in synth4.nodes:
        mine = [e for e in executors if e.nodes == CpuSet([node.os_index])]
        assert len(mine) == 2
        for e in mine:
            assert e.cpus == node.cpus
            assert e.cores == 6
            assert numactl_argv(e) == [
                "numactl",
                f"--cpunodebind={node.os_index}",
                f"--membind={node.os_index}",
            ]
    assert placement.driver.binding is Binding.NONE and not placement.driver.runs_tasks


def test_node_binding_never_straddles_when_it_fits(xeon24):
    placement = plan(xeon24, Layout(executors=3, cores_per_executor=6), Binding.NODE)
    assert [str(e.nodes) for e in placement.executors] == ["0", "1", "0"]
    assert all(len(e.nodes) == 1 for e in placement.executors)
    assert not any("spans" in n for n in placement.notes)


def test_node_binding_straddles_only_when_it_must(xeon24):
    placement = plan(xeon24, Layout(executors=1, cores_per_executor=16), Binding.NODE)
    (executor,) = placement.executors
    assert str(executor.nodes) == "0-1"
    assert executor.java_options == ("-XX:+UseNUMA",)
    assert any("spans several nodes" in n for n in placement.notes)
    assert numactl_argv(executor) == ["numactl", "--cpunodebind=0-1", "--membind=0-1"]


def test_core_binding_gives_whole_cores(xeon24):
    placement = plan(xeon24, Layout(executors=4, cores_per_executor=3), Binding.CORE)
    seen = CpuSet()
    for executor in placement.executors:
        assert len(executor.cpus) == 6  # 3 cores x 2 hardware threads
        for cpu in executor.cpus:
            assert xeon24.core_of(cpu).cpus.issubset(executor.cpus)  # siblings come along
        assert len(executor.nodes) == 1
        assert executor.cpus.isdisjoint(seen)
        seen |= executor.cpus
    assert str(placement.executors[0].cpus) == "0,2,4,12,14,16"


def test_pu_binding_fills_one_thread_per_core_first(xeon24):
    placement = plan(xeon24, Layout(executors=2, cores_per_executor=6), Binding.PU)
    for executor in placement.executors:
        cores = {xeon24.core_of(cpu).logical_index for cpu in executor.cpus}
        assert len(cores) == 6  # no two threads of one core
    siblings_first = plan(
        xeon24,
        Layout(executors=2, cores_per_executor=6),
        Binding.PU,
        pu_order=PuOrder.SIBLINGS_FIRST,
    )
    first = siblings_first.executors[0]
    assert len({xeon24.core_of(c).logical_index for c in first.cpus}) == 3
    assert numactl_argv(first)[1].startswith("--physcpubind=")


def test_only_allowed_cpus_and_cpu_nodes_are_used():
    topo = load_xml(topology_file("16amd64-8n2c-cpusets.xml"))
    for binding in Binding:
        placement = plan(topo, Layout(executors_per_node=1, memory_per_executor=GIB), binding)
        for executor in placement.executors:
            assert executor.cpus.issubset(topo.allowed_cpus)
            assert executor.nodes.issubset(CpuSet([1, 2, 3]))  # 4 and 5 have no CPUs
    knl = load_xml(topology_file("64intel64-fakeKNL-SNC4-hybrid.xml"))
    placement = plan(knl, Layout(executors_per_node=1, memory_per_executor=512 << 20), Binding.NODE)
    assert sorted(e.nodes.first() for e in placement.executors) == [0, 1, 2, 3]


def test_too_many_cores_names_the_limit(xeon24):
    with pytest.raises(PlacementError, match="allows 24 CPUs"):
        plan(xeon24, Layout(executors=5, cores_per_executor=5))
    with pytest.raises(PlacementError, match="allows 12 cores"):
        plan(xeon24, Layout(executors=5, cores_per_executor=3), Binding.CORE)
    with pytest.raises(
        PlacementError, match="8 executors need at least 8 CPUs, but the machine allows 7"
    ):
        plan(load_xml(topology_file("16em64t-4s2c2t-offlines.xml")), Layout(executors=8))


def test_missing_node_is_refused(xeon24):
    with pytest.raises(PlacementError, match="NUMA node 3 cannot run executors.*0-1"):
        plan(xeon24, Layout(), Binding.NODE, only_nodes=CpuSet([3]))
    placement = plan(xeon24, Layout(executors=2), Binding.NODE, only_nodes=CpuSet([1]))
    assert all(str(e.nodes) == "1" for e in placement.executors)
    assert placement.driver.cpus == xeon24.allowed_cpus  # the driver stays unbound


def test_heap_above_node_memory_is_refused(xeon24):
    with pytest.raises(PlacementError, match="node 0 has 18.0 GiB"):
        plan(xeon24, Layout(executors_per_node=1, memory_per_executor=20 * GIB), Binding.NODE)
    # unbound, the same heap fits the machine's 36 GB
    plan(xeon24, Layout(executors=1, memory_per_executor=20 * GIB), Binding.NONE)
    with pytest.raises(PlacementError, match="below Spark's minimum"):
        plan(xeon24, Layout(executors=1, memory_per_executor=256 << 20))


def test_auto_heap_splits_node_memory_and_caps_at_31g():
    big = load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))  # 48 GB per node
    placement = plan(big, Layout(executors_per_node=1), Binding.NODE)
    assert all(e.heap == 31 * GIB for e in placement.executors)
    assert any("compressed oops" in n for n in placement.notes)
    two = plan(big, Layout(executors_per_node=2), Binding.NODE)
    node_memory = big.nodes[0].memory
    for executor in two.executors:
        assert executor.heap < 31 * GIB
        assert 2 * (executor.heap + executor.overhead) <= 0.9 * node_memory


def test_unknown_memory_falls_back_to_spark_default(synth4):
    placement = plan(synth4, Layout(executors=2), Binding.NODE)
    assert all(e.heap == GIB for e in placement.executors)
    assert any("memory is unknown" in n for n in placement.notes)


def test_memory_policies(xeon24):
    layout = Layout(executors=2)
    prefixes = {
        policy: numactl_argv(plan(xeon24, layout, Binding.NODE, policy).executors[0])
        for policy in MemPolicy
    }
    assert prefixes[MemPolicy.BIND][-1] == "--membind=0"
    assert prefixes[MemPolicy.PREFERRED][-1] == "--preferred=0"
    assert prefixes[MemPolicy.INTERLEAVE][-1] == "--interleave=0"
    assert prefixes[MemPolicy.LOCAL][-1] == "--localalloc"
    unbound = plan(xeon24, layout, Binding.NONE, MemPolicy.INTERLEAVE).executors[0]
    assert numactl_argv(unbound) == ["numactl", "--interleave=0-1"]
    assert numactl_argv(plan(xeon24, layout).executors[0]) == []


def test_local_mode_is_one_jvm(xeon24):
    placement = plan(xeon24, Layout(mode=Mode.LOCAL), Binding.NODE)
    (jvm,) = placement.jvms
    assert jvm.role == "driver" and jvm.runs_tasks and jvm.cores == 12
    assert str(jvm.nodes) == "0"
    with pytest.raises(UsageError, match="local mode runs one JVM"):
        plan(xeon24, Layout(executors=2, mode=Mode.LOCAL))


def test_conflicting_or_silly_numbers(xeon24):
    with pytest.raises(UsageError, match="not both"):
        plan(xeon24, Layout(executors=2, executors_per_node=1))
    with pytest.raises(UsageError, match="at least 1"):
        plan(xeon24, Layout(executors=0))


def test_use_numa_only_where_the_jvm_keeps_it_on(xeon24):
    """-XX:+UseNUMA where a JVM's CPUs and its memory mask are the same several nodes; the JVM
    turns it off otherwise (one memory node, or masks that differ: JDK-8205051). Multi-node
    plans on saved servers' topologies: this machine has one node."""
    wide = Layout(executors=1, cores_per_executor=16)  # must straddle both nodes of xeon24

    def options(topology, layout, binding, policy=None):
        return [j.java_options for j in plan(topology, layout, binding, policy).executors]

    assert options(xeon24, wide, Binding.NODE) == [("-XX:+UseNUMA",)]  # membind 0-1
    assert options(xeon24, wide, Binding.NODE, MemPolicy.INTERLEAVE) == [("-XX:+UseNUMA",)]
    # no membind: the mask is every node, here both nodes the CPUs are on
    assert options(xeon24, wide, Binding.NODE, MemPolicy.LOCAL) == [("-XX:+UseNUMA",)]
    assert options(xeon24, wide, Binding.NODE, MemPolicy.PREFERRED) == [("-XX:+UseNUMA",)]
    narrow = Layout(executors=2, cores_per_executor=6)
    assert options(xeon24, narrow, Binding.NODE) == [(), ()]  # one node each
    # unbound, a JVM runs on every node and may allocate on every node: it keeps it on
    assert options(xeon24, narrow, Binding.NONE) == [("-XX:+UseNUMA",)] * 2
    four = load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))
    two_of_four = options(four, Layout(executors=1, cores_per_executor=30), Binding.NODE)
    assert two_of_four == [("-XX:+UseNUMA",)]  # CPUs and membind on the same two nodes
    spread = options(four, Layout(executors=1, cores_per_executor=30), Binding.NODE,
                     MemPolicy.LOCAL)  # fmt: skip
    assert spread == [()]  # CPUs on two nodes, memory mask all four
    remote = memory_on(plan(xeon24, wide, Binding.NODE), CpuSet([1]))
    assert remote.executors[0].java_options == ()  # memory moved to one node: off
