"""Hosts: the scale-up servers of a cluster, reached over SSH.

An inventory names each host (a small TOML file, or ``--hosts a,b,c``): the
address SSH connects to and Spark binds to, the SSH user, port and key, and
where Spark and Python are on it (by default the same paths as here).

SSH is the system ``ssh`` client, run with argv lists. Why not a library
(paramiko, asyncssh): the system client already honours the user's
``~/.ssh/config``, agent and known_hosts; ``ControlMaster`` multiplexes every
command to a host over one connection; and a remote process we keep running is
one local ``ssh`` process, which the process tracker stops like any other and
whose end (a dropped connection included) the remote side sees as the end of
its stdin. Remote commands are argv lists too, quoted with ``shlex.join`` for
the remote shell, never strings built from input.
"""

from __future__ import annotations

import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from numaspark.errors import NumasparkError, UsageError
from numaspark.placement import Placement, placement_to_dict
from numaspark.topology import Topology
from numaspark.topology.hwloc import parse_xml

HOSTS_PLAN_SCHEMA = "numaspark.hosts-plan/1"
CONNECT_TIMEOUT_S = 5
_SPEC = re.compile(r"^(?:(?P<user>[^@\s:]+)@)?(?P<address>[^@\s:]+)(?::(?P<port>\d+))?$")


class HostError(NumasparkError):
    """A host cannot be reached, or a command on it failed."""

    exit_code = 1


@dataclass(frozen=True)
class Host:
    name: str  # what results and tables call it
    address: str  # what SSH connects to and Spark binds to on it
    user: str | None = None
    port: int = 22
    key: Path | None = None
    known_hosts: Path | None = None  # default: the user's own
    spark_home: str | None = None  # default: this machine's Spark
    python: str | None = None  # default: this machine's Python

    @property
    def target(self) -> str:
        return f"{self.user}@{self.address}" if self.user else self.address


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
    hosts = [_host({**defaults, **entry}, f"{path}: host {i + 1}") for i, entry in
             enumerate(entries)]  # fmt: skip
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
        hosts.append(_host({**(defaults or {}), "address": match["address"],
                            "user": match["user"] or (defaults or {}).get("user"),
                            "port": match["port"] or (defaults or {}).get("port", 22)},
                           f"--hosts {part}"))  # fmt: skip
    return _checked(Inventory(tuple(hosts)), "--hosts")


def _host(entry: dict, where: str) -> Host:
    unknown = set(entry) - _HOST_KEYS
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (known: "
                         f"{', '.join(sorted(_HOST_KEYS))})")  # fmt: skip
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

    return Host(name=str(entry.get("name") or address), address=address,
                user=str(entry["user"]) if entry.get("user") else None, port=port,
                key=path("key"), known_hosts=path("known_hosts"),
                spark_home=entry.get("spark_home"), python=entry.get("python"))  # fmt: skip


def _checked(inventory: Inventory, where: str) -> Inventory:
    names = [h.name for h in inventory.hosts]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"{where}: host name(s) {', '.join(twice)} given twice")
    return inventory


