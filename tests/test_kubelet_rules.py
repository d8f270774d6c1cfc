"""The rules a kubelet enforces on the files `plan --target k8s --out DIR` writes, one test
each, read back from the files as a person would apply them.

None of these rules lives in pkg/kubelet/apis/config/validation: a file that breaks them
passes that package and then stops the kubelet, or fails every executor pod. Each test names
the documentation page and the kubelet function (kubernetes/kubernetes) that enforces its rule.
"""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
import yaml
from conftest import topology_file

from numaspark.placement import Binding, Layout, Platform, plan, platform_files
from numaspark.placement.kubelet import (
    EXECUTOR_CONTAINER,
    IMAGE_JAR,
    PLUGIN_POD_TEMPLATE,
    POD_TEMPLATE,
    threads_per_core,
)
from numaspark.placement.plugin import DEFAULT_LOCK_DIR, jar_path
from numaspark.topology import CpuSet, load_synthetic, load_xml

# a Kubernetes quantity (k8s.io/apimachinery resource.Quantity) as the files write them
_QUANTITY = re.compile(r"^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T|m)?$")
_UNITS = {
    None: 1,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "m": Fraction(1, 1000),
}
# evictionHard memory.available when the map leaves it out (pkg/kubelet/apis/config/v1beta1/
# defaults_linux.go DefaultEvictionHard)
DEFAULT_EVICTION_MEMORY = "100Mi"


def quantity(text: object) -> Fraction:
    match = _QUANTITY.match(str(text))
    assert match, f"not a quantity the files should write: {text!r}"
    return Fraction(match.group(1)) * _UNITS[match.group(2)]


@pytest.fixture(scope="module")
def xeon24():
    return load_xml(topology_file("24em64t-2n6c2t-pci.xml"))  # 2 nodes, 6 cores, SMT 2


@pytest.fixture(scope="module")
def four_nodes():
    return load_xml(topology_file("96em64t-4n4d3ca2co-pci.xml"))


@pytest.fixture(scope="module")
def no_smt():
    return load_synthetic("pack:2 numa:1 core:6 pu:1")


def files_for(topology, layout, binding, tmp_path, **options) -> dict:
    """The files as written, parsed back: kubelet config, pod template, Spark conf(s)."""
    placement = plan(topology, layout, binding)
    settings = Platform.K8S.settings(placement, topology, None, **options)
    files = platform_files(Platform.K8S, settings, tmp_path)
    confs = {
        name: dict(
            line.split(None, 1)
            for line in text.splitlines()
            if line.strip() and not line.startswith("#")
        )
        for name, text in files.items()
        if name.endswith(".conf")
    }
    plugin_pod = files.get(PLUGIN_POD_TEMPLATE)
    return {
        "kubelet": yaml.safe_load(files["kubelet-config.yaml"]),
        "pod": yaml.safe_load(files[POD_TEMPLATE]),
        "placement": placement,
        "plugin_pod": yaml.safe_load(plugin_pod) if plugin_pod else None,
        "settings": settings,
        **confs,
    }


LAYOUTS = [  # spare CPUs left; every CPU used (a reservation taken from executors); one node
    pytest.param(Layout(executors=4, cores_per_executor=2), Binding.CORE, id="core-spare"),
    pytest.param(Layout(executors_per_node=1), Binding.NODE, id="node-full"),
    pytest.param(Layout(executors_per_node=2), Binding.NODE, id="node-two-per-node"),
    pytest.param(Layout(executors=4, cores_per_executor=3), Binding.PU, id="pu-odd"),
]


