"""What runs the executors a plan places (``plan --target``), and the files a person applies
there (``plan --out DIR``): yarn-site.xml, kubelet-config.yaml, spark-defaults.conf, the
executor pod template, and a README.txt that says which needs admin rights."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

import yaml

from numaspark.errors import UsageError
from numaspark.placement.kubelet import PLUGIN_POD_TEMPLATE, POD_TEMPLATE, k8s_settings
from numaspark.placement.model import Binding, JvmPlacement, MemPolicy, Placement
from numaspark.placement.render import (
    numactl_argv,
    plugin_policy,
    spark_defaults_text,
    standalone_settings,
    yarn_settings,
)
from numaspark.placement.resources import DISCOVERY_SCRIPT, WORKER_RESOURCES
from numaspark.topology import Topology
from numaspark.units import jvm_size

PLUGIN_CONF = "spark-defaults.plugin.conf"  # the alternative with no admin rights (node binding)


class Platform(str, Enum):
    """What runs the executors a plan places (``plan --target``): Spark's own standalone
    cluster, or YARN or Kubernetes with their settings."""

    SPARK = "spark"
    STANDALONE = "standalone"  # a standing standalone cluster numaspark did not start
    YARN = "yarn"
    K8S = "k8s"

    def settings(
        self,
        placement: Placement,
        topology: Topology,
        asked: MemPolicy | None = None,
        plugin_jar: str | None = None,
        image: str | None = None,
        python_memory: int = 0,
        driver: bool = False,
    ) -> dict[str, dict]:
        """The platform's settings for ``placement`` (``asked``: the memory policy the user
        gave, if any; ``plugin_jar``, ``image``: Kubernetes only; ``python_memory``: each
        executor's spark.executor.pyspark.memory, in YARN's and Kubernetes' sizes;
        ``driver``: the plan left a standalone worker room for a driver in cluster deploy
        mode); none for Spark's own."""
        if self is Platform.K8S:
            return k8s_settings(placement, topology, asked, plugin_jar, image, python_memory)
        if self is Platform.YARN:
            return yarn_settings(placement, topology, asked, python_memory)
        if self is Platform.STANDALONE:
            return standalone_settings(placement, topology, asked, driver)
        return {}

    def applied(
        self, placement: Placement, settings: dict[str, dict], asked: MemPolicy | None = None
    ) -> tuple[Applied, ...]:
        """Each way this platform places the executors of ``placement``, as its realiser
        applies it (``settings``: this platform's, `settings`): numactl's prefixes for the
        JVMs numaspark starts; the plugin from inside on a standalone cluster; YARN's
        NodeManager, which interleaves; the kubelet's managers; and where the plan offers it,
        the plugin's alternative (spark-defaults.plugin.conf) under its own heading."""
        if self is Platform.SPARK:
            return (_by_numactl(placement),)
        if self is Platform.STANDALONE:
            return (_by_plugin(placement, asked, "spark-defaults.conf"),)
        by_manager = _by_nodemanager if self is Platform.YARN else _by_kubelet
        ways = [by_manager(placement, settings)]
        if "spark-plugin" in settings:
            ways.append(_by_plugin(placement, asked, PLUGIN_CONF))
        return tuple(ways)


@dataclass(frozen=True)
class Applied:
    """One way a target places a plan's executors, as its realiser applies it: who does (and
    with which files), the memory policy it gives, and each executor's row (name, node(s),
    CPUs, task slots, heap, what is applied to it)."""

    who: str
    memory: str
    rows: tuple[tuple[str, str, str, str, str, str], ...]


def _row(jvm: JvmPlacement, applied: str, cpus: str | None = None, slots: str | None = None):
    return (
        jvm.name,
        str(jvm.nodes),
        cpus or str(jvm.cpus),
        slots or str(jvm.cores),
        jvm_size(jvm.heap),
        applied,
    )


def _by_numactl(placement: Placement) -> Applied:
    policy = placement.mem_policy.value if placement.mem_policy else "the kernel's default"
    rows = tuple(
        _row(
            j, " ".join(numactl_argv(j)) or "(unbound)", slots=str(j.cores) if j.runs_tasks else "-"
        )
        for j in placement.jvms
    )
    return Applied("numactl, on the JVMs numaspark starts", policy, rows)


def _pinned(binding: Binding) -> str:
    unit = "core" if binding is Binding.CORE else "hardware thread"
    return f"each running task pinned to a {unit} of its own by the plugin"


def _by_plugin(placement: Placement, asked: MemPolicy | None, file: str) -> Applied:
    """The affinity plugin, from inside each executor a manager started unbound."""
    who = f"the affinity plugin, from inside each executor ({file})"
    if placement.binding is Binding.NODE:
        policy = plugin_policy(asked).value
        given = asked in (MemPolicy.PREFERRED, MemPolicy.BIND, MemPolicy.INTERLEAVE)
        memory = policy if given else f"{policy} (the plugin's default)"
        rows = tuple(
            _row(
                j,
                f"starts unbound, then binds itself to the node of a free node slot on its "
                f"host (planned: node {j.nodes}) and moves its memory there ({policy})",
            )
            for j in placement.executors
        )
        return Applied(who, memory, rows)
    if placement.binding in (Binding.CORE, Binding.PU):
        applied = f"the JVM unbound; {_pinned(placement.binding)}"
    else:
        applied = "unbound: the plugin only reports where it runs"
    return Applied(
        who, "the kernel's default", tuple(_row(j, applied) for j in placement.executors)
    )


