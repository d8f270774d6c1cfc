"""Hosts: the scale-up servers of a cluster, reached over SSH.

An inventory names each host (a small TOML file, or ``--hosts a,b,c``): the
address SSH connects to and Spark binds to, the SSH user, port and key, and
where Spark and Python are on it (by default the same paths as here).

Commands reach a host through its shell (hosts/shell.py): `Ssh`, or `Local` for
this machine, with one set of operations, so one cluster (spark/standalone.py) runs on
either.
"""

from __future__ import annotations

import json
import re
import socket
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from numaspark import records
from numaspark.errors import UsageError
from numaspark.hosts.route import NoRouteError, route_source
from numaspark.hosts.shell import LOCAL, Host, HostError, Local, Shell, Ssh, python_on, shell_for
from numaspark.placement import Placement, placement_to_dict
from numaspark.placement.cluster_capacity import ClusterCapacity, HostHas, Source
from numaspark.topology import Topology
from numaspark.topology.hwloc import parse_xml
from numaspark.units import MIB

HOSTS_PLAN_SCHEMA = "numaspark.hosts-plan/1"
__all__ = [
    "LOCAL",
    "Host",
    "HostError",
    "HostPlan",
    "Inventory",
    "Local",
    "Shell",
    "Ssh",
    "host_of",
    "hosts_capacity",
    "driver_address",
    "load_inventory",
    "merge",
    "parse_hosts",
    "plan_hosts",
    "python_on",
    "shell_for",
]
_SPEC = re.compile(r"^(?:(?P<user>[^@\s:]+)@)?(?P<address>[^@\s:]+)(?::(?P<port>\d+))?$")


@dataclass(frozen=True)
class Inventory:
    hosts: tuple[Host, ...]
    driver_address: str | None = None  # where executors reach the driver; default: by route
    encrypt: bool = False  # RPC encryption (spark.network.crypto) besides authentication

    def get(self, name: str) -> Host:
        for host in self.hosts:
            if name in (host.name, host.address):
                return host
        known = ", ".join(h.name for h in self.hosts) or "none"
        raise UsageError(f"no host {name!r} in the inventory (it has: {known})")


_HOST_KEYS = {"name", "address", "user", "port", "key", "known_hosts", "spark_home", "python"}


def load_inventory(path: Path) -> Inventory:
    """A TOML inventory::

    driver_address = "10.0.0.1"      # optional
    encrypt = true                    # optional: RPC encryption too
    [defaults]                        # optional: for every host
    user = "spark"
    key = "~/.ssh/id_ed25519"
    [[host]]
    name = "node1"
    address = "10.0.0.11"
    port = 22
    """
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such hosts file (docs/hosts.md shows one)") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: not a TOML hosts file ({exc})") from None
    defaults = data.get("defaults", {})
    entries = data.get("host", [])
    if not isinstance(entries, list) or not entries or not isinstance(defaults, dict):
        raise UsageError(f"{path}: list each host as a [[host]] table with an address")
    hosts = [
        _host({**defaults, **entry}, f"{path}: host {i + 1}") for i, entry in enumerate(entries)
    ]
    encrypt = data.get("encrypt", False)
    if not isinstance(encrypt, bool):
        raise UsageError(f"{path}: encrypt = {encrypt!r}: write true or false")
    return _checked(Inventory(tuple(hosts), data.get("driver_address"), encrypt), str(path))


def parse_hosts(text: str, defaults: dict | None = None) -> Inventory:
    """``--hosts a,b,c``: each ``[user@]address[:port]``, named by its address."""
    hosts = []
    for part in (p.strip() for p in text.split(",")):
        match = _SPEC.match(part)
        if not match:
            raise UsageError(f"--hosts {text!r}: write hosts like node1,spark@node2:2222")
        hosts.append(
            _host(
                {
                    **(defaults or {}),
                    "address": match["address"],
                    "user": match["user"] or (defaults or {}).get("user"),
                    "port": match["port"] or (defaults or {}).get("port", 22),
                },
                f"--hosts {part}",
            )
        )
    return _checked(Inventory(tuple(hosts)), "--hosts")


def host_of(text: str, inventory: Inventory | None = None) -> Host:
    """``--host``: one host, a name (or address) in ``inventory`` (``--hosts-file``), else
    ``[user@]address[:port]``; a user or port given with an inventory's host replaces its
    own."""
    match = _SPEC.match(text.strip()) if "," not in text else None
    if inventory is not None:
        for host in inventory.hosts:
            if text.strip() in (host.name, host.address):
                return host
        if match is None or match["address"] == text.strip():
            return inventory.get(text.strip())  # "no host ... in the inventory"
        known = inventory.get(match["address"])
        return replace(
            known,
            user=match["user"] or known.user,
            port=int(match["port"]) if match["port"] else known.port,
        )
    if match is None:
        raise UsageError(f"--host {text!r}: give one host, [user@]address[:port], e.g. spark@node2")
    return parse_hosts(text.strip()).hosts[0]


