"""The planner's rules, on real servers' topologies and synthetic ones.

Multi-node rules are tested on shared/topologies and synthetic machines
because the machine these tests run on has a single NUMA node.
"""

from dataclasses import replace

import pytest
from conftest import topology_file

from numaspark import records
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
    spark_overhead,
)
from numaspark.topology import CpuSet, load_synthetic, load_xml
from numaspark.units import GIB, MIB


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
    # one per node on a two-node server is two JVMs: refused, never one JVM on node 0
    with pytest.raises(UsageError, match="--executors-per-node 1 on 2 node.s. asks for 2"):
        plan(xeon24, Layout(executors_per_node=1, mode=Mode.LOCAL), Binding.NODE)
    one_node = plan(xeon24, Layout(executors_per_node=1, mode=Mode.LOCAL), only_nodes=CpuSet([1]))
    assert str(one_node.jvms[0].nodes) == "1"


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
    spread = options(
        four, Layout(executors=1, cores_per_executor=30), Binding.NODE, MemPolicy.LOCAL
    )
    assert spread == [()]  # CPUs on two nodes, memory mask all four
    remote = memory_on(plan(xeon24, wide, Binding.NODE), CpuSet([1]))
    assert remote.executors[0].java_options == ()  # memory moved to one node: off


def _with_distances(topology, distances):
    """``topology`` with a node distance matrix (synthetic machines have none)."""
    nodes = tuple(n.os_index for n in topology.nodes)
    return replace(topology, distance_nodes=nodes, distances=distances, _pu_by_os={})


def test_a_straddling_executor_starts_on_the_freest_node_then_the_nearest():
    # four nodes of 4 CPUs; node 0's nearest is 2, then 3; node 1's nearest is 3
    four = _with_distances(
        load_synthetic("numa:4 core:4 pu:1"),
        ((10, 30, 12, 20), (30, 10, 20, 12), (12, 20, 10, 30), (20, 12, 30, 10)),
    )
    one = plan(four, Layout(executors=1, cores_per_executor=10), Binding.PU).executors[0]
    assert (str(one.cpus), str(one.nodes)) == ("0-3,8-13", "0,2-3")
    # node binding takes the same nodes, and each of them whole
    node = plan(four, Layout(executors=1, cores_per_executor=10), Binding.NODE).executors[0]
    assert (str(node.cpus), str(node.nodes), str(node.mem_nodes)) == ("0-3,8-15", "0,2-3", "0,2-3")
    # each executor starts on the node with most CPUs still free (the first of a tie), takes
    # all of it, and the rest from the nearest node that has any left
    three = plan(four, Layout(executors=3, cores_per_executor=5), Binding.PU).executors
    assert [str(e.cpus) for e in three] == ["0-3,8", "4-7,12", "9-11,13-14"]
    assert [str(e.nodes) for e in three] == ["0,2", "1,3", "2-3"]


def test_without_distances_a_straddling_executor_takes_nodes_in_order():
    # the freest node first (the first of a tie), then the others in order
    four = load_synthetic("numa:4 core:4 pu:1")
    three = plan(four, Layout(executors=3, cores_per_executor=5), Binding.PU).executors
    assert [str(e.cpus) for e in three] == ["0-4", "5,8-11", "6,12-15"]


def test_only_nodes_confines_executors_of_every_binding(xeon24):
    odd = "1,3,5,7,9,11,13,15,17,19,21,23"  # node 1 of xeon24
    layout = Layout(executors=2)
    for binding in Binding:
        placement = plan(xeon24, layout, binding, MemPolicy.INTERLEAVE, only_nodes=CpuSet([1]))
        assert str(CpuSet.union(e.cpus for e in placement.executors)) == odd, binding
        assert all(str(e.mem_nodes) == "1" for e in placement.executors), binding
        # one node: no -XX:+UseNUMA, and the driver keeps the whole machine
        # (at node level the two share node 1: each JVM counts its half of its 12 CPUs)
        shared = ("-XX:ActiveProcessorCount=6",) if binding is Binding.NODE else ()
        assert all(e.java_options == shared for e in placement.executors), binding
        assert str(placement.driver.cpus) == "0-23" and str(placement.driver.nodes) == "0-1"
    cores = plan(xeon24, layout, Binding.CORE, only_nodes=CpuSet([1])).executors
    assert [str(e.cpus) for e in cores] == ["1,3,5,13,15,17", "7,9,11,19,21,23"]


