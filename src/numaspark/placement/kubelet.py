"""A `Placement` for Kubernetes: the kubelet's configuration, Spark's conf and the executor pod.

Each rule below is one the kubelet enforces in its own code, not in
``pkg/kubelet/apis/config/validation`` (a file that breaks them passes that
package and then stops the kubelet, or fails every executor pod):

- the static CPU Manager needs a CPU reservation above zero
  (``cpumanager.NewManager``; ``NewStaticPolicy`` then takes exactly that many);
- the Static Memory Manager needs ``reservedMemory`` over the NUMA nodes that sums to
  kubeReserved + systemReserved + the hard eviction threshold for memory
  (``memorymanager.validateReservedMemory``), whose default of 100Mi counts when unset;
- ``full-pcpus-only`` admits only CPU requests that are whole multiples of the threads per
  core (``staticPolicy.Allocate``: SMTAlignmentError);
- exclusive CPUs go only to containers of Guaranteed pods with integer CPU requests
  (``staticPolicy.guaranteedCPUs``), and a pod is Guaranteed only when every container,
  init containers included, has requests equal to limits for CPU and memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from numaspark.errors import PlacementError
from numaspark.placement.model import Binding, JvmPlacement, MemPolicy, Placement
from numaspark.placement.plugin import DEFAULT_LOCK_DIR, JAR_NAME
from numaspark.placement.render import (
    plugin_alternative,
    python_memory_conf,
    spark_conf,
    with_manager,
)
from numaspark.placement.resources import K8S_VENDOR, resource_conf
from numaspark.topology import CpuSet, Topology
from numaspark.units import MIB, jvm_size

KUBELET_API = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}
# the plugin's jar inside the image the pods run: the image must carry it there
IMAGE_JAR = f"/opt/numaspark/{JAR_NAME}"
EXECUTOR_CONTAINER = "spark-executor"
IMAGE_KEY = "spark.kubernetes.container.image"  # the driver and executor pods' image
POD_TEMPLATE = "executor-pod-template.yaml"  # beside spark-defaults.conf (plan --out)
PLUGIN_POD_TEMPLATE = "executor-pod-template.plugin.yaml"  # beside spark-defaults.plugin.conf
# what each node keeps back from pods under the Static Memory Manager, and how it splits into
# the three figures the kubelet sums; the planner's auto heap already leaves 10% of a node
NODE_RESERVED_MIB = 1024
KUBE_RESERVED_MIB = 512
EVICTION_MEMORY_MIB = 100  # the kubelet's default memory.available; rendered so it is seen
# the kubelet's other hard eviction defaults (pkg/kubelet/apis/config/v1beta1/defaults_linux.go):
# a map that names memory.available alone would drop them
EVICTION_DEFAULTS = {
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
}


@dataclass(frozen=True)
class CpuReservation:
    """reservedSystemCPUs, and what it left each executor pod."""

    cpus: CpuSet  # reservedSystemCPUs
    from_executors: CpuSet  # the part of it the plan had given to executors
    planned: int  # CPUs each executor pod would ask for with no reservation
    request: int  # CPUs each asks for: whole cores under full-pcpus-only, fitting what is left
    why: str


def threads_per_core(topology: Topology) -> int:
    """The kubelet's CPUsPerCore: hardware threads over cores."""
    return max(1, len(topology.online_cpus) // max(1, len(topology.cores)))


def k8s_settings(
    placement: Placement,
    topology: Topology,
    asked: MemPolicy | None = None,
    plugin_jar: str | None = None,
    image: str | None = None,
    python_memory: int = 0,
) -> dict[str, dict]:
    """Kubelet CPU/Topology/Memory Manager policies, Spark's conf and the executor pod
    template for the plan; ``plugin_jar``: a URL pods fetch the plugin from (default: the
    image's ``IMAGE_JAR``); ``image``: spark.kubernetes.container.image; ``python_memory``:
    each executor's spark.executor.pyspark.memory, which Spark adds to the pod's memory."""
    first = placement.executors[0]
    # Kubernetes counts hardware threads: a core-bound executor asks for all of its cores'
    # threads, so that it gets whole cores; its task slots stay its cores
    per_slot = len(first.cpus) // first.cores if placement.binding is Binding.CORE else 1
    planned = len(first.cpus) if placement.binding in (Binding.CORE, Binding.PU) else first.cores
    kubelet, request, cost = _kubelet_config(placement, topology, planned, python_memory)
    cores = max(1, request // per_slot)
    spark = _spark_conf(placement, cores, request, python_memory, image, plugin_jar)
    if _asks_for_gpus(placement):
        cost["devices"] = K8S_DEVICES
    inside = _plugin_settings(placement, spark, planned, asked, plugin_jar)
    cost["plugin jar"] = f"spark.jars {spark['spark.jars']}: " + (
        "the URL you gave, fetched by every pod"
        if plugin_jar
        else f"a path inside the image: the image must contain {IMAGE_JAR} (or give --plugin-jar URL)"
    )
    return {
        "kubelet": kubelet,
        "spark": spark,
        "executor-pod-template": executor_pod_template(request, _pod_mib(first, python_memory)),
        "cost": cost,
        **inside,
    }


def _kubelet_config(
    placement: Placement, topology: Topology, planned: int, python_memory: int
) -> tuple[dict[str, object], int, dict[str, str]]:
    """The kubelet's managers for the plan; the CPUs each executor pod then asks for (fewer
    than ``planned`` where the CPU reservation takes some); what they cost, by what."""
    kubelet: dict[str, object] = dict(KUBELET_API)
    cost: dict[str, str] = {}
    if placement.binding is Binding.NONE:
        kubelet["cpuManagerPolicy"] = "none"
        return kubelet, planned, cost
    kubelet["cpuManagerPolicy"] = "static"
    if topology.smt:
        # whole physical cores only, at every level: no pod shares a core's SMT siblings
        kubelet["cpuManagerPolicyOptions"] = {"full-pcpus-only": "true"}
    reservation = cpu_reservation(placement, topology, planned)
    kubelet["reservedSystemCPUs"] = str(reservation.cpus)
    cost["CPU reservation"] = reservation.why
    fits_one_node = all(len(j.nodes) == 1 for j in placement.executors)
    kubelet["topologyManagerPolicy"] = "single-numa-node" if fits_one_node else "restricted"
    kubelet["topologyManagerScope"] = "pod"
    if placement.mem_policy is MemPolicy.BIND:
        kubelet.update(memory_reservation(topology))
        cost["memory reservation"] = _memory_cost(placement, topology, python_memory)
    return kubelet, reservation.request, cost


def _spark_conf(
    placement: Placement,
    cores: int,
    request: int,
    python_memory: int,
    image: str | None,
    plugin_jar: str | None,
) -> dict[str, str]:
    """Spark's conf for executor pods of ``cores`` task slots that ask for ``request`` CPUs."""
    first = placement.executors[0]
    spark: dict[str, str] = {
        "spark.executor.instances": str(len(placement.executors)),
        "spark.executor.cores": str(cores),
        "spark.kubernetes.executor.request.cores": str(request),
        "spark.kubernetes.executor.limit.cores": str(request),
        "spark.executor.memory": jvm_size(first.heap),
        "spark.executor.memoryOverhead": jvm_size(first.overhead),
        **python_memory_conf(python_memory),
        "spark.kubernetes.executor.podTemplateFile": POD_TEMPLATE,
        "spark.kubernetes.executor.podTemplateContainerName": EXECUTOR_CONTAINER,
    }
    if image:
        spark[IMAGE_KEY] = image
    spark.update(resource_conf(placement, script=None))
    if _asks_for_gpus(placement):
        spark["spark.executor.resource.gpu.vendor"] = K8S_VENDOR
    spark.update({k: v for k, v in spark_conf(placement).items() if "extraJavaOptions" in k})
    spark.update(jar_in_pods(with_manager(placement), plugin_jar))
    return spark


def _asks_for_gpus(placement: Placement) -> bool:
    return any(name == "gpu" for name, _ in placement.layout.resources)


def _plugin_settings(
    placement: Placement,
    spark: dict[str, str],
    planned: int,
    asked: MemPolicy | None,
    plugin_jar: str | None,
) -> dict[str, dict]:
    """At node binding, the plugin's alternative to the kubelet's managers
    (render.plugin_alternative), with the executor pod template its Spark conf names; empty at
    other bindings."""
    # the plugin's node slots are host-local files: every executor pod mounts one hostPath
    volume = "spark.kubernetes.executor.volumes.hostPath.numaspark-locks"
    locks = {f"{volume}.mount.path": DEFAULT_LOCK_DIR, f"{volume}.options.path": DEFAULT_LOCK_DIR}
    # the plugin's alternative has no CPU Manager to reserve for: the plan's own sizes
    sized = {
        **spark,
        "spark.executor.cores": str(placement.executors[0].cores),
        "spark.kubernetes.executor.request.cores": str(planned),
        "spark.kubernetes.executor.limit.cores": str(planned),
    }
    inside = plugin_alternative(
        placement, sized, "kubelet", "the kubelet's configuration on every node", asked, locks
    )
    if "spark-plugin" in inside:  # no kubelet managers there: a template for the node's name only
        conf = {
            k: v
            for k, v in inside["spark-plugin"].items()
            if not k.startswith("spark.kubernetes.executor.podTemplate")
        }
        conf["spark.kubernetes.executor.podTemplateFile"] = PLUGIN_POD_TEMPLATE
        conf["spark.kubernetes.executor.podTemplateContainerName"] = EXECUTOR_CONTAINER
        inside["spark-plugin"] = jar_in_pods(conf, plugin_jar)
        inside["spark-plugin-pod-template"] = named_pod_template()
    return inside


K8S_DEVICES = (
    f"each executor pod asks for {K8S_VENDOR}/gpu (spark.executor.resource.gpu.vendor): "
    "the nodes need NVIDIA's device plugin, and the kubelet's Topology Manager at "
    "single-numa-node (bound plans) gives a pod GPUs of the node its CPUs are on. Kubernetes "
    "does not tell the executor which GPUs it got: give spark.executor.resource.gpu."
    "discoveryScript a script in the image that lists the pod's own (Spark's "
    "examples/src/main/scripts/getGpusResources.sh)"
)


def cpu_reservation(placement: Placement, topology: Topology, planned: int) -> CpuReservation:
    """reservedSystemCPUs for the static CPU Manager, which refuses to start without one: the
    plan's spare CPUs (whole cores of them under full-pcpus-only, which also withholds a
    reserved CPU's siblings), else one core per socket taken from the executors, who then
    ask for fewer CPUs (whole cores where SMT is on) so that each still fits its node."""
    step = threads_per_core(topology) if topology.smt else 1
    used = CpuSet.union(j.cpus for j in placement.executors)
    spare = topology.allowed_cpus - used
    if step > 1:
        spare = CpuSet.union(
            cpus
            for _, cpus in topology.allowed_cores()
            if cpus.issubset(spare) and len(cpus) == step
        )
    reserved = spare if spare else _core_per_socket(topology)
    taken = reserved & used
    aligned = max(step, planned // step * step)
    request = min(aligned, _fits(placement, topology, reserved, step))
    if request < step:
        raise PlacementError(
            f"no executor fits beside the kubelet's CPU reservation ({reserved}): "
            "plan fewer executors per node"
        )
    why = f"reservedSystemCPUs {reserved}: " + (
        "the plan's spare CPUs"
        if not taken
        else "one core per socket, as the executors used every CPU"
    )
    if request == planned:
        why += "; the executors lose none"
    else:
        lost = (planned - request) * len(placement.executors)
        why += (
            f"; each executor pod asks for {request} CPUs instead of {planned}, {lost} fewer "
            "in all" + (f" (whole cores of {step} threads: full-pcpus-only)" if step > 1 else "")
        )
    return CpuReservation(reserved, taken, planned, request, why)


def _core_per_socket(topology: Topology) -> CpuSet:
    """The lowest-numbered allowed core of each package, all its threads (the kubelet's own
    choice, takeByTopology, also starts from the low-numbered cores)."""
    first: dict[int | None, CpuSet] = {}
    for core, cpus in topology.allowed_cores():
        first.setdefault(core.package, cpus)
    return CpuSet.union(first.values())


def _fits(placement: Placement, topology: Topology, reserved: CpuSet, step: int) -> int:
    """The most CPUs, a multiple of ``step``, each executor can ask for once ``reserved`` is
    withheld: per node for executors on one node, over all nodes for the rest."""
    executors = placement.executors
    left = {n.os_index: len(topology.allowed_cpus_of(n) - reserved) for n in topology.cpu_nodes}
    most = sum(left.values()) // len(executors)
    for node, free in left.items():
        on_node = sum(1 for j in executors if j.nodes == CpuSet([node]))
        if on_node:
            most = min(most, free // on_node)
    return most // step * step


def memory_reservation(topology: Topology) -> dict[str, object]:
    """reservedMemory per NUMA node, and the three figures it must sum to, all explicit."""
    nodes = topology.cpu_nodes
    total = NODE_RESERVED_MIB * len(nodes)
    system = total - KUBE_RESERVED_MIB - EVICTION_MEMORY_MIB
    return {
        "kubeReserved": {"memory": f"{KUBE_RESERVED_MIB}Mi"},
        "systemReserved": {"memory": f"{system}Mi"},
        "evictionHard": {"memory.available": f"{EVICTION_MEMORY_MIB}Mi", **EVICTION_DEFAULTS},
        "memoryManagerPolicy": "Static",
        "reservedMemory": [
            {"numaNode": n.os_index, "limits": {"memory": f"{NODE_RESERVED_MIB}Mi"}} for n in nodes
        ],
    }


def _pod_mib(jvm: JvmPlacement, python_memory: int) -> int:
    """An executor pod's memory as Spark asks it: heap + overhead + pyspark.memory, in MiB."""
    return jvm.heap // MIB + jvm.overhead // MIB + python_memory // MIB


def _memory_cost(placement: Placement, topology: Topology, python_memory: int = 0) -> str:
    pod_mib = _pod_mib(placement.executors[0], python_memory)
    text = (
        f"reservedMemory {NODE_RESERVED_MIB}Mi on each node = kubeReserved "
        f"{KUBE_RESERVED_MIB}Mi + systemReserved + evictionHard {EVICTION_MEMORY_MIB}Mi"
    )
    short = []
    for node in topology.cpu_nodes:
        count = sum(1 for j in placement.executors if node.os_index in j.nodes)
        if node.memory is not None and count * pod_mib > node.memory // MIB - NODE_RESERVED_MIB:
            short.append(
                f"node {node.os_index} holds {node.memory // MIB - NODE_RESERVED_MIB}Mi "
                f"for pods, its executors ask {count * pod_mib}Mi"
            )
    if short:
        text += (
            "; " + "; ".join(short) + ": the Memory Manager will not admit them, give a "
            "smaller --memory-per-executor"
        )
    return text


# The plugin names the host it reports from by this variable when it is set: in a pod the
# kernel's hostname is the pod's name, and numaspark keeps what it learns of a host (its
# topology, spark/learned_topology.py) by the node's name. The downward API gives it.
NODE_NAME_ENV = {
    "name": "NUMASPARK_NODE_NAME",
    "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
}


def executor_pod_template(cpus: int, memory_mib: int) -> dict[str, object]:
    """The executor pod: its one container Guaranteed with whole CPUs (Spark sets the same
    figures from its conf; a sidecar or init container added here must match that too), told
    its node's name."""
    resources = {"cpu": str(cpus), "memory": f"{memory_mib}Mi"}
    container = {
        "name": EXECUTOR_CONTAINER,
        "env": [NODE_NAME_ENV],
        "resources": {"requests": dict(resources), "limits": dict(resources)},
    }
    return {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [container]}}


def named_pod_template() -> dict[str, object]:
    """The plugin alternative's executor pod: Spark's own sizes (no kubelet manager to satisfy),
    only the node's name added."""
    container = {"name": EXECUTOR_CONTAINER, "env": [NODE_NAME_ENV]}
    return {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [container]}}


def jar_in_pods(conf: dict[str, str], url: str | None) -> dict[str, str]:
    """The plugin's jar where a pod can read it: the URL given, which the driver adds to its
    class path as it starts, or the image's path (local://, never this machine's)."""
    if "spark.jars" not in conf:
        return conf
    conf = dict(conf)
    conf["spark.jars"] = url or f"local://{IMAGE_JAR}"
    if url:
        conf.pop("spark.driver.extraClassPath", None)
    else:
        conf["spark.driver.extraClassPath"] = IMAGE_JAR
    return conf


def run_pods(placement: Placement) -> tuple[dict[str, str], dict[str, object]]:
    """What ``run --master k8s://`` gives Spark for its executor pods, and their pod template
    (whose path the caller adds, once written): each pod Guaranteed (CPU request = limit in
    whole CPUs; Spark sets memory request = limit itself), told its node's name; at node
    binding the plugin's lock directory mounted from the host, so that pods sharing a host
    share its node slots (the plugin's way, needing no admin rights)."""
    first = placement.executors[0]
    cpus = len(first.cpus) if placement.binding in (Binding.CORE, Binding.PU) else first.cores
    conf = {
        "spark.kubernetes.executor.request.cores": str(cpus),
        "spark.kubernetes.executor.limit.cores": str(cpus),
        "spark.kubernetes.executor.podTemplateContainerName": EXECUTOR_CONTAINER,
    }
    if placement.binding is Binding.NODE:
        volume = "spark.kubernetes.executor.volumes.hostPath.numaspark-locks"
        conf[f"{volume}.mount.path"] = DEFAULT_LOCK_DIR
        conf[f"{volume}.options.path"] = DEFAULT_LOCK_DIR
    return conf, named_pod_template()
