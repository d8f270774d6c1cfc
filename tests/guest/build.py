"""The two-node test guest: Debian with Java, numactl and hwloc, booted under QEMU's software
emulation with two NUMA nodes (CPU 0 + 2 GiB on node 0, CPU 1 + 2 GiB on node 1).

A test fixture, not a product feature. Two drives:

- the base image (``rootfs.img``, its kernel and initrd): debootstrap, Java, ``init.sh`` as PID 1.
  Built once (about 3 minutes) and kept in the cache, named by the hash of its inputs;
- the numaspark drive, rebuilt for every boot (seconds): numaspark installed with pip, the
  checks (``checks.py``) and a small Java program that touches memory (``Toucher.java``).

The bound JVMs are started by ``numaspark launch`` (the same tracked, numactl-prefixed launch
path as Spark's workers), not by a Spark standalone cluster: under software emulation a Spark
master took 86 s to start and its two workers had not registered 90 s later, so a cluster check
would take most of ten minutes.

The guest runs the checks and powers off; each check prints ``NUMASPARK-CHECK PASS|FAIL name:
details`` on the serial console, which :func:`boot` returns. Needs root (debootstrap, chroot,
mount), ``qemu-system-x86`` and ``debootstrap``. Run by hand::

    sudo .venv/bin/python tests/guest/build.py      # build if needed, boot, print the console
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CACHE = Path(os.environ.get("NUMASPARK_GUEST_CACHE", Path.home() / ".cache/numaspark/numa-guest"))
SUITE = "bookworm"
PACKAGES = ("numactl", "hwloc-nox", "python3", "procps", "iproute2", "linux-image-amd64",
            "initramfs-tools", "kmod", "udev")  # fmt: skip
JAVA = "openjdk-17-jre-headless"  # installed in a chroot: its set-up needs /proc
ROOTFS_SIZE = "1500M"
CLI_DEPENDENCIES = ("typer", "rich", "psutil")  # all the commands the checks use import
NODE_MEMORY = "2048M"  # per node: enough for the planner's auto heap beside a driver


def run(argv: list[str | Path], **kwargs) -> None:
    print("+", " ".join(str(a) for a in argv), flush=True)
    subprocess.run([str(a) for a in argv], check=True, **kwargs)


def apt_mirror() -> str:
    """The Debian mirror this machine's apt already uses (no host name in the repository)."""
    sources = Path("/etc/apt/sources.list.d")
    for path in sorted(sources.glob("*.sources")):  # deb822 stanzas
        for stanza in path.read_text().split("\n\n"):
            fields = dict(line.split(":", 1) for line in stanza.splitlines()
                          if ":" in line and not line.startswith(("#", " ")))  # fmt: skip
            fields = {k.strip(): v.split() for k, v in fields.items()}
            if "deb" in fields.get("Types", []) and SUITE in fields.get("Suites", []):
                return fields["URIs"][0]
    for path in [Path("/etc/apt/sources.list"), *sorted(sources.glob("*.list"))]:
        for line in path.read_text().splitlines() if path.exists() else []:
            words = [w for w in line.split() if not w.startswith("[")]
            if len(words) >= 3 and words[0] == "deb" and words[2] == SUITE:
                return words[1]
    raise RuntimeError(f"no 'deb ... {SUITE}' source in /etc/apt: debootstrap needs a mirror")


def base_key() -> str:
    """Names the base image: changes when anything that goes into it changes."""
    inputs = [SUITE, *PACKAGES, JAVA, ROOTFS_SIZE, (HERE / "init.sh").read_text()]
    return hashlib.sha256("\n".join(inputs).encode()).hexdigest()[:16]