def test_memory_on_binds_only_the_executors_memory(xeon24):
    placement = plan(xeon24, Layout(executors=2, cores_per_executor=6), Binding.NODE)
    moved = memory_on(placement, CpuSet([1]), xeon24)
    assert moved.mem_policy is MemPolicy.BIND and moved.driver == placement.driver
    for before, after in zip(placement.executors, moved.executors, strict=True):
        assert after.cpus == before.cpus  # the CPUs stay
        assert (after.mem_policy, str(after.mem_nodes)) == (MemPolicy.BIND, "1")
        assert numactl_argv(after)[-1] == "--membind=1"
    # whatever policy the placement had, its executors' memory is now bound
    local = plan(xeon24, Layout(executors=2), Binding.NODE, MemPolicy.LOCAL)
    bound = memory_on(local, CpuSet([0]), xeon24)
    assert bound.mem_policy is MemPolicy.BIND
    assert [numactl_argv(e)[-1] for e in bound.executors] == ["--membind=0"] * 2
    wide = plan(xeon24, Layout(executors=1, cores_per_executor=16), Binding.NODE)
    # memory still on the CPUs' two nodes: the JVM keeps -XX:+UseNUMA
    (same,) = memory_on(wide, CpuSet([0, 1]), xeon24).executors
    assert same.java_options == ("-XX:+UseNUMA",)
    for bad in (CpuSet(), CpuSet([2])):
        with pytest.raises(UsageError, match="allowed NUMA nodes are 0-1"):
            memory_on(placement, bad, xeon24)


def test_spark_overhead_is_384m_or_a_tenth_of_the_heap():
    assert spark_overhead(GIB) == 384 * MIB
    assert spark_overhead(10 * GIB) == GIB
    assert spark_overhead(10 * GIB + 9) == GIB  # whole bytes, as Spark computes it


def _fits_tightly(heap: int, share: float) -> bool:
    """``heap`` is the largest whole number of MiB whose heap and overhead fit in ``share``."""
    above = heap + MIB
    return heap % MIB == 0 and heap + spark_overhead(heap) <= share < above + spark_overhead(above)


def test_auto_heap_is_the_largest_that_fits_each_executors_share(xeon24):
    # 18 GiB per node; the OS keeps 10% of each, the unbound driver (1g + 384m) is charged to
    # the nodes by their memory
    machine = 0.9 * xeon24.total_memory
    driver = GIB + 384 * MIB
    unbound = plan(xeon24, Layout(executors=2), Binding.NONE).executors
    assert all(_fits_tightly(e.heap, (machine - driver) / 2) for e in unbound)
    # node-bound: four executors split the two nodes (one node's memory is a little smaller)
    node0 = xeon24.node(0).memory
    bound = plan(xeon24, Layout(executors_per_node=2), Binding.NODE).executors
    assert all(
        _fits_tightly(e.heap, (0.9 * node0 - driver * node0 / xeon24.total_memory) / 2)
        for e in bound
    )
    # a node shared unevenly (the third executor straddles): shares follow the CPUs taken
    uneven = plan(xeon24, Layout(executors=3, cores_per_executor=8), Binding.PU).executors
    assert [str(e.nodes) for e in uneven] == ["0", "1", "0-1"]
    budget0 = 0.9 * node0 - driver * node0 / xeon24.total_memory
    assert _fits_tightly(uneven[0].heap, budget0 * 8 / 12)
    # small executors: the overhead is its 384m floor, not a tenth of the heap
    small = plan(xeon24, Layout(executors_per_node=6), Binding.NODE).executors
    assert small[0].heap < 3840 * MIB and _fits_tightly(small[0].heap, budget0 / 6)
    # local mode has no separate driver to charge: the whole 90% of its node
    (local,) = plan(xeon24, Layout(mode=Mode.LOCAL), Binding.NODE).jvms
    assert _fits_tightly(local.heap, 0.9 * node0)


def test_explicit_heap_limits(xeon24):
    # 450m is Spark's minimum, and allowed
    assert plan(xeon24, Layout(executors=1, memory_per_executor=450 * MIB)).executors[0].heap == (
        450 * MIB
    )
    # unbound but with memory bound to both nodes, two 15g executors fit the machine's 36 GB
    # (not one 18 GB node)
    plan(xeon24, Layout(executors=2, memory_per_executor=15 * GIB), Binding.NONE, MemPolicy.BIND)
    big = load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))  # 48 GB per node
    at_31g = plan(big, Layout(executors=1, memory_per_executor=31 * GIB), Binding.NODE)
    assert not any("compressed oops" in n for n in at_31g.notes)  # 31g keeps them
    at_32g = plan(big, Layout(executors=1, memory_per_executor=32 * GIB), Binding.NODE)
    assert any("above 31g: the JVM turns compressed oops off" in n for n in at_32g.notes)


