"""The NUMA guest behind ``scripts/numa-guest.sh``: this machine itself, booted under QEMU's
software emulation with 1 to 4 NUMA nodes (node i: ``--cpus-per-node`` vCPUs and
``--memory-per-node`` of memory; two nodes of one CPU and 2 GiB by default), running any command.

No image is built: the guest's root file system is this machine's own ``/``, shared read-only
over virtio-9p with a tmpfs overlay on top, so the guest runs the very numaspark, venv, Java,
numactl and hwloc that the other tests use. What it needs of its own is a kernel, from Debian's
``linux-image-amd64`` package (``apt-get download``, about 70 MB), and an initramfs of a few
kilobytes: busybox (from ``busybox-static``), the modules for virtio-9p and overlayfs, and an
``/init`` that mounts them and switches to ``init.sh``. Both are kept in the cache
(``~/.cache/numaspark/numa-guest``) while their inputs are unchanged.

The command travels in a shell script on the shared root (the kernel command line cannot carry
spaces); ``init.sh`` runs it between ``NUMASPARK-GUEST-BEGIN`` and ``NUMASPARK-GUEST-EXIT N`` on
the serial console and powers off; :func:`run_in_guest` echoes what lies between and returns N.
Needs ``qemu-system-x86_64`` and ``apt-get``; not root. By hand::

    bash scripts/numa-guest.sh --nodes 2 -- numactl --hardware

The placement checks (``checks.py``, run by tests/test_numa_guest.py through the script) print
``NUMASPARK-CHECK PASS|FAIL name: details`` each. The bound JVMs are started by ``numaspark launch`` (the same tracked, numactl-prefixed launch
path as Spark's workers) running a small Java program that touches memory, not by a Spark
standalone cluster: under software emulation a Spark master took 86 s to start and its two
workers had not registered 90 s later. The one Spark check on by default is the affinity
plugin's node binding (``plugin-node-binding``, issue 32: ``NUMASPARK_GUEST_PLUGIN=0`` leaves it
out): a plain master and worker (daemons C1-only, 256 MiB heaps) up in 42 to 110 s, and an
application whose first job ends 190 to 400 s after submission, so a boot takes 5 to 11 minutes
(``timeout_s`` allows 45).

``--gpus-per-node G`` (``Shape.gpus_per_node``) gives each node G stand-in GPUs, display
controllers behind a PCI expander bridge of that node (``Shape.qemu_devices``), for the proof
that executors bind by their devices (``checks.py devices``, gpus.py; issue 50).

The guest runs the repository it was booted from: the command script puts its ``src/`` first on
PYTHONPATH, so a git worktree tests its own code with the main checkout's venv.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = Path(os.environ.get("NUMASPARK_GUEST_CACHE", Path.home() / ".cache/numaspark/numa-guest"))
KERNEL = "linux-image-amd64"  # Debian's current kernel (a metapackage naming the real one)
BUSYBOX = "busybox-static"
MODULES = (  # and what they depend on
    "virtio_pci",
    "9pnet_virtio",
    "9p",
    "overlay",
    # the local Kubernetes' pod network and kube-proxy's rules (tests/guest/kube.py): the
    # bridge and its veths, iptables over nf_tables and the matches kube-proxy writes
    "bridge",
    "veth",
    "crc32c_generic",  # libcrc32c's (nf_tables') soft dependency, which depends= does not name
    "nf_tables",
    "nft_compat",
    "nft_chain_nat",
    "nf_nat",
    "nf_conntrack",
    "xt_conntrack",
    "xt_comment",
    "xt_mark",
    "xt_addrtype",
    "xt_nat",
    "xt_statistic",
    "xt_MASQUERADE",
    "xt_tcpudp",
    "xt_multiport",
    "ipt_REJECT",
    "ip6t_REJECT",
)
# The default shape: two nodes (node i: CPU i and NODE_MIB of memory); NODE_MIB is the planner's
# auto heap beside a driver and, in the plugin's proof, an executor beside the unbound daemons
# and driver. scripts/numa-guest.sh --nodes/--cpus-per-node/--memory-per-node change it.
NODES = 2
NODE_MIB = int(os.environ.get("NUMASPARK_GUEST_NODE_MIB", "2048"))
MAX_NODES = 4
MAX_GPUS_PER_NODE = 4
PXB_BUS_STEP = 16  # the expander bridges open PCI buses 16, 32, ... (the last node's first)

# PID 1 of the initramfs: the modules, this machine's / read-only over 9p (tag "host") under a
# tmpfs overlay, then init.sh of the repository the test runs from (NUMASPARK_REPO, from the
# kernel command line) as the real PID 1.
INITRAMFS_INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
for module in $(cat /modules/order); do insmod /modules/$module.ko || exit 1; done
mkdir -p /lower /layer /newroot
mount -t 9p -o ro,trans=virtio,version=9p2000.L,cache=loose,msize=512000 host /lower
mount -t tmpfs -o size=512m tmpfs /layer
mkdir -p /layer/upper /layer/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/layer/upper,workdir=/layer/work /newroot
umount /proc
exec switch_root /newroot "$NUMASPARK_REPO/tests/guest/init.sh"
"""


