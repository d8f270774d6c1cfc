"""Test hosts on this machine: network namespaces, each with its own address, hostname and sshd.

This machine has one NUMA node and no other hosts, so multi-host tests make
their own (tests/netns.py's ``HostNetwork``): a bridge on an address range of their own
(10.213.N.0/24, N from the test's pid), one network namespace per host joined to it by a
veth pair, and in each an sshd from Debian's openssh-server, started on a host key and a
user key the test generates, in its own UTS namespace so that ``hostname``
names the host. The hosts are reachable only from this machine. They share
this machine's CPUs, memory and files: they prove deployment and binding,
never speed. Everything is removed on exit, processes first.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from netns import HostNetwork
from prereq import require

from numaspark.hosts import Host, Inventory, Ssh

SSHD = "/usr/sbin/sshd"


NEEDS = ("root", "ip", "unshare", "ssh", "ssh-keygen", "sshd")


class NamespaceHosts:
    """``with NamespaceHosts(2, tmp) as hosts:`` ... ``hosts.inventory`` names them."""

    def __init__(self, count: int, directory: Path) -> None:
        require(*NEEDS)  # a lane that runs these tests needs them: missing fails, in one line
        self.count = count
        self.dir = directory
        self.network = HostNetwork(count, "nsh", 213)  # the namespaces and their bridge
        self.names = [h.netns for h in self.network.hosts]
        self.sshd: dict[str, subprocess.Popen] = {}
        self.clients: dict[str, Ssh] = {}
        self.driver_address = self.network.here
        self.key = directory / "id_test"
        self.inventory = Inventory(
            tuple(
                Host(
                    name=f"host{i + 1}",
                    address=h.address,
                    user="root",
                    key=self.key,
                    known_hosts=directory / "known_hosts",
                )
                for i, h in enumerate(self.network.hosts)
            ),
            driver_address=self.driver_address,
        )

    def __enter__(self) -> NamespaceHosts:
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def netns(self, host: Host) -> str:
        return self.names[self.inventory.hosts.index(host)]

    def _create(self) -> None:
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key)], check=True
        )
        (self.dir / "authorized_keys").write_text((self.dir / "id_test.pub").read_text())
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        self.network.__enter__()
        for host in self.inventory.hosts:
            self.start_sshd(host)
        for host in self.inventory.hosts:
            self._wait_for_ssh(host)

    def start_sshd(self, host: Host) -> None:
        ns = self.netns(host)
        key = self.dir / f"hostkey-{host.name}"
        if not key.exists():
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True
            )
        config = self.dir / f"sshd-{host.name}.conf"
        config.write_text(
            f"ListenAddress {host.address}\nPort 22\nHostKey {key}\n"
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}\n"
            "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\n"
        )
        # its own UTS namespace: `hostname` on the host names it (the values are
        # positional parameters of sh, never spliced into the script)
        argv = [
            "ip",
            "netns",
            "exec",
            ns,
            "unshare",
            "--uts",
            "--",
            "/bin/sh",
            "-c",
            'hostname "$1" && exec "$2" -D -e -f "$3"',
            "sh",
            host.name,
            SSHD,
            str(config),
        ]
        log = (self.dir / f"sshd-{host.name}.log").open("a")
        self.sshd[host.name] = subprocess.Popen(
            argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL
        )

    def _wait_for_ssh(self, host: Host, timeout_s: float = 20.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            # one client per host (each makes a control directory that close() removes)
            if host.name not in self.clients:
                self.clients[host.name] = Ssh(host)
            client = self.clients[host.name]
            done = subprocess.run(
                client.argv(["true"]), capture_output=True, text=True, check=False
            )
            if done.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"sshd of {host.name} did not answer: {done.stderr[-300:]}")
            time.sleep(0.2)

    def pids(self, host: Host) -> list[int]:
        """Every process in the host's network namespace (its sshd included)."""
        return self.network.hosts[self.inventory.hosts.index(host)].pids()

    def kill_sshd(self, host: Host) -> None:
        """The host's sshd and every session it serves: SSH to it drops."""
        for pid in self.pids(host):
            try:
                if Path(f"/proc/{pid}/exe").resolve() == Path(SSHD).resolve():
                    os.kill(pid, signal.SIGKILL)
            except OSError:
                continue

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        self.network.close()  # every process on the hosts killed first
        for popen in self.sshd.values():
            if popen.poll() is None:
                popen.kill()
            popen.wait(timeout=10)