@dataclass
class Ssh:
    """Commands on one host over the system ssh client, multiplexed over one connection."""

    host: Host
    control_dir: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="numaspark-ssh-"))
    )

    def options(self) -> list[str]:
        options = ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                   "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3",
                   "-o", "ControlMaster=auto", "-o", f"ControlPath={self.control_dir}/%C",
                   "-o", "ControlPersist=60", "-o", "StrictHostKeyChecking=accept-new",
                   "-p", str(self.host.port)]  # fmt: skip
        if self.host.key is not None:
            options += ["-i", str(self.host.key), "-o", "IdentitiesOnly=yes"]
        if self.host.known_hosts is not None:
            options += ["-o", f"UserKnownHostsFile={self.host.known_hosts}"]
        return options

    def argv(self, remote: list[str]) -> list[str]:
        """The local argv that runs ``remote`` (an argv list) on the host."""
        return ["ssh", *self.options(), "-T", self.host.target, "--", shlex.join(remote)]

    def run(self, remote: list[str], timeout_s: float = 60.0, what: str | None = None,
            input: str | None = None) -> str:  # fmt: skip
        """Run ``remote`` to its end (``input`` on its stdin); its stdout. A failure is one
        `HostError` line."""
        what = what or remote[0]
        feed = {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
        try:
            done = subprocess.run(self.argv(remote), capture_output=True, text=True,
                                  timeout=timeout_s, check=False, **feed)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise HostError(
                f"{self.host.name}: {what} did not finish in {timeout_s:.0f} s"
            ) from None
        if done.returncode == 255:
            raise HostError(f"cannot reach {self.host.name} ({self.host.target} port "
                            f"{self.host.port}) over ssh: {_last(done.stderr)}")  # fmt: skip
        if done.returncode != 0:
            raise HostError(f"{self.host.name}: {what} failed (exit {done.returncode}): "
                            f"{_last(done.stderr)}")  # fmt: skip
        return done.stdout

    def close(self) -> None:
        """End the shared connection (a no-op when none is open)."""
        subprocess.run(["ssh", *self.options(), "-O", "exit", self.host.target],
                       capture_output=True, timeout=10, check=False)  # fmt: skip
        shutil.rmtree(self.control_dir, ignore_errors=True)


def _last(stderr: str) -> str:
    lines = [
        line for line in stderr.strip().splitlines() if "Warning: Permanently added" not in line
    ]
    return lines[-1] if lines else "no message"


def python_on(host: Host) -> str:
    return host.python or sys.executable


def read_topology(host: Host):
    """``host``'s topology over a connection of its own."""
    ssh = Ssh(host)
    try:
        return host_topology(ssh)
    finally:
        ssh.close()


def host_topology(ssh: Ssh):
    """The host's topology, from hwloc on it (``lstopo-no-graphics --of xml``)."""

    text = ssh.run(["lstopo-no-graphics", "--of", "xml"], what="lstopo-no-graphics (hwloc-nox)")
    return parse_xml(text, f"host:{ssh.host.name}")


@dataclass(frozen=True)
class HostPlan:
    """One host's plan, made from its own topology."""

    host: Host
    topology: Topology
    placement: Placement


def plan_hosts(inventory: Inventory, place: Callable[[Topology], Placement],
               topologies: dict[str, Topology] | None = None) -> list[HostPlan]:  # fmt: skip
    """One plan per host from the topology hwloc reads on it (hosts may differ);
    ``topologies`` (by host name) keeps those read before, and gains the new ones."""
    topologies = {} if topologies is None else topologies
    plans = []
    for host in inventory.hosts:
        if host.name not in topologies:
            topologies[host.name] = read_topology(host)
        topology = topologies[host.name]
        plans.append(HostPlan(host, topology, place(topology)))
    return plans


def merge(plans: list[HostPlan]) -> Placement:
    """One placement of every host's executors (numbered across hosts, each naming its host)
    and of the driver on this machine: what a run record keeps and a cluster must match."""
    from dataclasses import replace

    first = plans[0].placement
    executors = [replace(j, index=i, host=p.host.name)
                 for i, (p, j) in enumerate((p, j) for p in plans for j in p.placement.executors)]  # fmt: skip
    return replace(first, jvms=(first.driver, *executors),
                   topology_source=", ".join(p.topology.source for p in plans),
                   topology_fingerprint=",".join(dict.fromkeys(p.topology.fingerprint for p in plans)),
                   notes=tuple(dict.fromkeys(n for p in plans for n in p.placement.notes)))  # fmt: skip


def driver_address(inventory: Inventory) -> str:
    """Where executors on the hosts reach the driver on this machine: the inventory's
    ``driver_address``, else the local address the route to the first host leaves from."""
    if inventory.driver_address:
        return inventory.driver_address
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((inventory.hosts[0].address, 22))  # a UDP connect sends nothing
            return probe.getsockname()[0]
        except OSError as exc:
            raise HostError(f"no route to {inventory.hosts[0].name}: {exc} (set "
                            "driver_address in the hosts file)") from None  # fmt: skip


def plans_to_dict(plans: list[HostPlan], driver: str | None = None) -> dict:
    """The JSON of ``plan --hosts`` (docs/schemas.md, ``numaspark.hosts-plan/1``)."""

    return {
        "schema": HOSTS_PLAN_SCHEMA,
        "driver": {"host": socket.gethostname(), "address": driver},
        "hosts": [{"host": p.host.name, "address": p.host.address,
                   "topology_fingerprint": p.topology.fingerprint,
                   "plan": placement_to_dict(p.placement)} for p in plans],
    }  # fmt: skip