def run(argv: list[str | Path], **kwargs) -> subprocess.CompletedProcess:
    print("+", " ".join(str(a) for a in argv), file=sys.stderr, flush=True)
    return subprocess.run([str(a) for a in argv], check=True, **kwargs)


def download(package: str, directory: Path) -> Path:
    """``apt-get download`` into ``directory`` (the machine's own apt sources: no host name here)."""
    try:
        run(["apt-get", "download", "-q", package], cwd=directory, capture_output=True)
    except subprocess.CalledProcessError:  # a fresh machine may not have its package lists yet
        run(["apt-get", "update", "-q"], capture_output=True)
        run(["apt-get", "download", "-q", package], cwd=directory, capture_output=True)
    (deb,) = directory.glob(f"{package}_*.deb")
    return deb


def module_order(modules_dir: Path, wanted: tuple[str, ...]) -> list[Path]:
    """``wanted`` and their dependencies, each after what it depends on.

    Read from each module's ``depends=`` field: the package ships no modules.dep (depmod makes it
    on install) and this machine has no kmod to run modinfo.
    """
    index = {p.name.removesuffix(".ko").replace("-", "_"): p for p in modules_dir.rglob("*.ko")}
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        found = re.search(rb"\x00depends=([^\x00]*)\x00", index[name].read_bytes())
        for dependency in found.group(1).decode().split(",") if found else []:
            if dependency:
                visit(dependency.replace("-", "_"))
        order.append(name)

    for name in wanted:
        visit(name)
    return [index[name] for name in order]


def kernel_key() -> str:
    """Names the cached kernel and initramfs: changes when what goes into them changes."""
    inputs = [KERNEL, BUSYBOX, *MODULES, INITRAMFS_INIT]
    return hashlib.sha256("\n".join(inputs).encode()).hexdigest()[:16]


def kernel() -> Path:
    """The cached directory with ``vmlinuz`` and ``initrd.img``; fetched and made if missing,
    by one boot at a time (boots at once, tests/guest/boots.py, would each fetch it, and one
    would replace the files another's QEMU is opening)."""
    done = CACHE / f"kernel-{kernel_key()}"
    if (done / "ready").exists():
        print(f"kernel: {done} (cached)", file=sys.stderr, flush=True)
        return done
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / "kernel.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (done / "ready").exists():  # made by the boot that held the lock
            return done
        return _make_kernel(done)


