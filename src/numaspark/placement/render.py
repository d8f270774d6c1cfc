"""A `Placement` rendered for the tools that realise it: numactl, Spark, YARN, Kubernetes."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass, replace
from itertools import combinations

from numaspark import records
from numaspark.errors import ToolMissingError, UsageError
from numaspark.placement.model import (
    Binding,
    JvmPlacement,
    MemPolicy,
    Mode,
    Placement,
)
from numaspark.placement.planner import most_sharing
from numaspark.placement.plugin import (
    CONF_PREFIX,
    DEVICE_RESOURCE_KEY,
    LEVEL_KEY,
    MEM_POLICY_KEY,
    PLUGIN_CLASS,
    jar_path,
)
from numaspark.placement.resources import (
    WORKER_RESOURCES,
    YARN_GPU,
    resource_conf,
    worker_conf,
    worker_resources,
)
from numaspark.topology import CpuSet, Topology
from numaspark.units import MIB, jvm_size

#: The binder numaspark's own prefixes use, whatever is installed: ``numactl`` or
#: ``numaspark`` (its own, `numaspark.bindexec`). Unset: numactl where it is on the PATH.
BINDER_ENV = "NUMASPARK_BINDER"
BINDERS = ("numactl", "numaspark")


@dataclass(frozen=True)
class Binder:
    """What binds a JVM numaspark starts: numactl where it is installed, else numaspark's own
    helper (``python -m numaspark.bindexec``), which needs nothing but the wheel."""

    kind: str  # "numactl" or "numaspark"
    path: str  # numactl's path, or the Python that runs numaspark.bindexec

    @classmethod
    def here(cls) -> Binder:
        """This machine's binder (``NUMASPARK_BINDER`` chooses; a bad value is one line)."""
        chosen = os.environ.get(BINDER_ENV, "").strip()
        if chosen and chosen not in BINDERS:
            raise UsageError(f"{BINDER_ENV}={chosen!r}: give numactl or numaspark, or unset it")
        numactl = shutil.which("numactl")
        if chosen == "numactl" and numactl is None:
            raise ToolMissingError(
                f"{BINDER_ENV}=numactl but numactl is not on the PATH: "
                f"unset {BINDER_ENV} (numaspark binds by itself)"
            )
        if numactl is not None and chosen != "numaspark":
            return cls("numactl", "numactl")
        return cls("numaspark", sys.executable)

    @classmethod
    def on_host(cls, numactl: str | None, python: str) -> Binder:
        """Another host's binder: its numactl when it has one (``command -v numactl`` there),
        else numaspark's helper run by that host's Python."""
        return cls("numactl", "numactl") if numactl else cls("numaspark", python)


def bind_argv(jvm: JvmPlacement, binder: Binder | None = None) -> list[str]:
    """The command prefix that places ``jvm`` with ``binder`` (this machine's by default);
    empty when it runs unbound. Both binders give the same kernel calls (docs/install.md)."""
    binder = binder or Binder.here()
    if binder.kind == "numactl":
        return numactl_argv(jvm, binder.path)
    bound = jvm.binding is not Binding.NONE
    policy = jvm.mem_policy.value if jvm.mem_policy is not None else None
    return bindexec_argv(jvm.cpus if bound else None, policy, jvm.mem_nodes, binder.path)


def bindexec_argv(
    cpus: CpuSet | None, policy: str | None, nodes: CpuSet | None, python: str
) -> list[str]:
    """The prefix that runs a command under `numaspark.bindexec` (empty: nothing bound)."""
    args: list[str] = []
    if cpus is not None:
        args += ["--cpus", str(cpus)]
    if policy is not None:
        args += ["--policy", policy]
        if policy != "local":
            args += ["--nodes", str(nodes)]
    return [python, "-m", "numaspark.bindexec", *args, "--"] if args else []