def _host(entry: dict, where: str) -> Host:
    unknown = set(entry) - _HOST_KEYS
    if unknown:
        raise UsageError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: "
            f"{', '.join(sorted(_HOST_KEYS))})"
        )
    address = str(entry.get("address") or "").strip()
    if not address or address in ("0.0.0.0", "::") or not _SPEC.match(address):
        raise UsageError(f"{where}: give the host's address (a name or IP it is reached at)")
    try:
        port = int(entry.get("port") or 22)
    except (TypeError, ValueError):
        port = 0
    if not 0 < port < 65536:
        raise UsageError(f"{where}: port {entry.get('port')!r} is not a TCP port")

    def path(key: str) -> Path | None:
        return Path(str(entry[key])).expanduser() if entry.get(key) else None

    return Host(
        name=str(entry.get("name") or address),
        address=address,
        user=str(entry["user"]) if entry.get("user") else None,
        port=port,
        key=path("key"),
        known_hosts=path("known_hosts"),
        spark_home=entry.get("spark_home"),
        python=entry.get("python"),
    )


def _checked(inventory: Inventory, where: str) -> Inventory:
    names = [h.name for h in inventory.hosts]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"{where}: host name(s) {', '.join(twice)} given twice")
    return inventory


def read_topology(host: Host):
    """``host``'s topology over a connection of its own."""
    ssh = Ssh(host)
    try:
        return host_topology(ssh)
    finally:
        ssh.close()


#: On a host: hwloc's XML where lstopo is installed, else numaspark's own reading of the
#: host's sysfs as JSON (``python -m numaspark.topology``): a host needs only the wheel.
HOST_TOPOLOGY = (
    "if command -v lstopo-no-graphics >/dev/null 2>&1; then "
    'exec lstopo-no-graphics --of xml; else exec "$1" -m numaspark.topology; fi'
)


def host_topology(ssh: Ssh):
    """The host's topology, from hwloc on it (``lstopo-no-graphics --of xml``), or from its
    sysfs as numaspark reads it there where it has no hwloc."""
    text = ssh.run(
        ["sh", "-c", HOST_TOPOLOGY, "sh", python_on(ssh.host)],
        what="reading its topology (hwloc's lstopo-no-graphics, or numaspark installed "
        "for the host's python)",
    )
    if text.lstrip().startswith("{"):
        try:
            read = records.load(Topology, json.loads(text))
        except (ValueError, KeyError, TypeError) as exc:
            raise HostError(
                f"{ssh.host.name}: its topology is not numaspark's JSON ({exc})"
            ) from None
        return replace(read, source=f"host:{ssh.host.name} (sysfs)")
    return parse_xml(text, f"host:{ssh.host.name}")


@dataclass(frozen=True)
class HostPlan:
    """One host's plan, made from its own topology."""

    host: Host
    topology: Topology
    placement: Placement


def hosts_capacity(
    inventory: Inventory, topologies: dict[str, Topology] | None = None
) -> ClusterCapacity:
    """What the inventory's hosts have: each one's topology, read with hwloc on it over SSH
    once (``topologies``, by host name, keeps those read before, and gains the new ones), and
    its allowed CPUs and memory."""
    topologies = {} if topologies is None else topologies
    for host in inventory.hosts:
        if host.name not in topologies:
            topologies[host.name] = read_topology(host)
    return ClusterCapacity(
        "hosts",
        ", ".join(h.address for h in inventory.hosts),
        tuple(
            HostHas(
                h.name,
                cores=len(topologies[h.name].allowed_cpus),
                memory_mb=(topologies[h.name].total_memory or 0) // MIB,
                topology=topologies[h.name],
                source=Source.READ,
            )
            for h in inventory.hosts
        ),
    )


def plan_hosts(
    inventory: Inventory,
    place: Callable[[Topology], Placement],
    topologies: dict[str, Topology] | None = None,
) -> list[HostPlan]:
    """One plan per host from its own topology (hosts may differ: `hosts_capacity`):
    ``place(host, topology)``."""
    has = hosts_capacity(inventory, topologies)
    plans = []
    for host in inventory.hosts:
        topology = has.host(host.name).topology
        plans.append(HostPlan(host, topology, place(host, topology)))
    return plans


def merge(plans: list[HostPlan]) -> Placement:
    """One placement of every host's executors (numbered across hosts, each naming its host)
    and of the driver on this machine: what a run record keeps and a cluster must match."""
    first = plans[0].placement
    executors = [
        replace(j, index=i, host=p.host.name)
        for i, (p, j) in enumerate((p, j) for p in plans for j in p.placement.executors)
    ]
    return replace(
        first,
        jvms=(first.driver, *executors),
        topology_source=", ".join(p.topology.source for p in plans),
        topology_fingerprint=",".join(dict.fromkeys(p.topology.fingerprint for p in plans)),
        notes=tuple(dict.fromkeys(n for p in plans for n in p.placement.notes)),
    )


def driver_address(inventory: Inventory) -> str:
    """Where executors on the hosts reach the driver on this machine: the inventory's
    ``driver_address``, else the local address the route to the first host leaves from."""
    if inventory.driver_address:
        return inventory.driver_address
    try:
        return route_source(inventory.hosts[0].address)
    except NoRouteError as exc:
        raise HostError(
            f"{inventory.hosts[0].name}: {exc} (set driver_address in the hosts file)"
        ) from None


def plans_to_dict(plans: list[HostPlan], driver: str | None = None) -> dict:
    """The JSON of ``plan --hosts`` (docs/schemas.md, ``numaspark.hosts-plan/1``)."""

    return {
        "schema": HOSTS_PLAN_SCHEMA,
        "driver": {"host": socket.gethostname(), "address": driver},
        "hosts": [
            {
                "host": p.host.name,
                "address": p.host.address,
                "topology_fingerprint": p.topology.fingerprint,
                "plan": placement_to_dict(p.placement),
            }
            for p in plans
        ],
    }
