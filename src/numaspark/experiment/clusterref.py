"""`ClusterRef`: the cluster a command's runs go to instead of this machine, named once.

Every command that runs Spark (`run`, `sweep`, every `study`, `characterize`, `tune`) takes
the same options for it, parsed once (cli/options.py's ``@with_cluster``), or a sweep spec's
``[cluster]`` table; this is what they become:

- ``master``: a cluster numaspark did not start (``spark://HOST:PORT``, ``yarn``,
  ``k8s://URL``): its manager starts the executors and the affinity plugin places them from
  inside;
- ``hosts``: hosts over SSH, on which numaspark starts a standalone cluster itself (numactl
  places its workers).

`applied` turns a request for this machine into one for the cluster (the one place the run
loop's cluster fields are filled); experiment/target.py's `plan_topology` is the machine an
experiment is planned on there (never this machine's); `Realiser` says which parts of a plan whoever places the
JVMs there can realise, so that a study says per part what it cannot run, and why.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from numaspark.errors import UsageError
from numaspark.experiment.request import RunRequest
from numaspark.placement import Mode
from numaspark.topology import Topology

DEFAULT_EXECUTOR_WAIT_S = 300.0
GIVEN_ON_HOSTS = (
    "--xml and --synthetic describe the hosts of a cluster numaspark did not start "
    "(--master): --hosts are read with hwloc over SSH"
)


@dataclass(frozen=True)
class ClusterRef:
    """A cluster the runs go to: ``master`` (one numaspark did not start) or ``hosts`` (an
    inventory over SSH, where numaspark starts one), never both."""

    master: str | None = None
    master_ui: str | None = None  # a standalone master's web UI (default: port 8080 on its host)
    # an inventory (numaspark.hosts, not imported: it brings SSH and processes, which the
    # report, a reader of this module, never imports)
    hosts: object | None = None
    driver_host: str | None = None  # where executors reach the driver (None: by the route)
    executor_wait_s: float = DEFAULT_EXECUTOR_WAIT_S  # an application with no executor by then
    python: str | None = None  # the executors' Python on their hosts (spark.pyspark.python)
    node_topology: Topology | None = None  # --master: its hosts' topology (--xml, --synthetic)

    def __post_init__(self) -> None:
        if (self.master is None) == (self.hosts is None):
            raise UsageError("give one of --master and --hosts (or --hosts-file), not both")
        if self.master_ui is not None and not (self.master or "").startswith("spark://"):
            raise UsageError("--master-ui is a standalone master's web UI: give --master spark://")
        if self.python is not None and self.master is None:
            raise UsageError(
                "--python names the executors' Python on a cluster numaspark did not start "
                "(--master); on --hosts give each host's python in the hosts file"
            )
        if self.node_topology is not None and self.master is None:
            raise UsageError(GIVEN_ON_HOSTS)

    @property
    def name(self) -> str:
        """How runs and tables name it: the master URL, or the hosts."""
        if self.master is not None:
            return self.master
        return "hosts " + ",".join(h.name for h in self.hosts.hosts)

    @property
    def inventory(self):
        """Its hosts (None: a --master), with --driver-host as their driver address."""
        if self.hosts is not None and self.driver_host:
            return dataclasses.replace(self.hosts, driver_address=self.driver_host)
        return self.hosts

    @property
    def realiser(self) -> Realiser:
        return PLUGIN if self.master is not None else NUMACTL_ON_HOSTS

    def applied(self, request: RunRequest) -> RunRequest:
        """``request`` sent to this cluster: standalone mode, its address and waits, and the
        executors' Python as the Spark key that names it (the request's own key wins)."""
        conf = {"spark.pyspark.python": self.python} if self.python else {}
        return dataclasses.replace(
            request,
            layout=dataclasses.replace(request.layout, mode=Mode.STANDALONE),
            master=self.master,
            master_ui=self.master_ui,
            hosts=self.inventory,
            driver_host=self.driver_host,
            executor_wait_s=self.executor_wait_s,
            node_topology=self.node_topology,
            spark_conf={**conf, **request.spark_conf},
        )


@dataclass(frozen=True)
class Realiser:
    """Who places the JVMs on a cluster, and why they cannot realise a part of a plan (None:
    they can): the affinity plugin from inside executors a manager starts, or numactl on the
    workers numaspark starts on hosts over SSH."""

    name: str
    some_nodes: str | None  # executors kept to some of a host's nodes
    remote_memory: str | None  # CPUs on one node, memory on another
    # the kernel's NUMA balancing, switched per configuration: here only, for every realiser
    balancing: str = (
        "the kernel's NUMA balancing is switched on this machine only: on the cluster's hosts "
        "every configuration runs with it as the hosts have it"
    )


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
NUMACTL_ON_HOSTS = Realiser("numactl, on the workers numaspark starts", None, None)