def numactl_argv(jvm: JvmPlacement, numactl: str = "numactl") -> list[str]:
    """The numactl prefix that places ``jvm``; empty when it runs unbound."""
    args: list[str] = []
    if jvm.binding is Binding.NODE:
        args.append(f"--cpunodebind={jvm.nodes}")
    elif jvm.binding in (Binding.CORE, Binding.PU):
        args.append(f"--physcpubind={jvm.cpus}")
    if jvm.mem_policy is MemPolicy.BIND:
        args.append(f"--membind={jvm.mem_nodes}")
    elif jvm.mem_policy is MemPolicy.PREFERRED:
        args.append(f"--preferred={jvm.mem_nodes}")
    elif jvm.mem_policy is MemPolicy.INTERLEAVE:
        args.append(f"--interleave={jvm.mem_nodes}")
    elif jvm.mem_policy is MemPolicy.LOCAL:
        args.append("--localalloc")
    return [numactl, *args] if args else []


def spark_conf(placement: Placement) -> dict[str, str]:
    """spark-defaults settings that give Spark the planned executors."""
    layout = placement.layout
    executors = placement.executors
    first = executors[0]
    if layout.mode is Mode.LOCAL:
        conf = {
            "spark.master": f"local[{first.cores}]",
            "spark.driver.memory": jvm_size(first.heap),
        }
    else:
        conf = {
            "spark.executor.instances": str(len(executors)),
            "spark.executor.cores": str(first.cores),
            "spark.executor.memory": jvm_size(first.heap),
            "spark.cores.max": str(placement.total_cores),
            "spark.driver.cores": str(layout.driver_cores),
            "spark.driver.memory": jvm_size(layout.driver_memory),
        }
    if placement.binding in (Binding.CORE, Binding.PU):
        conf.update(affinity_conf(placement))
    conf.update(resource_conf(placement))  # devices per executor (placement/resources.py)
    options = sorted({opt for j in executors for opt in j.java_options})
    if options:
        key = (
            "spark.driver.extraJavaOptions"
            if layout.mode is Mode.LOCAL
            else ("spark.executor.extraJavaOptions")
        )
        conf[key] = " ".join(options)
    return conf


def affinity_conf(placement: Placement) -> dict[str, str]:
    """Core and pu binding pin each running task inside its executor (jvm/: the affinity
    plugin); the slots reach each JVM through its environment (``slots_env``)."""
    conf = {
        "spark.plugins": PLUGIN_CLASS,
        # the driver loads every plugin class too (its driver part is empty)
        "spark.driver.extraClassPath": str(jar_path()),
        LEVEL_KEY: placement.binding.value,
    }
    if placement.layout.mode is not Mode.LOCAL:
        conf["spark.executor.extraClassPath"] = str(jar_path())
    return {**conf, **device_resource_conf(placement)}


def device_resource_conf(placement: Placement) -> dict[str, str]:
    """The plugin's ``deviceResource``: every resource the plan gives executors devices of
    (``gpu,nic``), so that at level node an executor binds to the node of whichever it owns;
    nothing for a plan without devices (the plugin's default, gpu, stands)."""
    names = [name for name, _ in placement.layout.resources]
    return {DEVICE_RESOURCE_KEY: ",".join(names)} if names else {}


def shipped_plugin_conf(placement: Placement) -> dict[str, str]:
    """On a cluster numaspark did not start: the plugin shipped with the application
    (``spark.jars``) to bind each executor to a node from inside (node), pin tasks
    (core/pu) and, at every level, report from inside each executor where it runs."""
    conf = {
        "spark.plugins": PLUGIN_CLASS,
        "spark.jars": str(jar_path()),
        "spark.driver.extraClassPath": str(jar_path()),
        LEVEL_KEY: placement.binding.value,
    }
    policy = placement.mem_policy
    if placement.binding is Binding.NODE and policy not in (None, MemPolicy.PREFERRED):
        conf[MEM_POLICY_KEY] = policy.value  # preferred, the plugin's default, is left out
    return {**conf, **device_resource_conf(placement)}