@pytest.mark.parametrize(("layout", "binding"), LAYOUTS)
@pytest.mark.parametrize("machine", ["xeon24", "four_nodes", "no_smt"])
def test_reserved_memory_sums_to_kube_system_reserved_and_hard_eviction(
    machine, layout, binding, tmp_path, request
):
    """Docs: https://kubernetes.io/docs/tasks/administer-cluster/memory-manager/#reserved-memory-flag
    ("sum(reserved-memory(i)) = kube-reserved + system-reserved + eviction-threshold").
    Kubelet: pkg/kubelet/cm/memorymanager/memory_manager.go validateReservedMemory compares the
    reservedMemory sum with GetNodeAllocatableReservation (node_container_manager_linux.go:
    kubeReserved + systemReserved + hardEvictionReservation of memory.available, 100Mi when
    unset) and the kubelet does not start when they differ; getTotalMemoryTypeReserved
    refuses a numaNode the machine does not have."""
    topology = request.getfixturevalue(machine)
    kubelet = files_for(topology, layout, binding, tmp_path)["kubelet"]
    assert kubelet["memoryManagerPolicy"] == "Static"  # node/core/pu bind memory by default
    reserved = sum(quantity(r["limits"]["memory"]) for r in kubelet["reservedMemory"])
    eviction = kubelet.get("evictionHard", {}).get("memory.available", DEFAULT_EVICTION_MEMORY)
    allocatable = (
        quantity(kubelet.get("kubeReserved", {}).get("memory", 0))
        + quantity(kubelet.get("systemReserved", {}).get("memory", 0))
        + quantity(eviction)
    )
    assert reserved == allocatable > 0
    assert {r["numaNode"] for r in kubelet["reservedMemory"]} <= {
        n.os_index for n in topology.nodes
    }
    # all three written out: the default threshold is seen, and the others the kubelet would
    # default are kept (a map naming memory.available alone drops them)
    assert {"kubeReserved", "systemReserved", "evictionHard"} <= set(kubelet)
    assert set(kubelet["evictionHard"]) >= {
        "memory.available",
        "nodefs.available",
        "imagefs.available",
    }


@pytest.mark.parametrize(("layout", "binding"), LAYOUTS)
@pytest.mark.parametrize("machine", ["xeon24", "four_nodes", "no_smt"])
def test_static_cpu_manager_has_a_cpu_reservation_and_the_plan_says_its_cost(
    machine, layout, binding, tmp_path, request
):
    """Docs: https://kubernetes.io/docs/tasks/administer-cluster/cpu-management-policies/#static-policy
    (the static policy needs a CPU reservation greater than zero).
    Kubelet: pkg/kubelet/cm/cpumanager/cpu_manager.go NewManager ("the static policy requires
    systemreserved.cpu + kubereserved.cpu to be greater than zero"; reservedSystemCPUs sets
    systemReserved.cpu to its size, cmd/kubelet/app/server.go) and policy_static.go
    NewStaticPolicy (takes exactly that many CPUs). The executor pods must then still fit
    beside it: each node's CPUs less the reservation hold its executors' requests (the
    single-numa-node Topology Manager admits a pod only on one node), and the plan says what
    the executors lost."""
    topology = request.getfixturevalue(machine)
    written = files_for(topology, layout, binding, tmp_path)
    kubelet, spark, placement = (
        written["kubelet"],
        written["spark-defaults.conf"],
        written["placement"],
    )
    assert kubelet["cpuManagerPolicy"] == "static"
    reserved = CpuSet.parse(kubelet.get("reservedSystemCPUs", ""))
    cpu_reserved = quantity(kubelet.get("kubeReserved", {}).get("cpu", 0)) + quantity(
        kubelet.get("systemReserved", {}).get("cpu", 0)
    )
    assert len(reserved) > 0 or cpu_reserved > 0
    assert reserved.issubset(topology.online_cpus)
    asked = int(spark["spark.kubernetes.executor.request.cores"])
    for node in topology.cpu_nodes:
        on_node = sum(1 for j in placement.executors if j.nodes == CpuSet([node.os_index]))
        assert on_node * asked <= len(topology.allowed_cpus_of(node) - reserved)
    cost = written["settings"]["cost"]["CPU reservation"]
    used = CpuSet.union(j.cpus for j in placement.executors)
    planned = (
        len(placement.executors[0].cpus)
        if binding is not Binding.NODE
        else placement.executors[0].cores
    )
    if reserved & used:
        assert "one core per socket" in cost
    if asked < planned:
        assert f"asks for {asked} CPUs instead of {planned}" in cost
    else:
        assert "lose none" in cost