def _make_kernel(done: Path) -> Path:
    began = time.monotonic()
    with tempfile.TemporaryDirectory(dir=CACHE) as scratch:
        work = Path(scratch)
        meta = download(KERNEL, work)
        real = run(["dpkg-deb", "-f", meta, "Depends"], capture_output=True, text=True)
        package = real.stdout.split(",")[0].split()[0]  # "linux-image-6.1.0-56-amd64 (= ...)"
        run(["dpkg-deb", "-x", download(package, work), work / "kernel"])
        run(["dpkg-deb", "-x", download(BUSYBOX, work), work / "busybox"])
        tree = work / "initramfs"
        for sub in ("bin", "modules", "proc"):
            (tree / sub).mkdir(parents=True)
        shutil.copy(work / "busybox/bin/busybox", tree / "bin/busybox")
        (tree / "init").write_text(INITRAMFS_INIT)
        (tree / "init").chmod(0o755)
        modules = module_order(work / "kernel/lib/modules", MODULES)
        for module in modules:
            shutil.copy(module, tree / "modules" / module.name)
        (tree / "modules/order").write_text(" ".join(m.name.removesuffix(".ko") for m in modules))
        files = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
        staged = work / "ready-dir"
        staged.mkdir()
        with open(staged / "initrd.img", "wb") as archive:  # an uncompressed newc cpio
            run(
                [tree / "bin/busybox", "cpio", "-o", "-H", "newc", "-R", "0:0"],
                cwd=tree,
                input="\n".join(files).encode(),
                stdout=archive,
            )
        (vmlinuz,) = (work / "kernel/boot").glob("vmlinuz-*")
        shutil.copy(vmlinuz, staged / "vmlinuz")
        (staged / "ready").write_text(f"{package}, made in {time.monotonic() - began:.0f} s\n")
        shutil.rmtree(done, ignore_errors=True)
        staged.rename(done)
    for stale in CACHE.glob("kernel-*"):  # earlier inputs' kernels (and the old disk images)
        if stale != done:
            shutil.rmtree(stale, ignore_errors=True)
    for stale in CACHE.glob("base-*"):
        shutil.rmtree(stale, ignore_errors=True)
    print(f"kernel: {done} made in {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
    return done


def toucher(directory: Path) -> Path:
    """``Toucher.class`` and ``ClassStress.class``, compiled here (javac under emulation would
    take a while)."""
    run(["javac", "--release", "17", "-d", directory, HERE / "Toucher.java"])
    run(["javac", "--release", "17", "-d", directory, HERE / "ClassStress.java"])
    return directory


def stress_programs(directory: Path) -> Path:
    """The stress boot's C programs (jvmstress.py), compiled here: ``ymmcheck`` without -mavx2
    (the guest's AVX state) and ``xmodcheck`` (instructions patched while other threads run
    them)."""
    run(["cc", "-O2", "-Wall", "-o", directory / "ymmcheck", HERE / "ymmcheck.c"])
    run(["cc", "-O2", "-Wall", "-pthread", "-o", directory / "xmodcheck", HERE / "xmodcheck.c"])
    return directory


@dataclass(frozen=True)
class Shape:
    """The guest's NUMA nodes: node i has CPUs ``i*cpus_per_node`` to ``(i+1)*cpus_per_node-1``
    and ``node_mib`` MiB of memory. Under software emulation the vCPUs share one host thread
    (GUEST_ACCEL), so they may outnumber this machine's cores (slower, not wrong)."""

    nodes: int = NODES
    cpus_per_node: int = 1
    node_mib: int = NODE_MIB
    gpus_per_node: int = 0  # stand-in GPUs on each node (``qemu_devices``)

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= MAX_NODES:
            raise GuestError(f"--nodes {self.nodes}: the guest has 1 to {MAX_NODES} nodes")
        if not 1 <= self.cpus_per_node <= 8:
            raise GuestError(f"--cpus-per-node {self.cpus_per_node}: give 1 to 8")
        if not 0 <= self.gpus_per_node <= MAX_GPUS_PER_NODE:
            raise GuestError(f"--gpus-per-node {self.gpus_per_node}: give 0 to {MAX_GPUS_PER_NODE}")
        if self.node_mib < 512:
            raise GuestError(
                f"--memory-per-node {self.node_mib} MiB: give at least 512 MiB "
                "(the guest's JVMs and its overlay live in it)"
            )

    def qemu_numa(self) -> list[str]:
        argv = []
        for node in range(self.nodes):
            first = node * self.cpus_per_node
            cpus = (
                f"{first}-{first + self.cpus_per_node - 1}"
                if self.cpus_per_node > 1
                else str(first)
            )
            argv += [
                "-object",
                f"memory-backend-ram,id=m{node},size={self.node_mib}M",
                "-numa",
                f"node,nodeid={node},cpus={cpus},memdev=m{node}",
            ]
        return argv

    def qemu_devices(self) -> list[str]:
        """Per node i, a PCI expander bridge (``pxb``) whose ``numa_node=i`` QEMU writes as its
        root bus's ``_PXM``, so Linux gives every function behind it ``numa_node`` i, and
        behind it ``gpus_per_node`` display controllers: ``bochs-display``, PCI class 0380
        ("other display controller"), which numaspark's topology and the plugin's
        ``PciDevices`` count as a ``gpu`` (QEMU's ``VGA``, 0300 of a vendor other than NVIDIA,
        would be a console ``display``). ``-vga none``: the default VGA card sits on bus 0, on
        no node. The last node's expander opens the lowest bus (16, then 32, ...), so GPU 0
        in bus order, Spark's address 0, is on the last node: the order of addresses is not
        that of nodes."""
        if not self.gpus_per_node:
            return []
        argv = ["-vga", "none"]
        for node in range(self.nodes):
            expander = f"pxb{node}"
            bus = PXB_BUS_STEP * (self.nodes - node)
            argv += ["-device", f"pxb,id={expander},bus=pci.0,bus_nr={bus},numa_node={node}"]
            # bus=pxbN: the bus behind the expander's own bridge (its root bus takes bridges only)
            for slot in range(self.gpus_per_node):
                argv += ["-device", f"bochs-display,bus={expander},addr={slot + 1:#x}"]
        return argv


class GuestError(Exception):
    """Bad input to the guest (shape, command, paths): one line for the user."""


def command_script(argv: list[str], cwd: Path, shape: Shape, directory: Path) -> Path:
    """The command as a shell script on the shared root, which init.sh runs: the kernel command
    line cannot carry spaces, so COMMAND travels in a file. Each argument is quoted (argv, not a
    shell string built from it); the venv's bin is first on PATH and the booted repository's src
    first on PYTHONPATH. None of the caller's variables go along (a test lane's NUMASPARK_NO_JVM
    would stop every JVM inside): give what COMMAND needs in it, ``-- env NAME=VALUE CMD``."""
    if not argv:
        raise GuestError("no command: give one after --, e.g. scripts/numa-guest.sh -- numactl -H")
    venv_bin = Path(sys.executable).parent
    for path in (ROOT, venv_bin, cwd, directory):
        if any(c.isspace() for c in str(path)):
            raise GuestError(
                f"{path}: the guest's kernel command line cannot carry a space; "
                "use a path without one"
            )
    env = {
        "NUMASPARK_BIN": str(venv_bin / "numaspark"),
        "PYTHONPATH": str(ROOT / "src"),
        "NUMASPARK_GUEST_NODES": str(shape.nodes),
        "NUMASPARK_GUEST_CPUS_PER_NODE": str(shape.cpus_per_node),
        "NUMASPARK_GUEST_NODE_MIB": str(shape.node_mib),
        "NUMASPARK_GUEST_GPUS_PER_NODE": str(shape.gpus_per_node),
    }
    lines = ["#!/bin/sh", f"export PATH={shlex.quote(str(venv_bin))}:$PATH"]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(env.items())]
    lines += [f"cd {shlex.quote(str(cwd))} || exit 126", " ".join(shlex.quote(a) for a in argv)]
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / f"command-{os.getpid()}-{time.monotonic_ns()}.sh"
    script.write_text("\n".join(lines) + "\n")
    return script


