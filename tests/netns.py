"""One other host on this machine: a network namespace with its own address, joined to the
root namespace by a veth pair (as root). Simpler than tests/testhosts.py's hosts (no
bridge, no sshd): for a cluster that lives at another address and is reached only over
the network. The addresses are the suite's own range (10.214.N.0/24, N from the pid);
only they and loopback are contacted. Namespaces share this machine's CPUs, memory and
files: they prove addresses, routes and binding, never speed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

from prereq import require


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


class OtherHost:
    """``with OtherHost() as host:`` ``host.address`` is the namespace's, ``host.here`` this
    machine's end of the link; ``host.argv(cmd)`` runs ``cmd`` inside it."""

    def __init__(self) -> None:
        require("root", "ip")  # a lane that runs these tests needs them (tests/prereq.py)
        tag = f"{os.getpid() % 100000:05d}"
        subnet = f"10.214.{os.getpid() % 250 + 1}"
        self.name = f"nsh4-{tag}"
        self.veth = f"vh4{tag}"
        self.here = f"{subnet}.1"
        self.address = f"{subnet}.2"

    def __enter__(self) -> OtherHost:
        try:
            _ip("netns", "add", self.name)
            _ip(
                "link", "add", self.veth, "type", "veth", "peer", "name", "eth0", "netns", self.name
            )
            _ip("addr", "add", f"{self.here}/24", "dev", self.veth)
            _ip("link", "set", self.veth, "up")
            _ip("-n", self.name, "addr", "add", f"{self.address}/24", "dev", "eth0")
            _ip("-n", self.name, "link", "set", "eth0", "up")
            _ip("-n", self.name, "link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def argv(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    def pids(self) -> list[int]:
        """Every process in the namespace."""
        out = subprocess.run(["ip", "netns", "pids", self.name], capture_output=True,
                             text=True, check=False).stdout  # fmt: skip
        return [int(p) for p in out.split()]

    def close(self) -> None:
        """Every process in it killed, then the namespace and the link removed."""
        for _ in range(3):  # what the first kill's children started meanwhile
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", self.veth], capture_output=True, check=False)