def inside_slice(topology: Topology, start: int, cores: int) -> CpuSet:
    """The CPUs the plugin binds an executor of ``cores`` to on a host of ``topology`` when it
    holds a slot of node ``start`` (jvm/ NodeChooser.nodesFor): that node when its CPUs hold
    the cores, else the fewest nodes with it that do, the nearest (least summed distance) of
    as many, then the lowest numbers; every node when even they do not hold them."""
    nodes = {n.os_index: n.cpus for n in topology.cpu_nodes}
    if len(nodes[start]) >= cores:
        return nodes[start]
    others = sorted(nodes.keys() - {start})
    for count in range(1, len(others) + 1):
        held = [
            c
            for c in combinations(others, count)
            if len(nodes[start]) + sum(len(nodes[n]) for n in c) >= cores
        ]
        if held:
            best = min(held, key=lambda c: (sum(_hops(topology, start, n) for n in c), c))
            return CpuSet(cpu for n in (start, *best) for cpu in nodes[n])
    return CpuSet(cpu for cpus in nodes.values() for cpu in cpus)


def _hops(topology: Topology, a: int, b: int) -> int:
    known = topology.distance(a, b)
    return known if known is not None else (10 if a == b else 20)  # as the plugin assumes


def inside_slice_cpus(hosts: Iterable[Topology], cores: int, per_host: int = 1) -> int:
    """-XX:ActiveProcessorCount of an executor of ``cores`` bound from inside on any of
    ``hosts``, whichever node's slot it gets: the fewest CPUs of its node slice divided by the
    most executors that may share that slice when ``per_host`` share a host (spread over its
    nodes as the plugin's slots spread them), never fewer than its cores."""
    counts = []
    for host in hosts:
        every = max(1, len(host.online_cpus))
        for node in host.cpu_nodes:
            cpus = len(inside_slice(host, node.os_index, cores))
            sharing = -(-per_host * cpus // every)
            counts.append(active_processors(cpus, cores, sharing))
    return min(counts)


def bound_from_inside(
    placement: Placement,
    slice_known: bool,
    slice_cpus: int | None = None,
    at_most: int | None = None,
) -> Placement:
    """Executors the plugin will bind to a node from inside (level node, on a cluster
    numaspark did not start). They start unbound, so -XX:+UseNUMA is left out (at start their
    memory mask is not their CPUs' nodes: the JVM would switch it off, JDK-8205051); and the
    JVM sizes its GC, JIT and Netty pools for every CPU of the host before the plugin binds
    it, so -XX:ActiveProcessorCount is fixed as it starts, for the most executors that may
    share its node: the node's CPUs divided by them (the plan's executors on that node, or
    with dynamic allocation as many more as maxExecutors, ``at_most``, allows), never fewer
    than its cores; where the cluster's node topology is known (``slice_known``: --xml of its
    nodes, not a standalone worker's core count). ``slice_cpus``: that count already made
    from the hosts' topologies the plugin reported, when the plan's own is only a worker's
    cores. One value for every executor (one spark.executor.extraJavaOptions): the least."""
    sharing = executors_per_node(placement, at_most)
    counts = [
        active_processors(len(j.cpus), j.cores, max(sharing.get(n, 1) for n in j.nodes))
        for j in placement.executors
    ]
    count = slice_cpus if slice_cpus is not None else min(counts)
    jvms = []
    for jvm in placement.jvms:
        if jvm.runs_tasks:
            options = tuple(o for o in jvm.java_options if o != "-XX:+UseNUMA")
            options = tuple(o for o in options if not o.startswith(PROCESSOR_COUNT))
            if slice_known:
                options += (f"{PROCESSOR_COUNT}{count}",)
            jvm = replace(jvm, java_options=options)
        jvms.append(jvm)
    note = (
        "the affinity plugin binds each executor to a node from inside, as it starts "
        "(a node slot per host in its lock directory), and moves its memory there"
    )
    return replace(placement, jvms=tuple(jvms), notes=(*placement.notes, note))


PROCESSOR_COUNT = "-XX:ActiveProcessorCount="


def pinned_from_inside(placement: Placement) -> Placement:
    """Executors whose task threads the plugin pins from inside (level core or pu, on a
    cluster numaspark did not start): the JVM starts unbound, seeing every CPU of its host, so
    -XX:ActiveProcessorCount is its own CPUs (its cores, times the threads of each it uses)."""
    jvms = tuple(
        replace(
            j,
            java_options=(
                *(o for o in j.java_options if not o.startswith(PROCESSOR_COUNT)),
                f"{PROCESSOR_COUNT}{len(j.cpus)}",
            ),
        )
        if j.runs_tasks
        else j
        for j in placement.jvms
    )
    return replace(placement, jvms=jvms)


def spark_defaults_text(conf: dict[str, str]) -> str:
    width = max(len(k) for k in conf)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in conf.items())