@pytest.mark.parametrize(("layout", "binding"), LAYOUTS)
@pytest.mark.parametrize("machine", ["xeon24", "four_nodes", "no_smt"])
def test_full_pcpus_only_where_smt_is_on_and_requests_are_whole_cores(
    machine, layout, binding, tmp_path, request
):
    """Docs: https://kubernetes.io/docs/tasks/administer-cluster/cpu-management-policies/#static-policy-options
    (full-pcpus-only: a pod whose CPU request is not a multiple of the threads per core fails
    with SMTAlignmentError). Kubelet: pkg/kubelet/cm/cpumanager/policy_options.go
    (FullPCPUsOnlyOption) and policy_static.go staticPolicy.Allocate (SMTAlignmentError when
    numCPUs % CPUsPerCore != 0; since 1.32 also when the request exceeds the free whole
    cores, the reserved CPUs' siblings withheld). On at every binding level, not only core."""
    topology = request.getfixturevalue(machine)
    written = files_for(topology, layout, binding, tmp_path)
    kubelet, spark = written["kubelet"], written["spark-defaults.conf"]
    step = threads_per_core(topology)
    asked = int(spark["spark.kubernetes.executor.request.cores"])
    if topology.smt:
        assert kubelet["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true"}
        assert step > 1 and asked % step == 0
        reserved = CpuSet.parse(kubelet["reservedSystemCPUs"])
        for cpu in reserved:  # whole cores reserved: none of a reserved CPU's siblings is lost
            assert topology.siblings(cpu).issubset(reserved)
    else:
        assert "cpuManagerPolicyOptions" not in kubelet
    assert (
        spark["spark.kubernetes.executor.limit.cores"]
        == spark["spark.kubernetes.executor.request.cores"]
    )


@pytest.mark.parametrize(("layout", "binding"), LAYOUTS)
def test_every_container_of_the_executor_pod_is_guaranteed_with_whole_cpus(
    layout, binding, tmp_path, xeon24
):
    """Docs: https://kubernetes.io/docs/concepts/workloads/pods/pod-qos/#guaranteed (every
    container, init containers included, has CPU and memory requests equal to limits) and
    https://kubernetes.io/docs/tasks/administer-cluster/cpu-management-policies/#static-policy
    (exclusive CPUs only for Guaranteed pods' containers with integer CPU requests).
    Kubelet: pkg/apis/core/v1/helper/qos GetPodQOS, and pkg/kubelet/cm/cpumanager/
    policy_static.go guaranteedCPUs (0, the shared pool, unless Guaranteed and integer).
    The template agrees with what Spark sets on the executor container from its conf, and
    spark-defaults.conf names it by a path that exists. By design (kubelet.py
    executor_pod_template) the template has one container, the executor, and no init or
    sidecar container: every container list the pod spec has is checked, so one added there
    is held to the same rule, and the executor is found among them."""
    written = files_for(xeon24, layout, binding, tmp_path)
    pod, spark = written["pod"], written["spark-defaults.conf"]
    lists = [key for key in pod["spec"] if key.endswith(("containers", "Containers"))]
    containers = [c for key in lists for c in pod["spec"][key]]
    assert containers and "containers" in lists
    assert EXECUTOR_CONTAINER in {c["name"] for c in containers}
    for container in containers:
        resources = container["resources"]
        for kind in ("cpu", "memory"):
            assert resources["requests"][kind] == resources["limits"][kind], (container, kind)
        cpus = quantity(resources["requests"]["cpu"])
        assert cpus.denominator == 1 and cpus > 0, container
    executor = next(
        c
        for c in pod["spec"]["containers"]
        if c["name"] == spark["spark.kubernetes.executor.podTemplateContainerName"]
    )
    assert quantity(executor["resources"]["requests"]["cpu"]) == int(
        spark["spark.kubernetes.executor.request.cores"]
    )
    memory_mib = quantity(
        spark["spark.executor.memory"].replace("g", "Gi").replace("m", "Mi")
    ) + quantity(spark["spark.executor.memoryOverhead"].replace("g", "Gi").replace("m", "Mi"))
    assert quantity(executor["resources"]["requests"]["memory"]) == memory_mib
    template = spark["spark.kubernetes.executor.podTemplateFile"]
    assert template == str(tmp_path.resolve() / POD_TEMPLATE)


