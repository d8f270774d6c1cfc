"""A YARN cluster numaspark did not start (``--master yarn``): what it has, read from its
ResourceManager, so that a run is planned for the cluster, never for this machine.

Spark finds the ResourceManager through ``HADOOP_CONF_DIR`` (or ``YARN_CONF_DIR``); so does
this: its ``yarn-site.xml`` names the RM's web address (``yarn.resourcemanager.webapp.
address``), whose REST API lists the running NodeManagers with their free vcores and memory
(``/ws/v1/cluster/nodes``). The scheduler's minimum and maximum allocation come from the same
file (YARN's defaults when it does not say: a client's copy often leaves them out).

A layout is planned on the running nodes with the most free vcores, as one machine whose NUMA
nodes are those nodes, and
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
from dataclasses import dataclass
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.placement import Placement
from numaspark.placement.cluster_capacity import (
    ClusterCapacity,
    Fitting,
    HostHas,
    container_mb,
    largest_heap_mb,
)
from numaspark.topology import Topology

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
__all__ = ["YarnCluster", "YarnNode", "container_mb", "largest_heap_mb", "read_site"]


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
            raise UsageError(
                "--master yarn: set HADOOP_CONF_DIR to the directory of your "
                "cluster's yarn-site.xml (spark-submit reads it too)"
            )
        site = directory / "yarn-site.xml"
        if not site.is_file():
            raise UsageError(f"--master yarn: no yarn-site.xml in {directory} (HADOOP_CONF_DIR)")
        conf = read_site(site)
        webapp = "http://" + conf[WEBAPP_KEY].removeprefix("http://")
        # a busy ResourceManager (or one under emulation) may take seconds to answer
        state = rm_json(webapp, "/ws/v1/cluster/nodes?states=RUNNING", timeout_s=30)
        if state is None:
            raise UsageError(
                f"--master yarn: the ResourceManager's web app does not answer at "
                f"{webapp} ({WEBAPP_KEY} in {site}): is YARN up?"
            )
        return cls.of(webapp, state, conf)

    @classmethod
    def of(cls, webapp: str, nodes_json: dict, conf: dict[str, str]) -> YarnCluster:
        """From the RM's ``/ws/v1/cluster/nodes`` answer and the client's configuration."""
        listed = ((nodes_json or {}).get("nodes") or {}).get("node") or []
        nodes = tuple(
            YarnNode(
                node_id=str(n.get("id", "?")),
                host=str(n.get("nodeHostName", "?")),
                vcores=int(n.get("availableVirtualCores", 0)),
                memory_mb=int(n.get("availMemoryMB", 0)),
            )
            for n in listed
            if n.get("state", "RUNNING") == "RUNNING"
        )
        if not nodes:
            raise UsageError(
                f"--master yarn: the ResourceManager at {webapp} has no running "
                "NodeManager: start one, or point HADOOP_CONF_DIR at the cluster "
                "that has them"
            )
        return cls(
            webapp=webapp,
            nodes=nodes,
            minimum_mb=int(conf["yarn.scheduler.minimum-allocation-mb"]),
            maximum_mb=int(conf["yarn.scheduler.maximum-allocation-mb"]),
            maximum_vcores=int(conf["yarn.scheduler.maximum-allocation-vcores"]),
        )

    @property
    def am_mb(self) -> int:
        """The application master's container (client mode, Spark's defaults)."""
        total = AM_HEAP_MB + AM_OVERHEAD_MB
        return -(-total // max(1, self.minimum_mb)) * max(1, self.minimum_mb)

    def has(self) -> ClusterCapacity:
        """What the cluster has (placement/cluster_capacity.py), which plans it: an executor's
        container is its heap and overhead rounded up to the minimum allocation, at most the
        maximum, beside the application master's."""
        fitting = Fitting(
            cluster="the YARN cluster",
            host="node",
            listed="running node(s)",
            cores="vcores",
            heap_from="YARN",
            container_rounding_mb=max(1, self.minimum_mb),
            maximum_mb=self.maximum_mb,
            maximum_cores=self.maximum_vcores,
            reserved_mb=self.am_mb,
        )
        return ClusterCapacity(
            kind="yarn",
            address=self.webapp,
            fitting=fitting,
            hosts=tuple(HostHas(n.host, n.vcores, n.memory_mb) for n in self.nodes),
        )

    def topology(self) -> Topology:
        """The running nodes with the most free vcores as one machine, a node each, of those
        vcores (at most what one container may take)."""
        return self.has().topology()

    def place(self, plan: Callable[[Topology], Placement], asked_heap: int | None) -> Placement:
        """``plan`` on the largest nodes; the heap, when not asked for, the most whose
        container every node holds for the executors spread onto it (beside the application
        master on one of them); then `check_fits`."""
        return self.has().place(plan, asked_heap)

    def check_fits(self, placement: Placement) -> None:
        """Refuse, in one line naming what is missing, a placement whose executor containers
        (and the application master's) the running nodes cannot hold now."""
        self.has().check_fits(placement)

    def describe(self) -> str:
        return self.has().describe()


def rm_json(webapp: str, path: str, timeout_s: float = 5.0) -> dict | None:
    """A ResourceManager REST answer (JSON), or None when it does not answer."""
    request = urllib.request.Request(
        webapp.rstrip("/") + path, headers={"Accept": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as r:
            return json.loads(r.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None


def kill_application(webapp: str, app_id: str) -> bool:
    """Ask the ResourceManager to kill ``app_id`` (one that got no container and would wait in
    its queue after its driver stopped); whether it accepted."""
    request = urllib.request.Request(
        f"{webapp.rstrip('/')}/ws/v1/cluster/apps/{app_id}/state",
        method="PUT",
        data=json.dumps({"state": "KILLED"}).encode(),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return 200 <= r.status < 300
    except (urllib.error.URLError, OSError):
        return False
