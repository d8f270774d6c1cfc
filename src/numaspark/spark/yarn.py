"""A YARN cluster numaspark did not start (``--master yarn``): what it has, read from its
ResourceManager, so that a run is planned for the cluster, never for this machine.

Spark finds the ResourceManager through ``HADOOP_CONF_DIR`` (or ``YARN_CONF_DIR``); so does
this: its ``yarn-site.xml`` names the RM's web address (``yarn.resourcemanager.webapp.
address``), whose REST API lists the running NodeManagers with their free vcores and memory
(``/ws/v1/cluster/nodes``). The scheduler's minimum and maximum allocation come from the same
file (YARN's defaults when it does not say: a client's copy often leaves them out).

A layout is planned on the largest running node, as one machine of its free vcores, and
checked against every node the way YARN grants containers: an executor's container is its
heap plus Spark's overhead (max(384 MiB, 10%)), rounded up to a multiple of the minimum
allocation, and takes its cores in vcores; the application master of client mode
(``spark.yarn.am.memory``, 512 MiB + overhead) needs a container's memory too. The capacity
scheduler counts memory only unless told otherwise (its default resource calculator); an
executor's vcores are checked all the same, since executors whose cores exceed a node's vcores
would share its CPUs, but not the application master's one, which only asks for executors.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from numaspark.errors import PlacementError, UsageError
from numaspark.placement import Placement
from numaspark.placement.planner import MAX_COMPRESSED_OOPS_HEAP, SPARK_MIN_HEAP, spark_overhead
from numaspark.spark.standing import room_for
from numaspark.topology import Topology, load_synthetic
from numaspark.units import MIB

WEBAPP_KEY = "yarn.resourcemanager.webapp.address"
RM_KEY = "yarn.resourcemanager.address"  # where clients submit: names the cluster
# yarn-default.xml's values, for a yarn-site.xml that does not set them
DEFAULTS = {
    "yarn.resourcemanager.hostname": "0.0.0.0",
    WEBAPP_KEY: "${yarn.resourcemanager.hostname}:8088",
    RM_KEY: "${yarn.resourcemanager.hostname}:8032",
    "yarn.scheduler.minimum-allocation-mb": "1024",
    "yarn.scheduler.maximum-allocation-mb": "8192",
    "yarn.scheduler.maximum-allocation-vcores": "4",
}
AM_HEAP_MB = 512  # spark.yarn.am.memory's default: client mode's application master
AM_OVERHEAD_MB = 384  # its overhead: max(384 MiB, 10%)
_VARIABLE = re.compile(r"\$\{([^}]+)\}")


def conf_dir() -> Path | None:
    """The directory of the YARN client configuration Spark will read, if any is set."""
    for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR"):
        if os.environ.get(name):
            return Path(os.environ[name])
    return None


def read_site(path: Path) -> dict[str, str]:
    """A Hadoop ``*-site.xml``'s properties (``${name}`` references expanded), over YARN's
    defaults for the keys read here."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as exc:
        raise UsageError(f"{path}: not a readable Hadoop configuration ({exc})") from None
    values = dict(DEFAULTS)
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name and value is not None:
            values[name.strip()] = value.strip()

    def expand(text: str, depth: int = 0) -> str:
        if depth > 10:
            return text
        return _VARIABLE.sub(lambda m: expand(values.get(m.group(1), m.group(0)), depth + 1), text)

    return {k: expand(v) for k, v in values.items()}