# YARN rounds every container up to a multiple of the scheduler's minimum allocation
# (yarn.scheduler.minimum-allocation-mb, default 1024): the NUMA allocator then sees that size.
YARN_ALLOCATION_MB = 1024
# Spark's application master in client mode (numaspark runs the driver here): spark.yarn.am.memory
# 512m + 384m overhead, one vcore; a container the NodeManager binds to a node as well.
SPARK_AM_MB, SPARK_AM_VCORES = 1024, 1
EXECUTOR_DEFAULT = (
    "the default container executor suffices (YARN-11196, Hadoop >= 3.4): "
    "nothing in this plan needs LinuxContainerExecutor (cgroup CPU enforcement, "
    "containers run as the submitting user), so it is not set. On Hadoop 3.1 to "
    "3.3 NUMA awareness works only under LinuxContainerExecutor (YARN-5764 docs): "
    "there set yarn.nodemanager.container-executor.class to "
    "org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor and install "
    "its setuid container-executor"
)


def yarn_container_mb(jvm: JvmPlacement, python_memory: int = 0) -> int:
    """The container YARN grants an executor: heap + overhead + its Python workers' memory
    (spark.executor.pyspark.memory, which Spark adds to the container it asks for) in whole
    MiB, as Spark writes them, rounded up to the allocation step."""
    asked = jvm.heap // MIB + jvm.overhead // MIB + python_memory // MIB
    return -(-asked // YARN_ALLOCATION_MB) * YARN_ALLOCATION_MB


def python_memory_conf(python_memory: int) -> dict[str, str]:
    """spark.executor.pyspark.memory, where the plan sizes it (0: not set, as Spark's default:
    the Python workers then live in the overhead, and nothing limits them)."""
    return {"spark.executor.pyspark.memory": jvm_size(python_memory)} if python_memory else {}


def yarn_settings(
    placement: Placement, topology: Topology, asked: MemPolicy | None = None, python_memory: int = 0
) -> dict[str, dict[str, str]]:
    """yarn-site.xml NodeManager settings (YARN-5764 NUMA awareness) and the Spark side;
    ``python_memory``: each executor's spark.executor.pyspark.memory, in its container.

    YARN binds each container to one node with numactl at node level; it has no
    core or hardware-thread level, so `core`/`pu` plans are realised at node level.
    """
    executors = placement.executors
    first = executors[0]
    container_mb = yarn_container_mb(first, python_memory)
    yarn: dict[str, str] = {
        "yarn.nodemanager.numa-awareness.enabled": str(
            placement.binding is not Binding.NONE
        ).lower()
    }
    why: dict[str, str] = {}
    if placement.binding is not Binding.NONE:
        yarn.update(_numa_nodes(placement, topology, container_mb, why))
        why["container executor"] = EXECUTOR_DEFAULT
    # the scheduler hands out what the executors and the application master take, no more
    yarn["yarn.nodemanager.resource.memory-mb"] = str(len(executors) * container_mb + SPARK_AM_MB)
    yarn["yarn.nodemanager.resource.cpu-vcores"] = str(placement.total_cores + SPARK_AM_VCORES)
    spark = {
        "spark.executor.instances": str(len(executors)),
        "spark.executor.cores": str(first.cores),
        "spark.executor.memory": jvm_size(first.heap),
        "spark.executor.memoryOverhead": jvm_size(first.overhead),
        **python_memory_conf(python_memory),
        **resource_conf(placement, script=None),
    }
    spark.update({k: v for k, v in spark_conf(placement).items() if "extraJavaOptions" in k})
    spark.update(with_manager(placement))  # pins (core/pu) and reports from executors
    if any(name == "gpu" for name, _ in placement.layout.resources):
        yarn["yarn.nodemanager.resource-plugins"] = YARN_GPU
        why["devices"] = YARN_DEVICES
    return {
        "yarn-site": yarn,
        "spark": spark,
        **({"why": why} if why else {}),
        **plugin_alternative(
            placement, spark, "yarn-site", "yarn-site.xml on every NodeManager", asked
        ),
    }


YARN_DEVICES = (
    f"spark.executor.resource.gpu.amount asks YARN for {YARN_GPU} in each executor's "
    f"container: every NodeManager needs the resource plugin above, and resource-types.xml "
    f"yarn.resource-types {YARN_GPU}. YARN does not tell the executor which GPUs it got: "
    "give spark.executor.resource.gpu.discoveryScript a script that lists the container's "
    "own (Spark's examples/src/main/scripts/getGpusResources.sh, in a container that sees "
    "only them). YARN's NUMA awareness binds a container by its memory and vcores and its GPU "
    "plugin picks the GPUs apart from that: they may hang off another node"
)


def _numa_nodes(
    placement: Placement, topology: Topology, container_mb: int, why: dict[str, str]
) -> dict[str, str]:
    """The NodeManager's NUMA nodes as configuration (read-topology false), as
    NumaResourceAllocator.init reads them: node-ids a comma list, ``<N>.memory`` a long in MB
    and ``<N>.cpus`` an int in vcores (an unparsable value stops the NodeManager). It binds a
    container to the first node, round-robin, that holds all of it, and spreads it over
    several nodes (or leaves it unbound) when none does: so each node holds its planned
    executors plus the application master, wherever the round-robin puts it."""
    executors = placement.executors
    nodes = CpuSet.union(j.nodes for j in executors)
    per_node = {n: sum(1 for j in executors if n in j.nodes) for n in nodes}
    conf = {
        "yarn.nodemanager.numa-awareness.read-topology": "false",
        "yarn.nodemanager.numa-awareness.node-ids": ",".join(str(n) for n in nodes),
        # NumaResourceHandlerImpl launches every container under this numactl
        "yarn.nodemanager.numa-awareness.numactl.cmd": "/usr/bin/numactl",
    }
    short = []
    for node in nodes:
        memory = per_node[node] * container_mb + SPARK_AM_MB
        conf[f"yarn.nodemanager.numa-awareness.{node}.memory"] = str(memory)
        vcores = per_node[node] * executors[0].cores + SPARK_AM_VCORES
        conf[f"yarn.nodemanager.numa-awareness.{node}.cpus"] = str(vcores)
        size = topology.node(node).memory
        if size is not None and memory > size // MIB:
            short.append(f"node {node}: {memory} MB asked, {size // MIB} MB there")
    why["node sizes"] = (
        f"each node: its executors' containers ({container_mb} MB, heap + "
        f"overhead (+ spark.executor.pyspark.memory) rounded up to "
        f"{YARN_ALLOCATION_MB} MB) plus the application "
        f"master's ({SPARK_AM_MB} MB, {SPARK_AM_VCORES} vcore)"
    )
    if len(nodes) > 1:
        node_cpus = sum(per_node[n] * executors[0].cores + SPARK_AM_VCORES for n in nodes)
        vcores = placement.total_cores + SPARK_AM_VCORES
        why["node cpus"] = (
            f"the nodes' cpus sum to {node_cpus}, above the NodeManager's {vcores} vcores "
            f"(yarn.nodemanager.resource.cpu-vcores), on purpose: each of the {len(nodes)} "
            f"nodes has room for the application master's {SPARK_AM_VCORES} vcore, as YARN's "
            "round robin may put it on any of them; the vcores count it once, so YARN grants "
            "no more than the executors and the master"
        )
    if short:
        why["too small"] = "; ".join(short) + ": give a smaller --memory-per-executor"
    return conf


def with_manager(placement: Placement) -> dict[str, str]:
    """The plugin beside a cluster manager that binds containers itself (YARN's NUMA
    awareness, the kubelet's managers): it pins tasks (core/pu) and reports, and binds no
    executor to a node (level none there: never two binders for one executor)."""
    conf = shipped_plugin_conf(placement)
    if placement.binding is Binding.NODE:
        conf[LEVEL_KEY] = Binding.NONE.value
        conf.pop(MEM_POLICY_KEY, None)
    return conf


def plugin_policy(asked: MemPolicy | None) -> MemPolicy:
    """The memory policy the plugin gives a node-bound executor: the one asked for, else its
    default (preferred: the numactl plan's default, bind, is numactl's to give a whole
    process; local is no policy the plugin applies)."""
    return asked if asked is not None and asked is not MemPolicy.LOCAL else MemPolicy.PREFERRED


def _inside(placement: Placement, asked: MemPolicy | None) -> Placement:
    """``placement`` as the plugin realises it from inside: unbound at start, and the memory
    policy asked for, else the plugin's default (`plugin_policy`)."""
    if placement.binding is not Binding.NODE:
        return placement
    policy = plugin_policy(asked)
    return replace(bound_from_inside(placement, slice_known=True), mem_policy=policy)


def plugin_alternative(
    placement: Placement,
    sized: dict,
    manager: str,
    admin: str,
    asked: MemPolicy | None,
    extra: dict[str, str] | None = None,
) -> dict[str, dict[str, str]]:
    """At node binding, the alternative for a cluster whose managers the user cannot change:
    the plugin binds each executor from inside (``spark-plugin``), and which needs what."""
    if placement.binding is not Binding.NODE:
        return {}
    inside = _inside(placement, asked)
    conf = {
        k: v
        for k, v in sized.items()
        if not k.startswith(CONF_PREFIX)
        and "extraJavaOptions" not in k
        and k not in ("spark.plugins", "spark.jars")
    }
    conf.update({k: v for k, v in spark_conf(inside).items() if "extraJavaOptions" in k})
    conf.update(shipped_plugin_conf(inside))
    conf.update(extra or {})
    return {
        "spark-plugin": conf,
        "which": {
            f"{manager} + spark": f"needs admin rights ({admin}): the cluster manager binds each "
            "container",
            "spark-plugin": "no admin rights: the plugin binds each executor from inside as it "
            "starts; use one of the two, never both for one executor",
        },
    }


def standalone_settings(
    placement: Placement, topology: Topology, asked: MemPolicy | None = None, driver: bool = False
) -> dict[str, dict[str, str]]:
    """A standing standalone cluster (one numaspark did not start): the plugin's conf, as a
    spark-defaults.conf fragment to paste in, for the level and policy of ``placement``.
    ``driver``: the plan left a worker room for a driver in cluster deploy mode, whose size
    the fragment then sets (spark.driver.cores and .memory), so that it takes that room."""
    inside = _inside(placement, asked)
    conf = {
        "spark.executor.cores": str(placement.executors[0].cores),
        "spark.executor.memory": jvm_size(placement.executors[0].heap),
    }
    if driver:
        conf["spark.driver.cores"] = str(placement.layout.driver_cores)
        conf["spark.driver.memory"] = jvm_size(placement.layout.driver_memory)
    conf.update(
        {k: v for k, v in spark_conf(inside).items() if k == "spark.executor.extraJavaOptions"}
    )
    conf.update(shipped_plugin_conf(inside))
    conf["spark.executor.extraClassPath"] = str(jar_path())  # a worker's jar, when copied there
    conf.pop("spark.jars")  # the class paths name the jar: copy it to that path on every host
    conf.update(resource_conf(placement))  # the script: copied to that path too, as the jar
    if not placement.layout.resources:
        return {"spark-defaults.conf": conf}
    return {
        "spark-defaults.conf": conf,
        # each worker offers the host's planned devices (the file beside the others, --out)
        "worker": worker_conf(worker_resources(placement), WORKER_RESOURCES),
        "worker-resources": worker_resources(placement),
    }


def placement_to_dict(placement: Placement, binder: Binder | None = None) -> dict:
    """The JSON form of a plan (schema `PLACEMENT_SCHEMA`, docs/schemas.md): the record as its
    `Placement.__json__` stores it, with what rendering adds beside its fields: each JVM's
    binding prefix (``binder``'s; default this machine's) and a fresh plan's Spark conf (a
    loaded one keeps the conf it recorded). Read back by ``records.load(Placement, ...)``."""
    document = records.dump(placement)
    document["jvms"] = [
        _with_prefix(stored, bind_argv(jvm, binder))
        for stored, jvm in zip(document["jvms"], placement.jvms, strict=True)
    ]
    if placement.recorded_conf is None:
        document["spark_conf"] = spark_conf(placement)
    return document


def _with_prefix(stored: dict, prefix: list[str]) -> dict:
    """A JVM's stored fields with its binding prefix before its ``java_options``."""
    items = list(stored.items())
    at = list(stored).index("java_options")
    return dict([*items[:at], ("prefix", prefix), *items[at:]])


# --- dynamic allocation: executors that come and go -------------------------------------------

DA_ENABLED = "spark.dynamicAllocation.enabled"
DA_MIN, DA_MAX = "spark.dynamicAllocation.minExecutors", "spark.dynamicAllocation.maxExecutors"
DA_INITIAL = "spark.dynamicAllocation.initialExecutors"
INSTANCES = "spark.executor.instances"
SHUFFLE_TRACKING = "spark.dynamicAllocation.shuffleTracking.enabled"
SHUFFLE_SERVICE = "spark.shuffle.service.enabled"


@dataclass(frozen=True)
class DynamicAllocation:
    """A user's dynamic-allocation settings, as Spark reads them (ExecutorAllocationManager,
    Utils.getDynamicAllocationInitialExecutors): executors between ``minimum`` (Spark's
    default 0) and ``maximum`` (None: unset, Spark's Int.MaxValue); it starts with the most of
    minExecutors, initialExecutors and spark.executor.instances (``instances``, the user's
    own; one below minExecutors is ignored, and Spark warns)."""

    minimum: int = 0
    maximum: int | None = None
    initial: int = 0
    instances: int | None = None

    @classmethod
    def of(cls, conf: dict[str, str]) -> DynamicAllocation | None:
        """The settings in ``conf`` when dynamic allocation is on there, else None."""
        if conf.get(DA_ENABLED, "false").strip().lower() != "true":
            return None
        maximum = _count(conf.get(DA_MAX))
        return cls(
            minimum=_count(conf.get(DA_MIN)) or 0,
            maximum=None if maximum is None or maximum >= 2**31 - 1 else maximum,
            initial=_count(conf.get(DA_INITIAL)) or 0,
            instances=_count(conf.get(INSTANCES)),
        )

    @property
    def at_start(self) -> int:
        """The executors Spark asks for as the application starts (0: none until a job)."""
        return max(self.minimum, self.initial, self.instances or 0)

    def at_most(self, planned: int) -> int:
        """The most executors that may run at once: maxExecutors, else the ``planned`` count
        (unset, Spark asks for as many as the tasks need: the plan is sized for its own)."""
        return self.maximum if self.maximum is not None else planned


def _count(value: str | None) -> int | None:
    try:
        return int(value.strip()) if value is not None and value.strip() else None
    except ValueError:
        return None


def executors_per_node(placement: Placement, at_most: int | None = None) -> dict[int, int]:
    """The most executors that may share each NUMA node the plan puts executors on (an
    executor wider than a node counts on each of its nodes)."""
    executors = placement.executors
    counts: dict[int, int] = {}
    for jvm in executors:
        for node in jvm.nodes:
            counts[node] = counts.get(node, 0) + 1
    return {n: most_sharing(c, len(executors), at_most) for n, c in counts.items()}


def active_processors(cpus: int, cores: int, sharing: int) -> int:
    """-XX:ActiveProcessorCount of a node-bound executor of ``cores``: its node's (or slice's)
    ``cpus`` divided by the most executors that may share it, never fewer than its cores."""
    return max(cores, cpus // max(1, sharing))
