"""The parts of the local Kubernetes (scripts/k8s-local.sh, issue 60): built once, kept in the
cache outside the repository (``~/.cache/numaspark/k8s-local``), rebuilt when their inputs change.

Where each part comes from, and why:

- etcd, kube-apiserver, kube-controller-manager, kube-scheduler, the kubelet and kubectl: built
  from their own modules through the Go module proxy, at the versions the wrapper modules under
  tools/k8s-local/ name (etcd 3.6, Kubernetes 1.36, the release tools/kubelet-check reads).
  Debian 12's etcd (3.4.23) is older than the API server accepts, its kubectl (1.20) too old
  for a 1.36 server, and Debian has no API server or kubelet. ``go install …@version`` is
  refused for both projects (their go.mod files hold ``replace`` lines), so each wrapper module
  pins what those lines would (Kubernetes' staging modules; etcd's own sibling modules) and
  builds the projects' own main packages (etcd: the entry point its main package calls). The
  version each binary reports is set with ``-ldflags``, as the projects' own builds set it.
- containerd, its runc shim and ``ctr``: containerd 2 from the Go module proxy. Debian 12's
  containerd is 1.6, and kubelet 1.36 with containerd 1.x is unsupported.
- runc and the CNI plugins (bridge, host-local, loopback): Debian's packages (runc 1.1.5,
  containernetworking-plugins 1.1.1), which serve as they are.
- The images (images.py): from Debian's packages, with no registry.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "k8s-local"
CACHE = Path(os.environ.get("NUMASPARK_K8S_CACHE") or Path.home() / ".cache/numaspark/k8s-local")
# module directory under tools/k8s-local -> (package, binary name)
PROGRAMS = {
    "etcd": [(".", "etcd")],
    "kube": [
        ("k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"),
        ("k8s.io/kubernetes/cmd/kube-controller-manager", "kube-controller-manager"),
        ("k8s.io/kubernetes/cmd/kube-scheduler", "kube-scheduler"),
        ("k8s.io/kubernetes/cmd/kube-proxy", "kube-proxy"),
        ("k8s.io/kubernetes/cmd/kubelet", "kubelet"),
        ("k8s.io/kubernetes/cmd/kubectl", "kubectl"),
    ],
    "containerd": [
        ("github.com/containerd/containerd/v2/cmd/containerd", "containerd"),
        (
            "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2",
            "containerd-shim-runc-v2",
        ),
        ("github.com/containerd/containerd/v2/cmd/ctr", "ctr"),
    ],
    "coredns": [(".", "coredns")],
}
# Debian's packages the cluster runs with, and a file each one installs
DEBIAN = {"runc": "/usr/sbin/runc", "containernetworking-plugins": "/usr/lib/cni/bridge"}
CNI_BIN = Path("/usr/lib/cni")


class PartsError(Exception):
    """A part that cannot be had here: one line, what and how to fix it."""


def module_version(directory: str, module: str) -> str:
    """The version tools/k8s-local/DIRECTORY/go.mod requires of ``module``."""
    text = (TOOLS / directory / "go.mod").read_text()
    found = re.search(rf"^\s*{re.escape(module)} (v\S+)", text, re.M)
    if not found:
        raise PartsError(f"tools/k8s-local/{directory}/go.mod names no version of {module}")
    return found.group(1)


def ldflags(directory: str) -> list[str]:
    """The version each binary reports, set as the projects' own builds set it."""
    flags = ["-s", "-w"]
    if directory == "kube":
        version = module_version("kube", "k8s.io/kubernetes")
        major, minor = version.lstrip("v").split(".")[:2]
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
            flags += [
                f"-X {package}.gitVersion={version}",
                f"-X {package}.gitMajor={major}",
                f"-X {package}.gitMinor={minor}",
                f"-X {package}.gitTreeState=clean",
                f"-X {package}.buildDate=1970-01-01T00:00:00Z",
            ]
    elif directory == "containerd":
        version = module_version("containerd", "github.com/containerd/containerd/v2")
        flags += [f"-X github.com/containerd/containerd/v2/version.Version={version}"]
    return flags


def inputs_key() -> str:
    """What the binaries are built from: the wrapper modules and the Go that builds them."""
    digest = hashlib.sha256(go_version().encode())
    for path in sorted(TOOLS.rglob("*")):
        if path.is_file() and path.name in ("go.mod", "go.sum", "main.go"):
            digest.update(str(path.relative_to(TOOLS)).encode() + path.read_bytes())
    return digest.hexdigest()[:16]


def go_version() -> str:
    go = shutil.which("go")
    if go is None:
        raise PartsError(
            "no go on PATH: the local Kubernetes is built from source; install Go "
            "(https://go.dev/doc/install) and run again"
        )
    return subprocess.run([go, "version"], capture_output=True, text=True, check=True).stdout


def bin_dir() -> Path:
    """Where the binaries are: ``NUMASPARK_K8S_BINS`` where they were built elsewhere (the
    two-node guest has no Go: its test builds them first, on this machine), else the cache's
    directory for these inputs."""
    given = os.environ.get("NUMASPARK_K8S_BINS")
    return Path(given) if given else CACHE / "bin" / inputs_key()


def build(echo=print) -> Path:
    """Every binary of PROGRAMS in the cache, built where missing (nice 19: the machine stays
    usable); the directory that holds them. The first build takes a while (the note of
    issue 60 has its time here); later calls return at once."""
    target = bin_dir()
    if (target / "ready").exists():
        return target
    target.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=readonly -buildvcs=false"}
    began = time.monotonic()
    for directory, programs in PROGRAMS.items():
        for package, name in programs:
            if (target / name).exists():
                continue
            echo(f"building {name} (tools/k8s-local/{directory})")
            step = time.monotonic()
            partial = target / f".{name}.partial"
            done = subprocess.run(
                [
                    "nice",
                    "-n",
                    "19",
                    "go",
                    "build",
                    "-trimpath",
                    "-tags",
                    "no_btrfs,no_devmapper,no_zfs",
                    "-ldflags",
                    " ".join(ldflags(directory)),
                    "-o",
                    str(partial),
                    package,
                ],
                cwd=TOOLS / directory,
                env=env,
                capture_output=True,
                text=True,
            )
            if done.returncode != 0:
                tail = done.stderr.strip().splitlines()[-5:]
                raise PartsError(f"go build of {name} failed: {' | '.join(tail)}")
            partial.replace(target / name)
            echo(f"built {name} in {time.monotonic() - step:.0f} s")
    (target / "ready").write_text(f"built in {time.monotonic() - began:.0f} s\n")
    return target


def debian_packages(echo=print) -> None:
    """runc and the CNI plugins from Debian, installed where missing (apt-get, as root)."""
    missing = [name for name, path in DEBIAN.items() if not Path(path).exists()]
    if not missing:
        return
    if os.geteuid() != 0:
        raise PartsError(f"{', '.join(missing)} missing: run as root, or apt-get install them")
    echo(f"installing Debian's {', '.join(missing)}")
    done = subprocess.run(
        # another install (a guest boot's beside this one) holds dpkg's lock: wait for it
        ["apt-get", "install", "-y", "-q", "-o", "DPkg::Lock::Timeout=600"]
        + ["--no-install-recommends", *missing],
        capture_output=True,
        text=True,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )
    if done.returncode != 0:
        raise PartsError(
            f"apt-get install {' '.join(missing)} failed: {done.stderr.strip()[-300:]}"
        )


if __name__ == "__main__":  # build alone: python tests/k8s/parts.py
    try:
        debian_packages()
        print(build())
    except PartsError as exc:
        sys.exit(f"k8s-local: {exc}")