def container_mb(heap_mb: int, minimum_mb: int) -> int:
    """The container YARN grants an executor of ``heap_mb``: heap plus Spark's overhead,
    rounded up to a multiple of the minimum allocation."""
    asked = heap_mb + spark_overhead(heap_mb * MIB) // MIB
    return -(-asked // max(1, minimum_mb)) * max(1, minimum_mb)


def largest_heap_mb(container: int, minimum_mb: int) -> int:
    """The largest heap whose container fits in ``container`` MB (0 when none does)."""
    heap = container - 384 if container - 384 < 3840 else int(container / 1.1)
    while heap > 0 and container_mb(heap, minimum_mb) > container:
        heap -= 1
    return max(0, heap)


@dataclass(frozen=True)
class YarnNode:
    node_id: str
    host: str
    vcores: int  # free now
    memory_mb: int  # free now


@dataclass(frozen=True)
class YarnCluster:
    """The running NodeManagers of a YARN cluster and its scheduler's allocation limits."""

    webapp: str  # http://HOST:PORT of the ResourceManager's web app
    nodes: tuple[YarnNode, ...]
    minimum_mb: int = 1024
    maximum_mb: int = 8192
    maximum_vcores: int = 4

    @classmethod
    def read(cls, directory: Path | None = None) -> YarnCluster:
        """Ask the ResourceManager that ``directory``'s (else HADOOP_CONF_DIR's) yarn-site.xml
        names."""
        directory = directory or conf_dir()
        if directory is None:
            raise UsageError("--master yarn: set HADOOP_CONF_DIR to the directory of your "
                             "cluster's yarn-site.xml (spark-submit reads it too)")  # fmt: skip
        site = directory / "yarn-site.xml"
        if not site.is_file():
            raise UsageError(f"--master yarn: no yarn-site.xml in {directory} (HADOOP_CONF_DIR)")
        conf = read_site(site)
        webapp = "http://" + conf[WEBAPP_KEY].removeprefix("http://")
        # a busy ResourceManager (or one under emulation) may take seconds to answer
        state = rm_json(webapp, "/ws/v1/cluster/nodes?states=RUNNING", timeout_s=30)
        if state is None:
            raise UsageError(f"--master yarn: the ResourceManager's web app does not answer at "
                             f"{webapp} ({WEBAPP_KEY} in {site}): is YARN up?")  # fmt: skip
        return cls.of(webapp, state, conf)

    @classmethod
    def of(cls, webapp: str, nodes_json: dict, conf: dict[str, str]) -> YarnCluster:
        """From the RM's ``/ws/v1/cluster/nodes`` answer and the client's configuration."""
        listed = ((nodes_json or {}).get("nodes") or {}).get("node") or []
        nodes = tuple(
            YarnNode(node_id=str(n.get("id", "?")), host=str(n.get("nodeHostName", "?")),
                     vcores=int(n.get("availableVirtualCores", 0)),
                     memory_mb=int(n.get("availMemoryMB", 0)))
            for n in listed if n.get("state", "RUNNING") == "RUNNING"
        )  # fmt: skip
        if not nodes:
            raise UsageError(f"--master yarn: the ResourceManager at {webapp} has no running "
                             "NodeManager: start one, or point HADOOP_CONF_DIR at the cluster "
                             "that has them")  # fmt: skip
        return cls(webapp=webapp, nodes=nodes,
                   minimum_mb=int(conf["yarn.scheduler.minimum-allocation-mb"]),
                   maximum_mb=int(conf["yarn.scheduler.maximum-allocation-mb"]),
                   maximum_vcores=int(conf["yarn.scheduler.maximum-allocation-vcores"]))  # fmt: skip

    @property
    def am_mb(self) -> int:
        """The application master's container (client mode, Spark's defaults)."""
        total = AM_HEAP_MB + AM_OVERHEAD_MB
        return -(-total // max(1, self.minimum_mb)) * max(1, self.minimum_mb)

    def topology(self) -> Topology:
        """The largest running node as one machine of its free vcores (at most what one
        container may take)."""
        largest = max(self.nodes, key=lambda n: (n.vcores, n.memory_mb))
        cores = max(1, min(largest.vcores, self.maximum_vcores))
        return load_synthetic(f"package:1 numa:1 core:{cores} pu:1")

    def place(self, plan: Callable[[Topology], Placement], asked_heap: int | None) -> Placement:
        """``plan`` on the largest node; the heap, when not asked for, the most whose
        container every node holds for the executors spread onto it (beside the application
        master on one of them); then `check_fits`."""
        try:
            placement = plan(self.topology())
        except (PlacementError, UsageError) as exc:
            raise UsageError(f"planned on the largest node of the YARN cluster at {self.webapp} "
                             f"({self.describe()}): {exc}") from None  # fmt: skip
        if asked_heap is None:
            executors = placement.executors
            per_node = -(-len(executors) // len(self.nodes))
            # the application master takes its container from the node with the most memory
            memory = sorted(n.memory_mb for n in self.nodes)
            memory[-1] -= self.am_mb
            budget = min(min(memory) // per_node, self.maximum_mb)
            heap = min(largest_heap_mb(budget, self.minimum_mb) * MIB, MAX_COMPRESSED_OOPS_HEAP)
            if heap < SPARK_MIN_HEAP:
                raise UsageError(f"the YARN cluster at {self.webapp} has {self.describe()}: "
                                 f"{per_node} executor(s) on a node would get {heap // MIB} MB "
                                 "heap each (after Spark's overhead and the application "
                                 "master's container), below Spark's minimum of 450 MB: give "
                                 "fewer --executors")  # fmt: skip
            jvms = tuple(replace(j, heap=heap, overhead=spark_overhead(heap)) if j.runs_tasks
                         else j for j in placement.jvms)  # fmt: skip
            notes = tuple(n for n in placement.notes if not n.startswith("node memory is unknown"))
            placement = replace(placement, jvms=jvms, notes=(*notes, (
                f"heap from YARN: {heap // MIB} MB, so that {per_node} executor container(s) "
                f"of {container_mb(heap // MIB, self.minimum_mb)} MB fit on its smallest node "
                "beside the application master")))  # fmt: skip
        self.check_fits(placement)
        return placement

    def check_fits(self, placement: Placement) -> None:
        """Refuse, in one line naming what is missing, a placement whose executor containers
        (and the application master's) the running nodes cannot hold now."""
        executors = placement.executors
        cores = max(e.cores for e in executors)
        heap_mb = max(e.heap for e in executors) // MIB
        container = container_mb(heap_mb, self.minimum_mb)
        what = (f"{len(executors)} executor container(s) of {cores} vcore(s) and {container} MB "
                f"({heap_mb} MB heap + overhead)")  # fmt: skip
        if container > self.maximum_mb or cores > self.maximum_vcores:
            raise UsageError(f"the YARN cluster at {self.webapp} grants at most "
                             f"{self.maximum_mb} MB and {self.maximum_vcores} vcore(s) per "
                             f"container, not {what.split(' of ', 1)[1]}: give less "
                             "--memory-per-executor or --cores-per-executor")  # fmt: skip
        # the application master first, on the node with the most memory (its memory only:
        # it only asks for executors, and the capacity scheduler's default calculator counts
        # no vcores); then the executors
        free = sorted(([n.memory_mb, n.vcores] for n in self.nodes), reverse=True)
        free[0][0] -= self.am_mb
        room = room_for([(v, m) for m, v in free], cores, container)
        if room >= len(executors):
            return
        have = ", ".join(f"{n.host}: {n.vcores} vcores, {n.memory_mb} MB free" for n in self.nodes)
        raise UsageError(f"the YARN cluster at {self.webapp} cannot hold {what} beside the "
                         f"application master's {self.am_mb} MB (room for {room}; its running "
                         f"nodes: {have}): give fewer --executors, --cores-per-executor or "
                         "--memory-per-executor")  # fmt: skip

    def describe(self) -> str:
        vcores = sum(n.vcores for n in self.nodes)
        memory = sum(n.memory_mb for n in self.nodes)
        return f"{len(self.nodes)} running node(s), {vcores} vcores and {memory} MB free"


def rm_json(webapp: str, path: str, timeout_s: float = 5.0) -> dict | None:
    """A ResourceManager REST answer (JSON), or None when it does not answer."""
    request = urllib.request.Request(webapp.rstrip("/") + path,
                                     headers={"Accept": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as r:
            return json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def kill_application(webapp: str, app_id: str) -> bool:
    """Ask the ResourceManager to kill ``app_id`` (one that got no container and would wait in
    its queue after its driver stopped); whether it accepted."""
    request = urllib.request.Request(
        f"{webapp.rstrip('/')}/ws/v1/cluster/apps/{app_id}/state", method="PUT",
        data=json.dumps({"state": "KILLED"}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return 200 <= r.status < 300
    except (urllib.error.URLError, OSError):
        return False
