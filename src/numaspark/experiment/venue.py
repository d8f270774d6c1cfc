"""`Venue`: where a command's runs go, made once from the options and passed down.

A venue is one of three places:

- `ThisMachine` (`HERE`): numaspark starts every JVM on this machine (local mode, or a
  standalone cluster it starts here or finds left up by ``cluster up``) and places it with
  numactl;
- `SshHosts`: hosts over SSH, on which numaspark starts a standalone cluster itself,
  numactl placing its workers;
- `ClusterAt`: a cluster numaspark did not start, at an address (``spark://HOST:PORT``,
  ``yarn``, ``k8s://URL``): its manager starts the executors and the affinity plugin places
  them from inside.

Every command that runs Spark (``run``, ``sweep``, every ``study``, ``characterize``,
``tune``) and ``plan`` make one from the same options (cli/options.py's ``@with_cluster``)
or a sweep spec's ``[cluster]`` table; a `RunRequest` carries it. This module holds what a
venue decides without reaching it: its name, who realises a placement there (`Realiser`),
the Spark settings a request sent there gets (`conf`), and what it refuses before any work.
Reaching it (the machine a run is planned on there, a request's placement, what a cluster
holds now, the target that runs an application there) is experiment/placing.py's.

Nothing here starts work, and nothing here imports what does: the report reads requests and
experiments, which hold a venue.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from numaspark.errors import UsageError
from numaspark.placement.kubelet import IMAGE_KEY
from numaspark.topology import Topology
from numaspark.workloads.application import DEPLOY_MODE_KEY

DEFAULT_EXECUTOR_WAIT_S = 300.0
GIVEN_ON_HOSTS = (
    "--xml and --synthetic describe the hosts of a cluster numaspark did not start "
    "(--master): --hosts are read with hwloc over SSH"
)


@dataclass(frozen=True)
class Realiser:
    """Who places the JVMs at a venue, and why they cannot realise a part of a plan (None:
    they can): numactl on the JVMs numaspark starts (here, or on hosts over SSH), or the
    affinity plugin from inside executors a manager starts."""

    name: str
    some_nodes: str | None  # executors kept to some of a host's nodes
    remote_memory: str | None  # CPUs on one node, memory on another
    # the kernel's NUMA balancing, switched per configuration: on this machine only
    balancing: str | None = (
        "the kernel's NUMA balancing is switched on this machine only: on the cluster's hosts "
        "every configuration runs with it as the hosts have it"
    )


NUMACTL_HERE = Realiser("numactl, on the JVMs numaspark starts here", None, None, None)
NUMACTL_ON_HOSTS = Realiser("numactl, on the workers numaspark starts", None, None)
PLUGIN = Realiser(
    "the affinity plugin, from inside each executor",
    some_nodes=(
        "the plugin binds each executor to a node of its host as it starts, spread over "
        "them all: executors cannot be kept to some of a host's nodes"
    ),
    remote_memory=(
        "the plugin binds an executor's memory to its own node (preferred, bind or "
        "interleave), never to another: remote memory needs JVMs numaspark starts "
        "(this machine, or --hosts)"
    ),
)


@dataclass(frozen=True)
class Venue:
    """Where runs go: `ThisMachine`, `SshHosts` or `ClusterAt`."""

    here: ClassVar[bool] = False  # numaspark starts the JVMs on this machine
    realiser: ClassVar[Realiser]

    @property
    def name(self) -> str:
        """How runs, tables and messages name it."""
        raise NotImplementedError

    @property
    def master_url(self) -> str | None:
        """The master spark-submit is given (None: numaspark starts the cluster)."""
        return None

    @property
    def where(self) -> str:
        """``here`` or ``there``, as a line about what cannot run names it."""
        return "here" if self.here else "there"

    @property
    def conf(self) -> dict[str, str]:
        """The Spark settings a request sent here gets under its own (experiment/request.py's
        `RunRequest.at`)."""
        return {}

    def check(self, numa_balancing: bool | None, application) -> None:
        """What this venue refuses of a request before any work (a UsageError):
        ``numa_balancing``, its setting of the kernel's; ``application``, the user's."""
        if numa_balancing is not None and not self.here:
            raise UsageError(
                "--numa-balancing switches this machine's kernel setting: it is for "
                "runs here, not with --hosts or --master"
            )
        if application is not None and application.conf().get(DEPLOY_MODE_KEY) == "cluster":
            self.check_cluster_mode(application)

    def check_cluster_mode(self, application) -> None:
        raise UsageError(
            "cluster deploy mode needs the cluster the driver runs on: add --master "
            "spark://HOST:PORT, yarn or k8s://URL, or drop --deploy-mode cluster"
        )

    def cosched_inventory(self):
        """The hosts study cosched splits (None: this machine's own)."""
        return None


@dataclass(frozen=True)
class ThisMachine(Venue):
    """This machine: numaspark starts every JVM here."""

    here: ClassVar[bool] = True
    realiser: ClassVar[Realiser] = NUMACTL_HERE

    @property
    def name(self) -> str:
        return "this machine"


HERE = ThisMachine()


@dataclass(frozen=True)
class SshHosts(Venue):
    """Hosts over SSH: numaspark starts a standalone cluster there, its workers bound by
    numactl, and the driver here, reached at ``driver_host`` (None: the inventory's)."""

    realiser: ClassVar[Realiser] = NUMACTL_ON_HOSTS
    # an inventory (numaspark.hosts, not imported: it brings SSH and processes, which the
    # report, a reader of this module, never imports)
    hosts: object = None
    driver_host: str | None = None

    def __post_init__(self) -> None:
        if self.hosts is None:
            raise UsageError("give --hosts (or --hosts-file)")

    @property
    def name(self) -> str:
        return "hosts " + ",".join(h.name for h in self.hosts.hosts)

    @property
    def inventory(self):
        """Its hosts, with --driver-host as their driver address."""
        if self.driver_host:
            return dataclasses.replace(self.hosts, driver_address=self.driver_host)
        return self.hosts

    def cosched_inventory(self):
        return self.inventory


@dataclass(frozen=True)
class ClusterAt(Venue):
    """A cluster numaspark did not start, at ``master``: its manager starts the executors,
    the affinity plugin places them from inside, the driver runs here (or, in cluster deploy
    mode, on the cluster)."""

    realiser: ClassVar[Realiser] = PLUGIN
    master: str = ""
    ui: str | None = None  # a standalone master's web UI (default: port 8080 on its host)
    driver_host: str | None = None  # where executors reach the driver (None: by the route)
    executor_wait_s: float = DEFAULT_EXECUTOR_WAIT_S  # an application with no executor by then
    python: str | None = None  # the executors' Python on their hosts (spark.pyspark.python)
    node_topology: Topology | None = None  # its hosts' topology (--xml, --synthetic)
    image: str | None = None  # Kubernetes: the pods' image (spark.kubernetes.container.image)

    def __post_init__(self) -> None:
        if not self.master:
            raise UsageError("give --master spark://HOST:PORT, yarn or k8s://URL")
        if self.image is not None and not self.master.startswith("k8s://"):
            raise UsageError("--image names the pods' image on Kubernetes: give --master k8s://")
        if self.ui is not None and not self.master.startswith("spark://"):
            raise UsageError("--master-ui is a standalone master's web UI: give --master spark://")
        if self.executor_wait_s <= 0:
            raise UsageError("--executor-wait must be positive, e.g. --executor-wait 60s")

    @property
    def name(self) -> str:
        return self.master

    @property
    def master_url(self) -> str | None:
        return self.master

    @property
    def standalone(self) -> bool:
        return self.master.startswith("spark://")

    @property
    def conf(self) -> dict[str, str]:
        """The executors' Python and, on Kubernetes, the pods' image, as the Spark keys that
        name them."""
        conf = {"spark.pyspark.python": self.python} if self.python else {}
        if self.image:
            conf[IMAGE_KEY] = self.image
        return conf

    def check_cluster_mode(self, application) -> None:
        """Cluster deploy mode runs the driver on the cluster: on a standalone master (JAR
        applications: Spark refuses Python there), on YARN, or in a pod on Kubernetes."""
        if not (self.standalone or self.master == "yarn" or self.master.startswith("k8s://")):
            super().check_cluster_mode(application)
        if self.standalone and application.path.endswith(".py"):
            raise UsageError(
                "a standalone master runs no Python application in cluster deploy mode (Spark "
                "refuses it): drop --deploy-mode cluster, or run it on YARN"
            )

    def cosched_inventory(self):
        raise UsageError(
            f"study cosched gives each workload a share of every host, and on {self.master} "
            f"{self.realiser.some_nodes}: run it here, or with --hosts (numaspark starts the "
            "workers there, under numactl)"
        )