# The guest's CPU: QEMU's most capable model under software emulation, less AVX. The default
# qemu64 model lacks SSE4.2, and `numaspark run` died of SIGILL in the guest (its libraries are
# built for a newer x86-64): `max` has it. AVX was once the lead for the guest's JVM crashes
# (issue 57): QEMU 7.2 is the first TCG to emulate it. It was not the cause: the crash came
# without AVX too (SIGILL in C1 code), and the cause is the accelerator (GUEST_ACCEL). AVX stays
# off: every boot's timing was measured without it and no check needs it (numpy's wheels need
# only x86-64-v2: SSE4.2, POPCNT). NUMASPARK_GUEST_CPU overrides the model ("max": with AVX).
NO_AVX = (
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx-vnni",
    "vaes",
    "vpclmulqdq",
    "avx512f",
    "avx512dq",
    "avx512cd",
    "avx512bw",
    "avx512vl",
)
GUEST_CPU = "max," + ",".join(f"{feature}=off" for feature in NO_AVX)


def guest_cpu() -> str:
    return os.environ.get("NUMASPARK_GUEST_CPU") or GUEST_CPU


# QEMU's accelerator: TCG, its software emulation, on one host thread for every vCPU. By
# default QEMU 7.2 runs each vCPU on a thread of its own (multi-threaded TCG), and there it tears
# instructions that one vCPU rewrites while another runs them. HotSpot rewrites its compiled
# code so, all the time (C1's patching of unresolved fields and classes, a method's entry made
# not entrant): a JVM then ran half an old and half a new instruction and died of SIGSEGV or
# SIGILL in C1-compiled code (issue 57: "J 49 c1 java.util.zip.ZipUtils.SH", "J 57 c1
# ZipFile$Source.zipCoderForPos", ILL_ILLOPN), with AVX or without, in some boots only.
# xmodcheck.c, HotSpot's way of patching on 4 vCPUs for 60 s: 1,053 torn instructions
# multi-threaded; none on one thread; none in 394 million patches on this machine's own CPUs.
# jvmstress.py checks it in the stress boot. On one thread a guest of several vCPUs runs about
# half as fast on this machine's two cores, so the boots' timeouts doubled (timeout_s, churn.py,
# kube.py); two boots at once (NUMASPARK_GUEST_PARALLEL=2 scripts/test-guest.sh) use both cores.
# NUMASPARK_GUEST_ACCEL overrides ("tcg": a thread a vCPU, faster on several cores, and torn
# code).
GUEST_ACCEL = "tcg,thread=single"