def test_the_plugin_jar_is_where_pods_read_it(tmp_path, xeon24):
    """Docs: https://spark.apache.org/docs/latest/running-on-kubernetes.html#dependency-management
    (local:// is a path inside the image; anything else is fetched by URL or uploaded). A path
    of the machine that ran `plan` is in no conf, not even the plugin's alternative; the
    docs/clusters.md says the image must carry the jar."""
    layout = Layout(executors_per_node=1)
    here = str(jar_path())
    image = files_for(xeon24, layout, Binding.NODE, tmp_path / "image")
    for name in ("spark-defaults.conf", "spark-defaults.plugin.conf"):
        conf = image[name]
        assert conf["spark.jars"] == f"local://{IMAGE_JAR}"
        assert conf["spark.driver.extraClassPath"] == IMAGE_JAR
        assert not any(here in value for value in conf.values()), name
    url = "https://repo.example.org/numaspark-affinity.jar"
    fetched = files_for(xeon24, layout, Binding.NODE, tmp_path / "url", plugin_jar=url)
    for name in ("spark-defaults.conf", "spark-defaults.plugin.conf"):
        assert fetched[name]["spark.jars"] == url
        assert "spark.driver.extraClassPath" not in fetched[name]  # the driver adds spark.jars
    assert IMAGE_JAR in image["settings"]["cost"]["plugin jar"]


def test_the_plugins_alternative_keeps_its_lock_directory_and_the_plan_sizes(tmp_path, xeon24):
    """The plugin binds from inside, with no CPU Manager: every executor pod mounts the host's
    lock directory (node slots are host-local files), its sizes are the plan's, not shrunk
    for a kubelet reservation it does not need, and its pod template is not the kubelet's:
    it only tells the executor its node's name (below)."""
    written = files_for(xeon24, Layout(executors_per_node=1), Binding.NODE, tmp_path)
    inside = written["spark-defaults.plugin.conf"]
    volume = "spark.kubernetes.executor.volumes.hostPath.numaspark-locks"
    assert inside[f"{volume}.mount.path"] == inside[f"{volume}.options.path"] == DEFAULT_LOCK_DIR
    assert inside["spark.kubernetes.executor.request.cores"] == "12"
    assert written["spark-defaults.conf"]["spark.kubernetes.executor.request.cores"] == "10"
    assert inside["spark.kubernetes.executor.podTemplateFile"] == str(
        (tmp_path / PLUGIN_POD_TEMPLATE).resolve()
    )
    (container,) = written["plugin_pod"]["spec"]["containers"]
    assert "resources" not in container  # Spark's own sizes: no kubelet manager to satisfy


@pytest.mark.parametrize("binding", [Binding.NODE, Binding.CORE])
def test_each_executor_pod_is_told_its_nodes_name(tmp_path, xeon24, binding):
    """Docs: https://kubernetes.io/docs/concepts/workloads/pods/downward-api/ (spec.nodeName as
    an environment variable). In a pod the kernel's hostname is the pod's name; the plugin
    reports from NUMASPARK_NODE_NAME when it is set (PlacementReporter.hostname), so what
    numaspark learns of a host (spark/learned_topology.py) is kept under the node, not under each pod.
    Both templates give it: the kubelet path's and, at node binding, the plugin's."""
    written = files_for(xeon24, Layout(executors_per_node=1), binding, tmp_path)
    pods = [written["pod"]] + ([written["plugin_pod"]] if binding is Binding.NODE else [])
    for pod in pods:
        (container,) = pod["spec"]["containers"]
        assert {
            "name": "NUMASPARK_NODE_NAME",
            "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
        } in container["env"]
    assert (written["plugin_pod"] is None) == (binding is not Binding.NODE)