def _by_nodemanager(placement: Placement, settings: dict[str, dict]) -> Applied:
    """YARN's NUMA awareness: NumaResourceHandlerImpl launches each container under numactl
    --interleave and --cpunodebind over the nodes its round robin picked, at node level only."""
    who = "YARN's NodeManager (yarn-site.xml, spark-defaults.conf)"
    if placement.binding is Binding.NONE:
        rows = tuple(_row(j, "unbound (NUMA awareness off)") for j in placement.executors)
        return Applied(who, "the kernel's default", rows)
    tasks = "" if placement.binding is Binding.NODE else f"; {_pinned(placement.binding)}"
    rows = tuple(
        _row(
            j,
            f"numactl --interleave={j.nodes} --cpunodebind={j.nodes}, the node(s) YARN's "
            f"round robin picks for its container{tasks}",
        )
        for j in placement.executors
    )
    memory = "interleave over the container's node(s), YARN's own (not --mem-policy)"
    return Applied(who, memory, rows)


def _by_kubelet(placement: Placement, settings: dict[str, dict]) -> Applied:
    """The kubelet's CPU, Topology and Memory Managers: exclusive CPUs of a Guaranteed pod
    on one NUMA node, its memory there under the Static Memory Manager."""
    who = "the kubelet's managers (kubelet-config.yaml, executor-pod-template.yaml, spark-defaults.conf)"
    spark, kubelet = settings["spark"], settings["kubelet"]
    slots = spark["spark.executor.cores"]
    if placement.binding is Binding.NONE:
        rows = tuple(
            _row(j, "shared CPUs of its node (cpuManagerPolicy none)", slots=slots)
            for j in placement.executors
        )
        return Applied(who, "the kernel's default", rows)
    request = spark["spark.kubernetes.executor.request.cores"]
    topology = kubelet["topologyManagerPolicy"]
    memory = (
        "bind: the Static Memory Manager keeps each pod's memory on its NUMA node"
        if kubelet.get("memoryManagerPolicy") == "Static"
        else "the kernel's default (no Memory Manager: --mem-policy bind adds it)"
    )
    tasks = "" if placement.binding is Binding.NODE else f"; {_pinned(placement.binding)}"
    rows = tuple(
        _row(
            j,
            f"{request} exclusive CPUs (static CPU Manager) of the NUMA node(s) the Topology "
            f"Manager ({topology}) aligns its pod to{tasks}",
            cpus=f"{request} of {j.cpus}",
            slots=slots,
        )
        for j in placement.executors
    )
    return Applied(who, memory, rows)


def platform_files(
    platform: Platform, settings: dict[str, dict], directory: Path | None
) -> dict[str, str]:
    """File name -> text for ``plan --out DIRECTORY``, each text as written (its last line
    ended); the pod template is named in spark-defaults.conf by its absolute path there, as
    spark-submit reads it where it runs (no ``directory``: the files ``plan`` shows without
    writing them, which name it by its file name)."""
    files = _platform_files(platform, settings, directory)
    return {name: text if text.endswith("\n") else text + "\n" for name, text in files.items()}


def _at(directory: Path | None, name: str) -> str:
    return str((directory / name).resolve()) if directory is not None else name


def _platform_files(
    platform: Platform, settings: dict[str, dict], directory: Path | None
) -> dict[str, str]:
    if platform is Platform.SPARK:
        raise UsageError(
            "--out writes a cluster manager's files: give --target yarn, k8s or standalone"
        )
    if platform is Platform.STANDALONE:
        conf = settings["spark-defaults.conf"]
        files = {
            "spark-defaults.conf": _conf_text(
                conf, "the affinity plugin for a standalone cluster numaspark did not start"
            )
        }
        if "worker-resources" in settings:
            files[WORKER_RESOURCES] = json.dumps(settings["worker-resources"], indent=2)
            settings = {**settings, "worker": _worker_conf(settings["worker"], directory)}
        return {**files, "README.txt": _readme(platform, files, settings)}
    spark = dict(settings["spark"])
    files: dict[str, str] = {}
    if platform is Platform.YARN:
        files["yarn-site.xml"] = yarn_site_xml(settings["yarn-site"])
    else:
        files["kubelet-config.yaml"] = yaml.safe_dump(settings["kubelet"], sort_keys=False)
        files[POD_TEMPLATE] = yaml.safe_dump(settings["executor-pod-template"], sort_keys=False)
        spark["spark.kubernetes.executor.podTemplateFile"] = _at(directory, POD_TEMPLATE)
    files["spark-defaults.conf"] = _conf_text(spark, f"Spark's side of the {platform.value} files")
    if "spark-plugin" in settings:
        plugin = dict(settings["spark-plugin"])
        if "spark-plugin-pod-template" in settings:
            files[PLUGIN_POD_TEMPLATE] = yaml.safe_dump(
                settings["spark-plugin-pod-template"], sort_keys=False
            )
            plugin["spark.kubernetes.executor.podTemplateFile"] = _at(
                directory, PLUGIN_POD_TEMPLATE
            )
        files[PLUGIN_CONF] = _conf_text(
            plugin,
            "the plugin binds each executor "
            "from inside: no admin rights; never with the files above",
        )
    return {**files, "README.txt": _readme(platform, files, settings)}


