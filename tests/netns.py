"""Hosts on this machine, made of namespaces: the one module that makes them (as root).

This machine has no other hosts, so the tests that need some make them here, each
``NamespaceHost`` a network namespace with its own address, joined to the root namespace by
a veth pair (``OtherHost``, one host at 10.214.N.2; ``NamespaceCluster``, tests/nscluster.py,
at 10.215.N.2) or to a bridge with the others (``HostNetwork``: tests/testhosts.py's SSH
hosts on 10.213.N.0/24, tests/test_spark_hosts.py's Spark hosts on 10.216.N.0/24). N comes
from the test's pid; only these ranges and loopback are contacted.

A host may also be given a hostname and a filesystem view of its own: a process that holds a
UTS namespace (``hostname`` names the host) and a mount namespace in which the host's own
directory (a directory here, so that the test can read what the host wrote) is its ``/tmp``
and its ``/etc/hosts`` names every host of the network. What the host runs enters those
namespaces (``host.argv``), and what it starts inherits them. The driver's side keeps this
machine's ``/tmp``: a path under it exists only there, so nothing passes because the hosts
share this machine's files.

Namespaces share this machine's CPUs, memory and the rest of its files (Java, Spark): they
prove addresses, routes, paths and binding, never speed. Everything is removed on exit,
processes first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from prereq import require

NEEDS = ("root", "ip")
OWN_VIEW_NEEDS = ("unshare", "nsenter")  # a hostname and a /tmp of its own

# the holder: enters a UTS and a mount namespace of its own (under ip netns exec, inside the
# host's network namespace), names the host, mounts its own /tmp and /etc/hosts, writes its
# pid (in its /tmp, once mounted) and sleeps; the values are sh's positional parameters, never spliced into the script
# After the first three, pairs of (a directory installed here under /tmp, its path inside the
# host's /tmp): bound there before the host's /tmp is bound (recursively) over /tmp.
_HOLDER = (
    'hostname "$1" && mount --bind "$3" /etc/hosts && root="$2" && shift 3 '
    '&& while [ $# -gt 1 ]; do mkdir -p "$root/$2" && mount --bind "$1" "$root/$2" '
    "|| exit 1; shift 2; done "
    '&& mount --rbind "$root" /tmp && echo $$ > /tmp/.holder && exec sleep infinity'
)


def under_tmp(paths: list[Path]) -> list[tuple[Path, str]]:
    """Of ``paths`` (software installed here: Spark, the mini YARN's launcher), those under
    this machine's /tmp, each with its path relative to /tmp. A host of a real cluster has its
    software installed at the same path as every other host; a checkout (and its venv) under
    /tmp, as a fresh clone in /tmp is, would otherwise be hidden by the host's own /tmp."""
    found = []
    for path in paths:
        resolved = Path(path).resolve()
        if resolved.is_relative_to("/tmp"):
            found.append((resolved, str(resolved.relative_to("/tmp"))))
    return found


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _tag(digits: int) -> str:
    return f"{os.getpid() % 10**digits:0{digits}d}"


def subnet(second: int) -> str:
    """The test's own /24 in 10.``second``.0.0/16 (the third byte from its pid)."""
    return f"10.{second}.{os.getpid() % 250 + 1}"


@dataclass
class NamespaceHost:
    """One host: the network namespace ``netns`` at ``address``, with the link ``veth`` (its
    end here); with a ``hostname``, also a UTS and a mount namespace of its own (`own_view`)."""

    netns: str
    address: str
    veth: str
    hostname: str | None = None
    root: Path | None = None  # here, the directory that is the host's /tmp
    holder: subprocess.Popen | None = field(default=None, repr=False)
    holder_pid: int | None = None

    def link(self, here: str | None = None, bridge: str | None = None) -> None:
        """The namespace and its veth pair: this end on ``bridge``, or given ``here`` (the
        root namespace's address on the pair); the host's end is its eth0 at ``address``."""
        ip("netns", "add", self.netns)
        ip("link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.netns)
        if bridge is not None:
            ip("link", "set", self.veth, "master", bridge, "up")
        else:
            ip("addr", "add", f"{here}/24", "dev", self.veth)
            ip("link", "set", self.veth, "up")
        ip("-n", self.netns, "addr", "add", f"{self.address}/24", "dev", "eth0")
        ip("-n", self.netns, "link", "set", "eth0", "up")
        ip("-n", self.netns, "link", "set", "lo", "up")

    def own_view(
        self,
        hostname: str,
        root: Path,
        hosts_file: Path,
        installed: list[Path] | None = None,
        timeout_s: float = 10.0,
    ) -> None:
        """Name the host ``hostname``, with ``root`` as its /tmp and ``hosts_file`` as its
        /etc/hosts, held by a process that everything the host runs then enters. The
        ``installed`` directories are at their own paths there too, even under /tmp."""
        require(*OWN_VIEW_NEEDS)
        root.mkdir(parents=True, exist_ok=True)
        root.chmod(0o1777)  # a /tmp
        pid_file = root / ".holder"
        pid_file.unlink(missing_ok=True)
        self.hostname, self.root = hostname, root
        self.holder = subprocess.Popen(
            [
                "ip",
                "netns",
                "exec",
                self.netns,
                "unshare",
                "--uts",
                "--mount",
                "--propagation",
                "private",
                "--",
                "/bin/sh",
                "-c",
                _HOLDER,
                "sh",
                hostname,
                str(root),
                str(hosts_file),
                *(str(x) for pair in under_tmp(installed or []) for x in pair),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout_s
        while not (pid_file.exists() and pid_file.read_text().strip()):
            if self.holder.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"{hostname}'s namespaces did not start: "
                    f"{self.holder.stderr.read().decode()[-500:]}"
                )
            time.sleep(0.05)
        self.holder_pid = int(pid_file.read_text())

    def argv(self, argv: list[str]) -> list[str]:
        """``argv`` run on the host: in its namespaces, from its /tmp where it has its own."""
        if self.holder_pid is None:
            return ["ip", "netns", "exec", self.netns, *argv]
        return [
            "nsenter",
            "--target",
            str(self.holder_pid),
            "--net",
            "--uts",
            "--mount",
            "--wd=/tmp",
            "--",
            *argv,
        ]

    def pids(self) -> list[int]:
        """Every process on the host (in its network namespace)."""
        out = subprocess.run(
            ["ip", "netns", "pids", self.netns], capture_output=True, text=True, check=False
        ).stdout
        return [int(p) for p in out.split()]

    def kill_all(self, rounds: int = 3) -> None:
        """SIGKILL to every process on the host, and to what the first kill's children started
        meanwhile."""
        for _ in range(rounds):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
        if self.holder is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.holder.wait(timeout=10)
            self.holder.stderr.close()

    def remove(self) -> None:
        """Its processes killed, then the namespace and the link removed."""
        self.kill_all()
        subprocess.run(["ip", "netns", "del", self.netns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True, check=False)


class OtherHost(NamespaceHost):
    """``with OtherHost() as host:`` one host at ``host.address`` (10.214.N.2), joined to this
    machine's end of the link, ``host.here``; ``host.argv(cmd)`` runs ``cmd`` on it."""

    def __init__(self, second: int = 214, prefix: str = "nsh4") -> None:
        require(*NEEDS)  # a lane that runs these tests needs them (tests/prereq.py)
        net = subnet(second)
        tag = _tag(5)
        super().__init__(netns=f"{prefix}-{tag}", address=f"{net}.2", veth=f"vh{prefix[-1]}{tag}")
        self.here = f"{net}.1"
        self.name = self.netns

    def __enter__(self) -> OtherHost:
        try:
            self.link(here=self.here)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.remove()


class HostNetwork:
    """``with HostNetwork(2, prefix, second) as net:`` ``net.hosts``, each on a bridge at
    10.``second``.N.(11 + i), this machine at .1 (``net.here``). With ``own_view`` (a
    directory), each also has a hostname (``names``), a /tmp of its own (``own_view/NAME``)
    and an /etc/hosts that names every host and this machine (``driver``); ``installed``:
    software each host has at the same path as here (Spark's home), kept even under /tmp."""

    def __init__(
        self,
        count: int,
        prefix: str,
        second: int,
        names: list[str] | None = None,
        own_view: Path | None = None,
        installed: list[Path] | None = None,
    ) -> None:
        require(*NEEDS)
        net = subnet(second)
        tag = _tag(4)
        self.here = f"{net}.1"
        self.bridge = f"br{prefix[-1]}{tag}"
        self.names = names or [f"host{i + 1}" for i in range(count)]
        self.own_view = own_view
        self.installed = installed or []
        self.hosts = [
            NamespaceHost(
                netns=f"{prefix}{tag}{chr(97 + i)}",
                address=f"{net}.{11 + i}",
                veth=f"v{prefix[-1]}{tag}{chr(97 + i)}",
            )
            for i in range(count)
        ]

    def __enter__(self) -> HostNetwork:
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _create(self) -> None:
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.here}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for host in self.hosts:
            host.link(bridge=self.bridge)
        if self.own_view is not None:
            self.own_view.mkdir(parents=True, exist_ok=True)
            hosts_file = self.own_view / "hosts"
            hosts_file.write_text(
                "127.0.0.1 localhost\n"
                + "".join(f"{h.address} {n}\n" for h, n in zip(self.hosts, self.names, strict=True))
                + f"{self.here} driver\n"
            )
            for host, name in zip(self.hosts, self.names, strict=True):
                host.own_view(name, self.own_view / name, hosts_file, self.installed)

    def host(self, name: str) -> NamespaceHost:
        return self.hosts[self.names.index(name)]

    def close(self) -> None:
        for host in self.hosts:
            host.kill_all()
        for host in self.hosts:
            host.remove()
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True, check=False)


def drivers_here() -> list[int]:
    """spark-submit JVMs in this (root) network namespace: a namespace host's are left out."""
    here = os.readlink("/proc/self/ns/net")
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        with contextlib.suppress(psutil.Error, OSError):
            if (
                "org.apache.spark.deploy.SparkSubmit" in " ".join(proc.info["cmdline"] or [])
                and os.readlink(f"/proc/{proc.pid}/ns/net") == here
            ):
                found.append(proc.pid)
    return found


def gone_within(what, timeout_s: float) -> float | None:
    """When (monotonic) ``what()`` is first empty, or None if it is not within ``timeout_s``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if not what():
            return time.monotonic()
        time.sleep(0.1)
    return None
