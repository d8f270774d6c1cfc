"""The two-node test guest: this machine itself, booted under QEMU's software emulation with two
NUMA nodes (CPU 0 + 2 GiB on node 0, CPU 1 + 2 GiB on node 1); ``NUMASPARK_GUEST_NODES=4``
boots four (CPU i + 2 GiB on node i; ``NUMASPARK_GUEST_NODE_MIB`` sets the memory per node).

A test fixture, not a product feature. No image is built: the guest's root file system is this
machine's own ``/``, shared read-only over virtio-9p with a tmpfs overlay on top, so the guest
runs the very numaspark, venv, Java, numactl and hwloc that the other tests use. What it needs of
its own is a kernel, from Debian's ``linux-image-amd64`` package (``apt-get download``, about 70
MB), and an initramfs of a few kilobytes: busybox (from ``busybox-static``), the modules for
virtio-9p and overlayfs, and an ``/init`` that mounts them and switches to ``init.sh``. Both are
kept in the cache (``~/.cache/numaspark/numa-guest``) while their inputs are unchanged.

The guest runs the checks (``checks.py``) and powers off; each check prints ``NUMASPARK-CHECK
PASS|FAIL name: details`` on the serial console, which :func:`boot` returns. Needs
``qemu-system-x86_64`` and ``apt-get``; not root. By hand::

    .venv/bin/python tests/guest/build.py      # fetch the kernel if needed, boot, print the console

The bound JVMs are started by ``numaspark launch`` (the same tracked, numactl-prefixed launch
path as Spark's workers) running a small Java program that touches memory, not by a Spark
standalone cluster: under software emulation a Spark master took 86 s to start and its two
workers had not registered 90 s later. The one Spark check on by default is the affinity
plugin's node binding (``plugin-node-binding``, issue 32: ``NUMASPARK_GUEST_PLUGIN=0`` leaves it
out): a plain master and worker (daemons C1-only, 256 MiB heaps) up in 42 to 110 s, and an
application whose first job ends 190 to 400 s after submission, so a boot takes 5 to 11 minutes
(``timeout_s`` allows 45).

The guest runs the repository it was booted from: ``init.sh`` puts its ``src/`` first on
PYTHONPATH, so a git worktree tests its own code with the main checkout's venv.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = Path(os.environ.get("NUMASPARK_GUEST_CACHE", Path.home() / ".cache/numaspark/numa-guest"))
KERNEL = "linux-image-amd64"  # Debian's current kernel (a metapackage naming the real one)
BUSYBOX = "busybox-static"
MODULES = ("virtio_pci", "9pnet_virtio", "9p", "overlay")  # and what they depend on
# NUMA nodes (node i: CPU i and NODE_MIB of memory): 2, or NUMASPARK_GUEST_NODES=4 for the
# four-node guest of the plugin's proof
NODES = int(os.environ.get("NUMASPARK_GUEST_NODES", "2"))
NODE_MIB = int(os.environ.get("NUMASPARK_GUEST_NODE_MIB", "2048"))  # the planner's auto heap
# beside a driver; and, in the plugin's proof, an executor beside the unbound daemons and driver

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
    print("+", " ".join(str(a) for a in argv), flush=True)
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
    """The cached directory with ``vmlinuz`` and ``initrd.img``; fetched and made if missing."""
    done = CACHE / f"kernel-{kernel_key()}"
    if (done / "ready").exists():
        print(f"kernel: {done} (cached)", flush=True)
        return done
    began = time.monotonic()
    CACHE.mkdir(parents=True, exist_ok=True)
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
            run([tree / "bin/busybox", "cpio", "-o", "-H", "newc", "-R", "0:0"], cwd=tree,
                input="\n".join(files).encode(), stdout=archive)  # fmt: skip
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
    print(f"kernel: {done} made in {time.monotonic() - began:.0f} s", flush=True)
    return done


def toucher(directory: Path) -> Path:
    """``Toucher.class``, compiled here (javac under emulation would take a while)."""
    run(["javac", "--release", "17", "-d", directory, HERE / "Toucher.java"])
    return directory


def qemu_argv(kernel_dir: Path, classes: Path, nodes: int = NODES) -> list[str]:
    numa = []
    for node in range(nodes):
        numa += ["-object", f"memory-backend-ram,id=m{node},size={NODE_MIB}M",
                 "-numa", f"node,nodeid={node},cpus={node},memdev=m{node}"]  # fmt: skip
    # the checks find the venv and the repository at the same paths as here
    for path in (ROOT, Path(sys.executable), classes):
        if any(c.isspace() for c in str(path)):
            raise RuntimeError(f"{path}: the guest's kernel command line cannot carry a space")
    append = (f"console=ttyS0 panic=-1 quiet NUMASPARK_REPO={ROOT} "
              f"NUMASPARK_PYTHON={sys.executable} NUMASPARK_TOUCHER={classes} "
              f"NUMASPARK_GUEST_SPARK={os.environ.get('NUMASPARK_GUEST_SPARK', '0')} "
              f"NUMASPARK_GUEST_PLUGIN={os.environ.get('NUMASPARK_GUEST_PLUGIN', '1')} "
              f"NUMASPARK_GUEST_NODES={nodes} NUMASPARK_GUEST_NODE_MIB={NODE_MIB}")  # fmt: skip
    return [
        # -cpu max: the default qemu64 model lacks SSE4.2/AVX, and `numaspark run` died of
        # SIGILL in the guest (its libraries are built for a newer x86-64)
        "qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-smp", str(nodes),
        "-m", str(nodes * NODE_MIB), *numa,
        "-kernel", str(kernel_dir / "vmlinuz"), "-initrd", str(kernel_dir / "initrd.img"),
        "-append", append,
        "-virtfs", "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap",
        "-nic", "none", "-nographic", "-serial", "stdio", "-monitor", "none", "-no-reboot",
    ]  # fmt: skip


def boot(kernel_dir: Path, classes: Path, log: Path, timeout_s: float = 300,
         nodes: int = NODES) -> tuple[int, str]:  # fmt: skip
    """Boot the guest with ``nodes`` nodes, echo and save its console; return QEMU's exit code
    (-9 when it was killed after ``timeout_s``, silent or not) and the console."""
    lines = []
    began = time.monotonic()
    with open(log, "w") as saved:
        proc = subprocess.Popen(qemu_argv(kernel_dir, classes, nodes), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                                errors="replace")  # fmt: skip
        watchdog = threading.Timer(timeout_s, proc.kill)
        watchdog.start()
        try:
            for line in proc.stdout:
                stamped = f"[{time.monotonic() - began:6.1f}s] {line.rstrip()}"
                print(stamped, flush=True)
                saved.write(stamped + "\n")
                lines.append(line.rstrip())
            code = proc.wait()
        finally:
            watchdog.cancel()
            if proc.poll() is None:  # Ctrl-C
                proc.kill()
                proc.wait()
    return code, "\n".join(lines)


def timeout_s() -> float:
    """How long a boot may take: the checks, and the plugin's Spark proof (about N minutes)."""
    spark = os.environ.get("NUMASPARK_GUEST_SPARK") == "1"
    plugin = os.environ.get("NUMASPARK_GUEST_PLUGIN", "1") == "1"
    return 300 + (600 if spark else 0) + (2400 if plugin else 0)


def main() -> int:
    began = time.monotonic()
    kernel_dir = kernel()
    work = CACHE / "last-boot"
    work.mkdir(parents=True, exist_ok=True)
    code, console = boot(
        kernel_dir, toucher(work / "java"), work / "console.log", timeout_s=timeout_s()
    )
    print(f"qemu exited {code} after {time.monotonic() - began:.0f} s in all", flush=True)
    return 0 if code == 0 and "NUMASPARK-CHECK FAIL" not in console else 1


if __name__ == "__main__":
    sys.exit(main())