def guest_accel() -> str:
    return os.environ.get("NUMASPARK_GUEST_ACCEL") or GUEST_ACCEL


def qemu_argv(kernel_dir: Path, shape: Shape, script: Path) -> list[str]:
    append = f"console=ttyS0 panic=-1 quiet NUMASPARK_REPO={ROOT} NUMASPARK_COMMAND={script}"
    return [
        "qemu-system-x86_64",
        "-accel",
        guest_accel(),
        "-cpu",
        guest_cpu(),
        "-smp",
        str(shape.nodes * shape.cpus_per_node),
        "-m",
        str(shape.nodes * shape.node_mib),
        *shape.qemu_numa(),
        "-kernel",
        str(kernel_dir / "vmlinuz"),
        "-initrd",
        str(kernel_dir / "initrd.img"),
        "-append",
        append,
        "-virtfs",
        "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap",
        # after -virtfs: a device given no bus goes to the newest PCI bus, an expander's
        *shape.qemu_devices(),
        "-nic",
        "none",
        "-nographic",
        "-serial",
        "stdio",
        "-monitor",
        "none",
        "-no-reboot",
    ]


BEGIN = "NUMASPARK-GUEST-BEGIN"
EXIT = re.compile(r"NUMASPARK-GUEST-EXIT (\d+)$")
NO_EXIT = 125  # the guest ended (timeout, panic) before the command reported its status


