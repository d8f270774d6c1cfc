"""What the test lanes need, and one line that names it when it is missing.

docs/tests.md's table of lanes says what each needs. A test that needs something calls
``require(...)``: where it is missing, the test FAILS in one line that names it and how to get
it (``pytest.fail(..., pytrace=False)``), never a silent skip, so that no lane goes green
having proved nothing. The only skips left are those docs/tests.md names: a machine with fewer than
two CPUs allowed, and a kernel without NUMA balancing (neither can be installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

SETUP = "NUMASPARK_SETUP_TESTS=1 bash scripts/setup.sh installs it (as root)"


def _tool(name: str) -> Callable[[], bool]:
    return lambda: shutil.which(name) is not None


# name -> (is it here?, how to get it)
PREREQUISITES: dict[str, tuple[Callable[[], bool], str]] = {
    "root": (
        lambda: os.geteuid() == 0,
        "run the tests as root: network namespaces and kernel settings need it",
    ),
    "numactl": (_tool("numactl"), SETUP),
    "hwloc-calc": (_tool("hwloc-calc"), SETUP),
    "perf": (_tool("perf"), SETUP),
    "ip": (_tool("ip"), "apt-get install iproute2"),
    "unshare": (_tool("unshare"), "apt-get install util-linux"),
    "nsenter": (_tool("nsenter"), "apt-get install util-linux"),
    "ssh": (_tool("ssh"), SETUP),
    "ssh-keygen": (_tool("ssh-keygen"), SETUP),
    "sshd": (lambda: Path("/usr/sbin/sshd").exists(), SETUP),
    "qemu-system-x86_64": (_tool("qemu-system-x86_64"), SETUP),
    "cc": (_tool("cc"), SETUP),  # the guest's stress boot compiles ymmcheck.c, xmodcheck.c
    "apt-get": (
        _tool("apt-get"),
        "the guest's kernel is fetched with apt-get download: "
        "run the long lane on Debian or Ubuntu",
    ),
    "setpriv": (_tool("setpriv"), "apt-get install util-linux"),
    "useradd": (_tool("useradd"), "apt-get install passwd"),
    "system-python": (
        lambda: _system_python_ok(),
        "the install test needs the system's own /usr/bin/python3, 3.11 or newer, "
        "with venv and ensurepip (apt-get install python3-venv)",
    ),
    "go": (
        _tool("go"),
        "install Go (https://go.dev/doc/install): the long lane builds tools/kubelet-check with it",
    ),
}


def _system_python_ok() -> bool:
    python = Path("/usr/bin/python3")
    if not python.exists():
        return False
    check = "import sys, venv, ensurepip; assert sys.version_info >= (3, 11)"
    return (
        subprocess.run([str(python), "-c", check], capture_output=True, check=False).returncode == 0
    )


def missing(*names: str) -> list[str]:
    """The prerequisites among ``names`` that are not here, as one-line reasons."""
    unknown = [n for n in names if n not in PREREQUISITES]
    assert not unknown, f"no such prerequisite: {unknown}"
    return [f"{n} missing: {PREREQUISITES[n][1]}" for n in names if not PREREQUISITES[n][0]()]


def require(*names: str) -> None:
    """Fail the calling test, in one line, unless every prerequisite in ``names`` is here."""
    reasons = missing(*names)
    if reasons:
        pytest.fail("; ".join(reasons), pytrace=False)