def test_the_driver_runs_no_tasks_with_its_own_resources(xeon24):
    layout = Layout(executors=2, driver_cores=3, driver_memory=2 * GIB)
    driver = plan(xeon24, layout, Binding.NODE).jvms[0]
    assert (driver.role, driver.index, driver.cores, driver.heap) == ("driver", 0, 3, 2 * GIB)
    assert driver.overhead == 384 * MIB and driver.runs_tasks is False
    assert (driver.binding, str(driver.cpus), driver.mem_policy) == (Binding.NONE, "0-23", None)


def test_core_and_pu_slots_are_the_executors_cpus_core_by_core(xeon24):
    core = plan(xeon24, Layout(executors=4, cores_per_executor=3), Binding.CORE).executors[0]
    assert [str(s) for s in core.slots] == ["0,12", "2,14", "4,16"]
    pu = plan(xeon24, Layout(executors=2, cores_per_executor=6), Binding.PU).executors[0]
    assert [str(s) for s in pu.slots] == ["0", "2", "4", "6", "8", "10"]
    assert plan(xeon24, Layout(executors=2), Binding.NODE).executors[0].slots == ()


def test_executors_per_node_stay_on_their_node_or_fail(xeon24):
    placement = plan(xeon24, Layout(executors_per_node=2, cores_per_executor=3), Binding.PU)
    assert [str(e.nodes) for e in placement.executors] == ["0", "0", "1", "1"]
    # node 1 keeps 10 of its 12 CPUs: an executor of 11 per node does not fit there, and is
    # refused rather than spread over both nodes
    short = replace(xeon24, allowed_cpus=CpuSet.parse("0-20,22"), _pu_by_os={})
    with pytest.raises(PlacementError, match="node 1 allows 10 CPUs, too few for 1 executor"):
        plan(short, Layout(executors_per_node=1, cores_per_executor=11), Binding.PU)


def test_the_placement_names_its_jvms_machine_and_policy(xeon24):
    placement = plan(xeon24, Layout(executors=2), Binding.NODE)
    assert [j.role for j in placement.jvms] == ["driver", "executor", "executor"]
    assert placement.topology_source == xeon24.source
    assert placement.topology_fingerprint == xeon24.fingerprint
    assert placement.mem_policy is MemPolicy.BIND  # bound CPUs bind their memory by default
    unbound = plan(xeon24, Layout(executors=2))
    assert unbound.mem_policy is None and unbound.executors[0].mem_policy is None
    assert unbound.executors[0].mem_nodes == CpuSet()  # no policy: no memory nodes
    local = plan(xeon24, Layout(executors=2), Binding.NODE, MemPolicy.LOCAL).executors[0]
    assert local.mem_nodes == CpuSet()  # local allocation names no node


def test_default_shapes(xeon24):
    # nothing given: one executor per node, of the whole node
    assert [e.cores for e in plan(xeon24, Layout(), Binding.NODE).executors] == [12, 12]
    # local mode: every allowed CPU unless bound to a node
    assert plan(xeon24, Layout(mode=Mode.LOCAL)).jvms[0].cores == 24
    # the driver may have every CPU the machine allows
    assert plan(xeon24, Layout(executors=1, driver_cores=24)).driver.cores == 24


@pytest.mark.parametrize(
    ("layout", "option"),
    [
        (Layout(executors=0), "--executors"),
        (Layout(executors_per_node=0), "--executors-per-node"),
        (Layout(cores_per_executor=0), "--cores-per-executor"),
        (Layout(driver_cores=0), "--driver-cores"),
    ],
)
def test_a_number_below_one_names_its_option(xeon24, layout, option):
    with pytest.raises(UsageError, match=f"^{option} must be at least 1, got 0$"):
        plan(xeon24, layout)


# -- threads per core (SMT as an axis) ---------------------------------------------------------
# A synthetic POWER-like machine (4 nodes x 6 cores x 8 threads): this one has no SMT.

SMT8 = "pack:2 numa:2 core:6 pu:8"