def run_in_guest(
    argv: list[str],
    shape: Shape,
    log: Path,
    timeout_s: float = 3600,
    cwd: Path | None = None,
    echo=None,
) -> tuple[int, str]:
    """Boot the guest of ``shape``, run ``argv`` in it (in ``cwd``, default this directory),
    save the stamped console to ``log``, and return the command's exit status (``NO_EXIT`` when
    the guest ended before reporting one, killed after ``timeout_s`` or not) and the console.
    ``echo(line)`` gets each line of the command's own output as it arrives."""
    script = command_script(argv, (cwd or Path.cwd()).resolve(), shape, CACHE / "commands")
    lines: list[str] = []
    status, inside = NO_EXIT, False
    log.parent.mkdir(parents=True, exist_ok=True)
    try:
        kernel_dir = kernel()
        began = time.monotonic()
        with open(log, "w") as saved:
            proc = subprocess.Popen(
                qemu_argv(kernel_dir, shape, script),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                text=True,
                errors="replace",
            )
            watchdog = threading.Timer(timeout_s, proc.kill)
            watchdog.start()
            try:
                for raw in proc.stdout:
                    line = raw.rstrip("\r\n").replace("\r", "")
                    saved.write(f"[{time.monotonic() - began:6.1f}s] {line}\n")
                    saved.flush()
                    lines.append(line)
                    ended = EXIT.search(line)
                    if ended:
                        status, inside = int(ended.group(1)), False
                    elif line.endswith(BEGIN):  # after the firmware's escape codes
                        inside = True
                    elif inside and echo is not None:
                        echo(line)
                proc.wait()
            finally:
                watchdog.cancel()
                if proc.poll() is None:  # Ctrl-C
                    proc.kill()
                    proc.wait()
    finally:
        script.unlink(missing_ok=True)
    return status, "\n".join(lines)


def timeout_s() -> float:
    """How long the checks' boot may take: the checks, and the plugin's Spark proof (about N
    minutes)."""
    spark = os.environ.get("NUMASPARK_GUEST_SPARK") == "1"
    plugin = os.environ.get("NUMASPARK_GUEST_PLUGIN", "1") == "1"
    return 300 + (1200 if spark else 0) + (4800 if plugin else 0)


def size_mib(text: str) -> int:
    """``2048``, ``2048M``, ``2G``: MiB."""
    found = re.fullmatch(r"(\d+)\s*([MmGg]?)(?:i?[Bb])?", text.strip())
    if not found:
        raise GuestError(f"--memory-per-node {text!r}: give MiB (2048) or a size like 2G")
    return int(found.group(1)) * (1024 if found.group(2) in ("G", "g") else 1)


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/numa-guest.sh",
        description="Boot this machine again under QEMU with N NUMA nodes (software emulation) "
        "and run COMMAND inside, on this machine's root (read-only, under a tmpfs overlay), "
        "with this repository, its venv and the plugin jar. Prints COMMAND's output and exits "
        "with its status.",
    )
    parser.add_argument("--nodes", type=int, default=NODES, help="NUMA nodes, 1 to 4 (2)")
    parser.add_argument("--cpus-per-node", type=int, default=1, help="vCPUs per node (1)")
    parser.add_argument("--memory-per-node", default=f"{NODE_MIB}M", help="e.g. 2G (2048M)")
    parser.add_argument(
        "--gpus-per-node",
        type=int,
        default=0,
        help="stand-in GPUs on each node: display controllers (PCI class 0380) behind a PCI "
        "expander bridge of that node, -vga none (0)",
    )
    parser.add_argument("--timeout", type=float, default=3600, help="seconds (3600)")
    parser.add_argument(
        "--log",
        type=Path,
        default=CACHE / "last-boot" / "console.log",
        help="where the whole console goes",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    opts = parser.parse_args(args)
    command = opts.command[1:] if opts.command[:1] == ["--"] else opts.command
    try:
        shape = Shape(
            opts.nodes, opts.cpus_per_node, size_mib(opts.memory_per_node), opts.gpus_per_node
        )
        if shutil.which("qemu-system-x86_64") is None:
            raise GuestError(
                "qemu-system-x86_64 not found: NUMASPARK_SETUP_TESTS=1 bash "
                "scripts/setup.sh installs it"
            )
        status, _ = run_in_guest(
            command, shape, opts.log, opts.timeout, echo=lambda line: print(line, flush=True)
        )
    except GuestError as exc:
        print(f"numa-guest: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("numa-guest: interrupted; the guest was stopped", file=sys.stderr)
        return 130
    if status == NO_EXIT:
        print(
            f"numa-guest: the guest ended before the command did (timeout {opts.timeout:.0f} s "
            f"or a crash): see {opts.log}",
            file=sys.stderr,
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