def base_image() -> Path:
    """The cached base image's directory (rootfs.img, vmlinuz, initrd.img); built if missing."""
    done = CACHE / f"base-{base_key()}"
    if (done / "ready").exists():
        print(f"base image: {done} (cached)", flush=True)
        return done
    began = time.monotonic()
    work = done.with_name(done.name + ".building")
    shutil.rmtree(work, ignore_errors=True)
    rootfs = work / "rootfs"
    rootfs.mkdir(parents=True)
    run(["debootstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, rootfs,
         apt_mirror()])  # fmt: skip
    shutil.copy("/etc/resolv.conf", rootfs / "etc/resolv.conf")
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive"}
    run(["mount", "-t", "proc", "proc", rootfs / "proc"])
    try:
        run(["chroot", rootfs, "apt-get", "install", "-y", "-q", "--no-install-recommends", JAVA],
            env=env)  # fmt: skip
        run(["chroot", rootfs, "apt-get", "clean"], env=env)
    finally:
        run(["umount", rootfs / "proc"])
    shutil.copy(HERE / "init.sh", rootfs / "sbin/numaspark-guest-init")
    (rootfs / "sbin/numaspark-guest-init").chmod(0o755)
    (rootfs / "opt/numaspark").mkdir(parents=True, exist_ok=True)
    shutil.copy(max((rootfs / "boot").glob("vmlinuz-*")), work / "vmlinuz")
    shutil.copy(max((rootfs / "boot").glob("initrd.img-*")), work / "initrd.img")
    run(["mkfs.ext4", "-q", "-F", "-d", rootfs, work / "rootfs.img", ROOTFS_SIZE])
    shutil.rmtree(rootfs)
    (work / "ready").write_text(f"built in {time.monotonic() - began:.0f} s\n")
    shutil.rmtree(done, ignore_errors=True)
    work.rename(done)
    for stale in CACHE.glob("base-*"):  # images of earlier inputs: 1.5 GB each
        if stale != done and not stale.name.endswith(".building"):
            shutil.rmtree(stale, ignore_errors=True)
    print(f"base image: {done} built in {time.monotonic() - began:.0f} s", flush=True)
    return done


def numaspark_drive(directory: Path) -> Path:
    """A small ext4 image with numaspark installed (pip --target), the checks and Toucher."""
    stage = directory / "numaspark-drive"
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "bin").mkdir(parents=True)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--target", stage / "lib"]
    run([*pip, "--no-deps", ROOT])
    run([*pip, *(f"{name}=={version(name)}" for name in CLI_DEPENDENCIES)])
    run(["javac", "--release", "17", "-d", stage / "java", HERE / "Toucher.java"])
    shutil.copy(HERE / "checks.py", stage / "checks.py")
    wrapper = stage / "bin/numaspark"
    wrapper.write_text('#!/bin/sh\nPYTHONPATH=/opt/numaspark/lib exec python3 -m numaspark "$@"\n')
    wrapper.chmod(0o755)
    image = directory / "numaspark.img"
    run(["mkfs.ext4", "-q", "-F", "-d", stage, image, "256M"])
    return image


def qemu_argv(base: Path, drive: Path) -> list[str]:
    numa = []
    for node in (0, 1):
        numa += ["-object", f"memory-backend-ram,id=m{node},size={NODE_MEMORY}",
                 "-numa", f"node,nodeid={node},cpus={node},memdev=m{node}"]  # fmt: skip
    return [
        "qemu-system-x86_64", "-accel", "tcg", "-smp", "2", "-m", "4096", *numa,
        "-kernel", str(base / "vmlinuz"), "-initrd", str(base / "initrd.img"),
        "-append", "console=ttyS0 root=/dev/vda ro init=/sbin/numaspark-guest-init panic=-1 quiet",
        "-drive", f"file={base / 'rootfs.img'},format=raw,if=virtio,readonly=on",
        "-drive", f"file={drive},format=raw,if=virtio,readonly=on",
        "-nographic", "-serial", "stdio", "-monitor", "none", "-no-reboot",
    ]  # fmt: skip


def boot(base: Path, drive: Path, log: Path, timeout_s: float = 900) -> tuple[int, str]:
    """Boot the guest, echo and save its console; return QEMU's exit code and the console."""
    lines = []
    began = time.monotonic()
    with open(log, "w") as saved:
        proc = subprocess.Popen(qemu_argv(base, drive), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                                errors="replace")  # fmt: skip
        try:
            for line in proc.stdout:
                stamped = f"[{time.monotonic() - began:6.1f}s] {line.rstrip()}"
                print(stamped, flush=True)
                saved.write(stamped + "\n")
                lines.append(line.rstrip())
                if time.monotonic() - began > timeout_s:
                    break
            code = proc.wait(timeout=max(1.0, timeout_s - (time.monotonic() - began)))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
                code = -9
    return code, "\n".join(lines)


def main() -> int:
    began = time.monotonic()
    base = base_image()
    work = CACHE / "last-boot"
    work.mkdir(parents=True, exist_ok=True)
    drive = numaspark_drive(work)
    code, console = boot(base, drive, work / "console.log")
    print(f"qemu exited {code} after {time.monotonic() - began:.0f} s in all", flush=True)
    return 0 if code == 0 and "NUMASPARK-CHECK FAIL" not in console else 1


if __name__ == "__main__":
    sys.exit(main())
