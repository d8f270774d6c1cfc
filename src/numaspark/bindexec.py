"""numaspark's own binder: set this process's CPUs and memory policy, then exec a command.

    python -m numaspark.bindexec --cpus 0-3 --policy preferred --nodes 0 -- java ...

What ``numactl`` does for the JVMs numaspark starts, with nothing but the wheel: where
numactl is not installed (an edge node without root), numaspark prefixes the JVM's command
with this module instead. The CPUs are set with ``os.sched_setaffinity``, the memory policy
with the kernel's ``set_mempolicy``, and then the command replaces this process
(``os.execvp``), so the pid numaspark tracks is the command's, and both are inherited by
everything it starts (a worker's executors), as under numactl.

Each policy is the kernel call numactl makes for the same option:

=============  ==========================  ==========================  ================
policy         numactl                     set_mempolicy mode          numa_maps shows
=============  ==========================  ==========================  ================
bind           ``--membind=N``             ``MPOL_BIND``               ``bind:N``
preferred      ``--preferred=N``           ``MPOL_PREFERRED``          ``prefer:N``
interleave     ``--interleave=N``          ``MPOL_INTERLEAVE``         ``interleave:N``
local          ``--localalloc``            ``MPOL_LOCAL``              ``local``
=============  ==========================  ==========================  ================

It is argv only (no shell), and it parses its arguments with argparse rather than typer: it
runs before every JVM it binds, so it imports nothing it does not need.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import platform
import sys

from numaspark.errors import UsageError
from numaspark.topology.cpuset import CpuSet

#: The modes of ``set_mempolicy(2)`` (linux/mempolicy.h), by numaspark's policy names.
MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_INTERLEAVE, MPOL_LOCAL = 0, 1, 2, 3, 4
MODES = {
    "bind": MPOL_BIND,
    "preferred": MPOL_PREFERRED,
    "interleave": MPOL_INTERLEAVE,
    "local": MPOL_LOCAL,
}

#: ``set_mempolicy``'s system call number on each architecture (the kernel's syscall
#: tables). glibc has no wrapper for it (libnuma has, and libnuma is what we do without).
SYS_SET_MEMPOLICY = {
    "x86_64": 238,
    "aarch64": 237,
    "arm64": 237,
    "riscv64": 237,
    "ppc64le": 261,
    "ppc64": 261,
    "s390x": 270,
    "i686": 276,
    "i386": 276,
    "loongarch64": 237,
}

_ULONG_BITS = 8 * ctypes.sizeof(ctypes.c_ulong)


def nodemask(nodes: CpuSet) -> tuple[ctypes.Array | None, int]:
    """The kernel's node mask for ``nodes`` (unsigned longs, bit n for node n) and its
    ``maxnode``; (None, 0) for no nodes."""
    if not nodes:
        return None, 0
    words = max(nodes) // _ULONG_BITS + 1
    mask = (ctypes.c_ulong * words)()
    for node in nodes:
        mask[node // _ULONG_BITS] |= 1 << (node % _ULONG_BITS)
    # the kernel reads maxnode - 1 bits (an off-by-one kept for compatibility; libnuma passes
    # one more than its bits as well)
    return mask, words * _ULONG_BITS + 1


def set_mempolicy(mode: int, nodes: CpuSet) -> None:
    """Set this thread's memory policy (inherited across fork and exec).

    Called through libc's generic ``syscall()`` with ctypes: no maintained Python library
    exposes ``set_mempolicy`` (the os module has the CPU half, ``sched_setaffinity``, only).
    Raises OSError with the kernel's errno.
    """
    machine = platform.machine()
    number = SYS_SET_MEMPOLICY.get(machine)
    if number is None:
        raise UsageError(
            f"numaspark.bindexec knows no set_mempolicy system call number for "
            f"{machine}: install numactl there"
        )
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    mask, maxnode = nodemask(CpuSet() if mode == MPOL_LOCAL else nodes)
    result = libc.syscall(ctypes.c_long(number), ctypes.c_int(mode), mask, ctypes.c_ulong(maxnode))
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m numaspark.bindexec",
        description="Run a command on the given CPUs with the given memory policy (what "
        "numactl does, with nothing but Python).",
        epilog="Example: python -m numaspark.bindexec --cpus 0-3 --policy bind --nodes 0 "
        "-- java -version",
    )
    parser.add_argument("--cpus", help="the CPUs the command may run on, e.g. 0-3,8-11")
    parser.add_argument("--policy", choices=sorted(MODES), help="the memory policy")
    parser.add_argument("--nodes", help="the NUMA nodes the policy names, e.g. 0 or 0-1")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command")
    return parser


def _checked(args: argparse.Namespace) -> tuple[CpuSet | None, int | None, CpuSet, list[str]]:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise UsageError("no command: give it after '--', e.g. -- java -version")
    cpus = CpuSet.parse(args.cpus) if args.cpus is not None else None
    if cpus is not None and not cpus:
        raise UsageError("--cpus is empty: give CPUs, e.g. --cpus 0-3")
    nodes = CpuSet.parse(args.nodes) if args.nodes is not None else CpuSet()
    if args.policy is None:
        if args.nodes is not None:
            raise UsageError("--nodes needs --policy bind, preferred or interleave")
        return cpus, None, nodes, command
    if args.policy == "local":
        if nodes:
            raise UsageError(
                "--policy local names no nodes (memory comes from the node the "
                "thread runs on): leave out --nodes"
            )
    elif not nodes:
        raise UsageError(f"--policy {args.policy} needs --nodes, e.g. --nodes 0")
    return cpus, MODES[args.policy], nodes, command


def main(arguments: list[str] | None = None) -> int:
    args = _parser().parse_args(arguments)
    try:
        cpus, mode, nodes, command = _checked(args)
        if cpus is not None:
            try:
                os.sched_setaffinity(0, cpus)
            except OSError as exc:
                allowed = CpuSet(os.sched_getaffinity(0))
                raise UsageError(
                    f"cannot run on CPUs {cpus}: {exc.strerror} (this process "
                    f"may use CPUs {allowed})"
                ) from None
        if mode is not None:
            try:
                set_mempolicy(mode, nodes)
            except OSError as exc:
                raise UsageError(
                    f"cannot set memory policy {args.policy} on nodes {nodes}: "
                    f"{exc.strerror} (this machine's nodes: see numaspark "
                    "topology)"
                ) from None
    except UsageError as exc:
        print(f"numaspark.bindexec: {exc}", file=sys.stderr)
        return 2
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"numaspark.bindexec: cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached: execvp returns only by raising


if __name__ == "__main__":
    sys.exit(main())
