"""What a cluster numaspark did not start has (``--master``), read once for a run's plan.

One function for every kind, so that the run loop plans them all the same way
(`ClusterCapacity.place`, placement/cluster_capacity.py):

- ``spark://...``: the master's workers and their free cores and memory (spark/standalone_master.py);
- ``yarn``: the ResourceManager's running nodes and its allocation rules (spark/yarn.py);
- ``k8s://...``: the nodes' topology as given (``--xml``/``--synthetic``), else as learned,
  else, for a first ``--bind none`` run with a layout, that layout alone; never this
  machine's.

On each, the hosts' NUMA topologies the plugin reported in earlier runs (spark/learned_topology.py)
are added, unless one was given: with them, ``--bind node`` sizes each executor for the node
slice it will get.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from numaspark.errors import UsageError
from numaspark.placement import Binding, Layout
from numaspark.placement.cluster_capacity import ClusterCapacity, HostHas, Source
from numaspark.spark.learned_topology import cluster_name, load_learned
from numaspark.spark.standalone_master import StandingCluster
from numaspark.spark.yarn import YarnCluster
from numaspark.topology import Topology, load_synthetic

Say = Callable[[str], None]


def read_cluster(
    master: str,
    *,
    ui: str | None = None,
    given: Topology | None = None,
    layout: Layout | None = None,
    binding: Binding = Binding.NONE,
    warn: Say = lambda message: None,
    say: Say = lambda message: None,
) -> ClusterCapacity:
    """What the cluster at ``master`` has: read from its manager, with the hosts' topology
    ``given`` or learned. ``layout`` and ``binding``: a Kubernetes run's, planned from its
    layout alone when nothing says what its nodes have (said in one line)."""
    learned = load_learned(cluster_name(master), warn) if given is None else None
    if master.startswith("spark://"):
        has = StandingCluster.read(master, ui).has()
    elif master == "yarn":
        has = YarnCluster.read().has()
    else:  # Kubernetes: its nodes as given, else the largest learned, never this machine
        if learned is not None:
            learned = replace(learned, hosts=(learned.largest(),))
            host = learned.hosts[0]
            return ClusterCapacity(
                "k8s",
                master,
                (HostHas(host.host, topology=host.topology, source=Source.LEARNED),),
                learned=learned.say(),
            )
        if given is not None:
            return ClusterCapacity(
                "k8s", master, (HostHas("nodes", topology=given, source=Source.GIVEN),)
            )
        return ClusterCapacity(
            "k8s",
            master,
            (HostHas("nodes", topology=_layout_only(master, layout or Layout(), binding, say)),),
        )
    if given is not None:
        return has.with_topologies([("nodes", given)], Source.GIVEN)
    if learned is not None:
        return has.with_topologies(
            [(h.host, h.topology) for h in learned.hosts], Source.LEARNED, said=learned.say()
        )
    return has


def _layout_only(master: str, layout: Layout, binding: Binding, say: Say) -> Topology:
    """Kubernetes nodes whose topology nothing gives: a first run at --bind none, with the
    executors and cores asked for, is planned as one node that holds them (the plugin then
    reports the nodes' own); anything else is refused, never planned on this machine's
    topology."""
    cores = (layout.executors or 0) * (layout.cores_per_executor or 0)
    if binding is not Binding.NONE or not cores:
        raise UsageError(k8s_topology_missing(master))
    say(
        f"planned from your layout alone ({layout.executors} executor(s) of "
        f"{layout.cores_per_executor} cores): the plugin reports the nodes' topology for the "
        "next plan"
    )
    return load_synthetic(f"package:1 numa:1 core:{cores} pu:1")


def k8s_topology_missing(master: str) -> str:
    """Why a Kubernetes run is refused when nothing says what its nodes have."""
    return (
        f"--master {master}: numaspark does not know the topology of the cluster's nodes: "
        "give it with --xml NODE.xml (lstopo-no-graphics --of xml on a node) or --synthetic "
        "'pack:2 numa:2 core:12 pu:2', or learn it with a first run at --bind none "
        "--executors N --cores-per-executor C (the plugin reports each node's topology)"
    )