def _worker_conf(conf: dict[str, str], directory: Path | None) -> dict[str, str]:
    """The worker's settings naming its resources file where ``plan --out`` writes it."""
    return {**conf, "spark.worker.resourcesFile": _at(directory, WORKER_RESOURCES)}


def write_files(directory: Path, files: dict[str, str]) -> list[Path]:
    """Write ``files`` into ``directory`` (made if missing); a path that cannot be written is
    a one-line error."""
    written = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            path = directory / name
            path.write_text(text if text.endswith("\n") else text + "\n")
            written.append(path)
    except OSError as error:
        where = error.filename or directory
        raise UsageError(f"--out {directory}: cannot write {where}: {error.strerror}") from None
    return written


def yarn_site_xml(properties: dict[str, str]) -> str:
    """A yarn-site.xml fragment: the <property> elements to merge into each NodeManager's."""
    root = ET.Element("configuration")
    root.append(ET.Comment(" numaspark: merge these into yarn-site.xml on every NodeManager "))
    for name, value in properties.items():
        prop = ET.SubElement(root, "property")
        ET.SubElement(prop, "name").text = name
        ET.SubElement(prop, "value").text = value
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def _conf_text(conf: dict[str, str], what: str) -> str:
    return f"# numaspark: {what}\n" + spark_defaults_text(conf)


_ADMIN = {
    Platform.YARN: (
        "yarn-site.xml",
        "needs admin rights: merge it into yarn-site.xml on every "
        "NodeManager and restart them; YARN then binds each container to a node",
    ),
    Platform.K8S: (
        "kubelet-config.yaml",
        "needs admin rights: merge it into each node's kubelet "
        "configuration (drain the node, remove /var/lib/kubelet/cpu_manager_state and "
        "memory_manager_state, restart the kubelet); the kubelet then gives each "
        "executor pod exclusive CPUs and memory on its NUMA node",
    ),
}


def _readme(platform: Platform, files: dict[str, str], settings: dict[str, dict]) -> str:
    lines = [f"numaspark plan --target {platform.value}: files to apply", ""]
    if platform in _ADMIN:
        name, text = _ADMIN[platform]
        lines.append(f"{name}: {text}.")
    jar = settings.get("spark-defaults.conf", {}).get("spark.executor.extraClassPath")
    if jar:  # standalone: the class paths name the jar on each host
        lines.append(f"Copy {jar} to that same path on every worker host.")
    if WORKER_RESOURCES in files:
        options = " ".join(f"-D{k}={v}" for k, v in settings["worker"].items())
        lines.append(
            f"{WORKER_RESOURCES}: the devices this plan gives the host's executors, as the "
            "standalone worker offers them to Spark's scheduler: start the worker with "
            f'SPARK_WORKER_OPTS="{options}" (copy the file to that path on the host). The '
            f"discovery script spark-defaults.conf names ({DISCOVERY_SCRIPT.name}, in "
            "numaspark's wheel) is for executors without it: copy it to that same path on "
            "every worker host, as the jar; it prints what NUMASPARK_RESOURCE_<NAME> holds "
            "(e.g. NUMASPARK_RESOURCE_GPU=0,1 in a worker's environment)."
        )
    if POD_TEMPLATE in files:
        lines.append(
            f"{POD_TEMPLATE}: the executor pod, every container Guaranteed with whole "
            "CPUs; spark-defaults.conf names it (spark.kubernetes.executor."
            "podTemplateFile). A sidecar or init container you add must have requests "
            "equal to limits, whole CPUs, or the pod loses its exclusive CPUs. It "
            "tells the container its node's name (NUMASPARK_NODE_NAME, downward API): "
            "the plugin reports from that host."
        )
    lines.append(
        "spark-defaults.conf: Spark's side; pass it with spark-submit --properties-file "
        "or merge it into $SPARK_HOME/conf/spark-defaults.conf."
    )
    if PLUGIN_CONF in files:
        lines.append(
            f"{PLUGIN_CONF}: the alternative for a cluster whose managers you cannot "
            "change: no admin rights, the numaspark plugin binds each executor to a node "
            "from inside as it starts. Use it instead of the files above, never both "
            "for one executor."
            + (
                f" {PLUGIN_POD_TEMPLATE}, which it names, only tells each executor its node's name."
                if PLUGIN_POD_TEMPLATE in files
                else ""
            )
        )
    for section in ("why", "cost"):
        for key, text in settings.get(section, {}).items():
            lines.append(f"{key}: {text}.")
    return "\n".join(lines)
