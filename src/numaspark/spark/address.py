"""Where the driver listens: an address the executors of its cluster can reach.

Executors connect back to the driver (its RPC endpoint and block manager), so for a
cluster numaspark did not start (``--master``) the driver listens on the local address
the route to the cluster leaves from (hosts/route.py, the same as for ``--hosts``). The
cluster is the standalone master's host (each master of an HA URL), YARN's
ResourceManager (from ``HADOOP_CONF_DIR``'s yarn-site.xml) or the Kubernetes API server.
A cluster on this machine's loopback keeps the driver on loopback, and ``--driver-host``
overrides the choice. On Kubernetes the executors are pods, which reach no loopback: when
this machine is one of the cluster's nodes (a node's InternalIP is one of its addresses, as
the API lists them) the driver listens on that address, which every CNI routes pods to. A
user's own ``spark.driver.host`` and ``spark.driver.bindAddress`` win over both (they know
their network); numaspark never binds 0.0.0.0 unless asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import psutil

from numaspark.errors import NumasparkError, UsageError
from numaspark.hosts.route import NoRouteError, is_loopback, route_source
from numaspark.spark.home import LOOPBACK
from numaspark.spark.kube import Kube
from numaspark.spark.yarn import RM_KEY, conf_dir, read_site

HOST_KEY = "spark.driver.host"  # what executors are told to connect to
BIND_KEY = "spark.driver.bindAddress"  # what the driver binds (default: its host)


@dataclass(frozen=True)
class DriverAddress:
    """The address numaspark gives the driver, and why, in words."""

    address: str
    why: str

    def conf(self, user: dict[str, str]) -> dict[str, str]:
        """numaspark's driver settings, where ``user`` (every setting the user gave) has none
        of its own: a user's host alone is also where Spark binds, so neither key is set."""
        if HOST_KEY in user:
            return {}
        if BIND_KEY in user:
            return {HOST_KEY: self.address}
        return {HOST_KEY: self.address, BIND_KEY: self.address}

    def line(self, user: dict[str, str]) -> str:
        """One line: the address the driver listens on, and why."""
        host, bind = user.get(HOST_KEY), user.get(BIND_KEY)
        if host is None and bind is None:
            return f"the driver listens on {self.address}: {self.why}"
        if bind is None:
            return f"the driver listens on {host}: your {HOST_KEY}"
        told = f"your {HOST_KEY}" if host else f"{self.why}"
        return (
            f"the driver listens on {bind} (your {BIND_KEY}); executors reach it at "
            f"{host or self.address} ({told})"
        )


def local_ip(conf: dict[str, str], default: str = LOOPBACK) -> str:
    """What Spark's own servers here (the UI among them) bind to: SPARK_LOCAL_IP, the
    driver's bind address as the final settings give it."""
    return conf.get(BIND_KEY) or conf.get(HOST_KEY) or default


def cluster_hosts(master: str) -> list[str]:
    """The hosts that name the cluster ``master`` points at: each standalone master, YARN's
    ResourceManager, the Kubernetes API server (empty: nothing to route to)."""
    if master.startswith("spark://"):
        return [_host_of(part) for part in master.removeprefix("spark://").split(",") if part]
    if master.startswith("k8s://"):
        url = master.removeprefix("k8s://")
        return [urlsplit(url if "://" in url else f"https://{url}").hostname or ""]
    if master == "yarn":
        directory = conf_dir()
        site = directory / "yarn-site.xml" if directory else None
        if site is None or not site.is_file():
            return []  # YarnCluster.read says what is missing
        return [_host_of(read_site(site)[RM_KEY])]
    return []


def _host_of(address: str) -> str:
    """``HOST`` of ``HOST:PORT`` or ``[V6]:PORT``."""
    host = address.rpartition(":")[0] if ":" in address else address
    return host.strip("[]")


def address_for(master: str, driver_host: str | None = None) -> DriverAddress:
    """Where the driver of an application on ``master`` listens: ``driver_host`` when given,
    loopback for a cluster on this machine's loopback, else the local address the route to
    the cluster (its first master) leaves from."""
    if driver_host:
        return DriverAddress(driver_host, "--driver-host")
    unknown = ""
    if master.startswith("k8s://"):
        on_node = _node_address(master)
        if isinstance(on_node, DriverAddress):
            return on_node
        unknown = (
            " (executor pods reach no loopback, and no node of the cluster is this machine: "
            f"{on_node}; give --driver-host)"
        )
    hosts = cluster_hosts(master)
    if not hosts or all(is_loopback(h) for h in hosts):
        return DriverAddress(LOOPBACK, "the cluster is on this machine's loopback" + unknown)
    found: dict[str, str] = {}
    for host in hosts:
        try:
            found.setdefault(route_source(host), host)
        except NoRouteError as exc:
            raise UsageError(
                f"--master {master}: {exc}: give the address its executors reach "
                "this machine at with --driver-host"
            ) from None
    address, host = next(iter(found.items()))
    why = f"the route to {host} leaves from it"
    if len(found) > 1:
        others = ", ".join(f"{h} from {a}" for a, h in list(found.items())[1:])
        why += f" (the routes to {others}: give --driver-host to choose)"
    return DriverAddress(address, why)


def _node_address(master: str) -> DriverAddress | str:
    """On Kubernetes, the address of the node this machine is (a node's InternalIP or
    ExternalIP among this machine's addresses), or why none was found."""
    try:
        nodes = Kube(master).node_addresses()
    except NumasparkError as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 (the client's many errors: unreachable, refused, TLS)
        return f"its API did not answer ({type(exc).__name__})"
    mine = {a.address for addresses in psutil.net_if_addrs().values() for a in addresses}
    for name, addresses in nodes.items():
        for address in addresses:
            if address in mine:
                return DriverAddress(
                    address, f"this machine is the cluster's node {name}: its pods reach it there"
                )
    return f"none of its nodes ({', '.join(nodes) or 'none'}) has an address of this machine"