@pytest.mark.parametrize("binding", [Binding.CORE, Binding.PU])
def test_threads_per_core_gives_whole_cores_and_their_first_threads(binding):
    topology = load_synthetic(SMT8)
    placement = plan(
        topology, Layout(executors=8, cores_per_executor=3, threads_per_core=4), binding
    )
    owned: set[int] = set()
    for jvm in placement.executors:
        assert jvm.cores == 12  # task slots: 3 cores x 4 threads (spark.executor.cores)
        cores = [core for core in topology.cores if not core.cpus.isdisjoint(jvm.cpus)]
        assert len(cores) == 3 and len(jvm.nodes) == 1
        for core in cores:
            assert core.os_index not in owned  # no two executors share a core
            owned.add(core.os_index)
            mine = core.cpus & jvm.cpus
            assert mine == CpuSet(core.cpus.to_list()[:4])  # its 4 lowest-numbered threads
    first = placement.executors[0]
    if binding is Binding.CORE:  # 4 tasks share each core's 4 threads
        assert first.slots == tuple(
            s
            for s in (CpuSet.parse("0-3"), CpuSet.parse("8-11"), CpuSet.parse("16-19"))
            for _ in range(4)
        )
    else:  # the plugin splits each core's group into one thread a task
        assert first.slots == (CpuSet.parse("0-3"), CpuSet.parse("8-11"), CpuSet.parse("16-19"))
    assert numactl_argv(first)[1] == "--physcpubind=0-3,8-11,16-19"
    assert any("threads per core 4 of 8" in n for n in placement.notes)


def test_threads_per_core_is_checked_against_the_machine_and_the_binding():
    topology = load_synthetic(SMT8)
    with pytest.raises(UsageError, match="cores have 8 hardware thread.*give 1 to 8"):
        plan(topology, Layout(executors=2, cores_per_executor=2, threads_per_core=16), Binding.CORE)
    with pytest.raises(UsageError, match="give --bind core or --bind pu"):
        plan(topology, Layout(executors=2, cores_per_executor=2, threads_per_core=4))
    with pytest.raises(PlacementError, match="allows 24 cores"):
        plan(topology, Layout(executors=5, cores_per_executor=6, threads_per_core=1), Binding.PU)
    # without SMT one thread per core is all there is: the plan is the one without it
    flat = load_synthetic("pack:1 numa:2 core:4 pu:1")
    asked = plan(flat, Layout(executors=2, cores_per_executor=2, threads_per_core=1))
    assert asked.executors == plan(flat, Layout(executors=2, cores_per_executor=2)).executors


def test_threads_per_core_is_recorded_and_older_records_load_without_it():
    from numaspark.experiment.request import RunRequest, request_of, run_argv
    from numaspark.experiment.result import RunSpec
    from numaspark.placement import Placement
    from numaspark.placement.render import placement_to_dict

    topology = load_synthetic(SMT8)
    layout = Layout(executors=4, cores_per_executor=6, threads_per_core=2)
    data = placement_to_dict(plan(topology, layout, Binding.CORE))
    assert data["layout"]["cores_per_executor"] == 6 and data["layout"]["threads_per_core"] == 2
    assert data["spark_conf"]["spark.executor.cores"] == "12"
    loaded = records.load(Placement, data)
    assert loaded.layout.threads_per_core == 2 and loaded.layout.cores_per_executor == 6
    del data["layout"]["threads_per_core"]  # a record written before threads per core
    assert records.load(Placement, data).layout.threads_per_core is None
    request = request_of(
        RunSpec(workload="wordcount", mode="standalone", binding="core", placement=loaded)
    )
    assert request.layout.threads_per_core == 2 and request.layout.cores_per_executor == 6
    argv = run_argv(RunRequest(workload="wordcount", layout=layout, binding=Binding.CORE))
    assert argv[argv.index("--threads-per-core") + 1] == "2"


def test_plan_prints_the_threads_of_each_core_an_executor_runs_on():
    from conftest import run_cli

    args = (
        "plan",
        "--synthetic",
        SMT8,
        "--mode",
        "standalone",
        "--executors",
        "2",
        "--cores-per-executor",
        "2",
        "--threads-per-core",
        "2",
    )
    shown = run_cli(*args, "--bind", "pu", check=True).stdout
    assert "2 executor(s) x 2 cores x 2 threads per core (4 task slots)" in " ".join(shown.split())
    assert "executor 0 owns 2 cores, runs on hardware threads 0-1 | 8-9" in shown
    refused = run_cli(*args)
    assert refused.returncode == 2 and "give --bind core or --bind pu" in refused.stderr
    assert "Traceback" not in refused.stderr
