"""A real Kubernetes on this machine, for the tests and for anyone who wants to try numaspark on
Kubernetes without a cluster (issue 60): ``bash scripts/k8s-local.sh up|down|status``.

One node: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, CoreDNS,
containerd (runc) and the kubelet, each a real process built from its project's source
(parts.py). ``up`` makes certificates of its own (a CA per cluster, openssl), starts the parts
under a supervisor and waits until the node is Ready, then prints the API's URL and the
kubeconfig. ``down`` stops every process and removes what the cluster made: mounts, the bridge
and its veths, network namespaces, the kubelet's cgroups, iptables chains, CNI state, the
state directory; then says what is left, if anything.

Where things are:
- the state directory (``NUMASPARK_K8S_DIR``, default /var/lib/numaspark-k8s): certificates,
  kubeconfigs, etcd's data, the kubelet's root, containerd's root and state (its network
  namespaces too: ``netns_mounts_under_state_dir``), the CNI configuration and IPAM state,
  each part's log under ``logs/``;
- the kubelet's cgroups under a subtree of their own (``cgroupRoot: /numaspark-k8s`` in every
  cgroup v1 controller), not beside PID 1's;
- the pod network: a bridge ``nsk8s0`` with 10.233.0.1/24, made by ``up`` (the node's address:
  the kubelet refuses a loopback one), each pod's default route through it. Nothing is routed
  off this machine: no masquerade, and ``ip_forward`` is left as it is.

What listens where: etcd, the controller manager, the scheduler and kube-proxy's own servers
on 127.0.0.1 (etcd over plain HTTP); the API server (TLS, client certificates), the kubelet and
CoreDNS on the bridge's address, which only this machine and its pods reach. A pod reaches the
API as on any cluster, at the kubernetes service (kube-proxy's iptables rules take 10.96.0.1:443
to the API server; Spark's driver in cluster deploy mode needs it), and resolves the cluster's
names (a driver's headless service) through CoreDNS.

The supervisor (``supervise``, started by ``up`` in a session of its own) is a child subreaper:
containerd's shims detach from containerd, and are adopted by it, not by PID 1, so ``down``
finds and stops them with everything else.

Local settings, and why (the kubelet-config.yaml numaspark writes is merged over the defaults
below; the keys in ``LOCAL_KUBELET`` always win, as this machine needs them):
- ``failCgroupV1: false``: this machine has cgroup v1 only (the kubelet refuses it since 1.35
  unless told);
- ``cgroupDriver: cgroupfs``: no systemd here;
- ``cgroupRoot``: the subtree above;
- the endpoints, TLS files and ports of this cluster.

``down`` removes the iptables chains of the kubelet (KUBE-FIREWALL, its canaries) and kube-proxy
(its own ``--cleanup``) unless such chains were here before ``up`` (another Kubernetes on this
machine): those it leaves.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from numaspark.supervise.stop import stop_processes

sys.path.insert(0, str(Path(__file__).resolve().parent))
import parts  # noqa: E402 (beside this script)
from configs import (  # noqa: E402
    BRIDGE,
    CGROUP_ROOT,
    CGROUP_V2,
    CONTROLLERS,
    GATEWAY,
    MANIFESTS,
    NAMESPACE,
    NODE,
    PATIENCE,
    PR_SET_CHILD_SUBREAPER,
    STATE,
    ClusterError,
    certificates,
    cni_config,
    commands,
    containerd_config,
    corefile,
    free_port,
    kube_proxy_config,
    kubeconfig,
    kubelet_config,
    run,
)

# --- the supervisor -----------------------------------------------------------------------


def supervise() -> int:
    """Start every part as a child of this process, a child subreaper (containerd's shims come
    back to it), and keep them until SIGTERM; then stop every descendant: SIGTERM, 15 s, SIGKILL."""
    import psutil  # noqa: PLC0415 (the venv's; the supervisor alone needs it)

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise ClusterError(f"prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}")
    plan = json.loads((STATE / "plan.json").read_text())
    stopping = False

    def stop(signum, frame):  # noqa: ARG001
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    logs = STATE / "logs"
    env = {**os.environ, "PATH": f"{plan['bins']}:/usr/sbin:/usr/bin:/sbin:/bin"}
    children = {}
    for name, argv in plan["commands"]:
        with (logs / f"{name}.log").open("ab") as log:
            children[name] = subprocess.Popen(argv, stdout=log, stderr=log, env=env)
        (STATE / "pids.json").write_text(json.dumps({n: p.pid for n, p in children.items()}))
        if name == "kube-apiserver":  # the rest need its RBAC roles, made as it starts
            _api_ready(children[name], timeout=300)
            kubectl("apply", "-f", str(STATE / "manifests.yaml"), check=False)
        time.sleep(0.5)
    while not stopping:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)  # adopted shims end here too
        except ChildProcessError:
            pid = 0
        for name, child in children.items():
            if child.pid == pid:
                with (logs / "supervisor.log").open("a") as log:
                    log.write(f"{time.ctime()}: {name} ended ({status})\n")
        time.sleep(0.5)
    me = psutil.Process()
    # numaspark's own stop (SIGTERM to each and its descendants, 15 s, SIGKILL): the kubelet
    # first, since it would start again what is stopped; then every child, the adopted shims
    # among them (this is their subreaper)
    stop_processes([children["kubelet"].pid], grace_s=15)
    stop_processes([p.pid for p in me.children()], grace_s=15)
    while True:  # reap every adopted descendant before leaving
        rest = me.children(recursive=True)
        if not rest:
            break
        for p in rest:
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
        psutil.wait_procs(rest, timeout=5)
    return 0


def _api_ready(apiserver: subprocess.Popen, timeout: float) -> None:
    """Until the API server answers /readyz (its bootstrap roles made), or has ended."""
    deadline = time.monotonic() + timeout * PATIENCE
    while time.monotonic() < deadline and apiserver.poll() is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            if kubectl("get", "--raw", "/readyz", check=False, timeout=10).returncode == 0:
                return
        time.sleep(1)


# --- up, down, status ---------------------------------------------------------------------


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def supervisor_pid() -> int | None:
    try:
        pid = int((STATE / "supervisor.pid").read_text())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


def kubectl(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    plan = json.loads((STATE / "plan.json").read_text())
    done = run(
        [Path(plan["bins"]) / "kubectl", "--kubeconfig", STATE / "admin.kubeconfig", *args],
        timeout=timeout,
    )
    if check and done.returncode != 0:
        raise ClusterError(f"kubectl {' '.join(args)}: {done.stderr.strip()[-300:]}")
    return done


def _ended() -> list[str]:
    """The parts that ended, as the supervisor logged them (each 'NAME ended (STATUS)')."""
    try:
        text = (STATE / "logs/supervisor.log").read_text(errors="replace")
    except OSError:
        return []
    return re.findall(r": (\S+) ended \(", text)


def _wait(what: str, test, timeout: float, why) -> None:
    timeout *= PATIENCE
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if supervisor_pid() is None:
            raise ClusterError(f"the cluster stopped while waiting for {what}: {why()}")
        ended = _ended()
        if ended:  # a part that ends never comes back: say which, with its last words
            raise ClusterError(
                f"{ended[0]} ended while waiting for {what} ({_log_tail(ended[0], 2)}); "
                "`bash scripts/k8s-local.sh down` removes what was made"
            )
        try:
            if test():
                return
        except (ClusterError, subprocess.TimeoutExpired):
            pass
        time.sleep(1)
    raise ClusterError(f"{what} not within {timeout:.0f} s: {why()}")


def _log_tail(name: str, lines: int = 3) -> str:
    try:
        text = (STATE / "logs" / f"{name}.log").read_text(errors="replace").strip()
    except OSError:
        return f"no {name} log"
    return f"{name}: " + " | ".join(text.splitlines()[-lines:])


def _node_ready() -> bool:
    node = json.loads(kubectl("get", "node", NODE, "-o", "json", check=True).stdout)
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])


def up(kubelet_file: Path | None, echo=print) -> dict:
    """The cluster up (or the running one): {'server', 'kubeconfig', 'state'}."""
    if os.geteuid() != 0:
        raise ClusterError("k8s-local needs root (the kubelet, containerd and the bridge)")
    if supervisor_pid() is not None:
        plan = json.loads((STATE / "plan.json").read_text())
        echo("already up")
        return plan["printed"]
    if STATE.exists() and any(STATE.iterdir()):
        raise ClusterError(f"{STATE} holds a stopped cluster: run `bash scripts/k8s-local.sh down`")
    began = time.monotonic()
    parts.debian_packages(echo)
    bins = parts.build(echo)
    from images import build_images, import_images  # noqa: PLC0415 (beside this script)

    images = build_images(echo)
    for sub in ("logs", "run", "kubeconfig", "cni/net.d", "etcd"):
        (STATE / sub).mkdir(parents=True, exist_ok=True)
    (STATE / "etcd").chmod(0o700)
    certificates(STATE / "pki")
    ports = {
        name: free_port()
        for name in (
            "etcd",
            "etcd_peer",
            "apiserver",
            "controller_manager",
            "scheduler",
            "kubelet",
            "kubelet_healthz",
            "kube_proxy_healthz",
            "kube_proxy_metrics",
        )
    }
    server = f"https://{GATEWAY}:{ports['apiserver']}"
    pki = STATE / "pki"
    admin = kubeconfig(STATE / "admin.kubeconfig", server, pki, "admin")
    kubeconfig(STATE / "kubeconfig/controller-manager", server, pki, "controller-manager")
    kubeconfig(STATE / "kubeconfig/scheduler", server, pki, "scheduler")
    kubeconfig(STATE / "kubeconfig/kubelet", server, pki, "kubelet-client")
    kubeconfig(STATE / "kubeconfig/kube-proxy", server, pki, "kube-proxy")
    kubeconfig(STATE / "kubeconfig/coredns", server, pki, "coredns")
    kubeconfig(STATE / "viewer.kubeconfig", server, pki, "viewer")  # no role: may not create pods
    (STATE / "kubelet.yaml").write_text(yaml.safe_dump(kubelet_config(ports, kubelet_file)))
    (STATE / "containerd.toml").write_text(containerd_config(images["pause"]))
    (STATE / "cni/net.d/10-numaspark.conflist").write_text(cni_config())
    (STATE / "kube-proxy.yaml").write_text(yaml.safe_dump(kube_proxy_config(ports)))
    (STATE / "Corefile").write_text(corefile())
    (STATE / "manifests.yaml").write_text(yaml.safe_dump_all(MANIFESTS, sort_keys=False))
    bridge_up()
    cgroups_up()
    printed = {"server": server, "kubeconfig": str(admin), "state": str(STATE), **images}
    (STATE / "plan.json").write_text(
        json.dumps(
            {
                "bins": str(bins),
                "commands": commands(bins, ports),
                "ports": ports,
                "printed": printed,
                # the kubelet's and kube-proxy's iptables chains, if they were here before
                # this cluster (another Kubernetes on this machine): down leaves them
                "kube_chains_before": kube_chains(),
            }
        )
    )
    with (STATE / "logs/supervisor.log").open("ab") as log:
        supervisor = subprocess.Popen(
            [sys.executable, __file__, "supervise"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env={**os.environ, "NUMASPARK_K8S_DIR": str(STATE)},
        )
    (STATE / "supervisor.pid").write_text(str(supervisor.pid))
    echo(f"starting etcd, the control plane, containerd and the kubelet ({STATE}/logs)")
    _wait(
        "the API server",
        lambda: kubectl("get", "--raw", "/readyz", timeout=10).returncode == 0,
        180,
        lambda: _log_tail("kube-apiserver"),
    )
    _wait(
        "containerd", (STATE / "run/containerd.sock").exists, 120, lambda: _log_tail("containerd")
    )
    import_images(bins, images, echo)
    _wait(f"node {NODE} Ready", _node_ready, 300, lambda: _log_tail("kubelet", 5))
    _wait(
        "the default service account",
        lambda: (
            kubectl("get", "serviceaccount", "default", "-n", NAMESPACE, check=False).returncode
            == 0
        ),
        120,
        lambda: _log_tail("kube-controller-manager"),
    )
    echo(f"up in {time.monotonic() - began:.0f} s")
    return printed


def cgroups_up() -> None:
    """The kubelet's subtree (cgroupRoot) in every cgroup v1 hierarchy mounted here: the
    kubelet wants it in each before it starts. On cgroup v2, the one subtree, with every
    controller the root has enabled for it and below it."""
    if CGROUP_V2:
        top = CONTROLLERS / CGROUP_ROOT
        top.mkdir(exist_ok=True)
        for directory in (CONTROLLERS, top):
            for name in (CONTROLLERS / "cgroup.controllers").read_text().split():
                with contextlib.suppress(OSError):  # one the kernel will not delegate
                    (directory / "cgroup.subtree_control").write_text(f"+{name}")
        return
    for controller in CONTROLLERS.iterdir():
        if (controller / "cgroup.procs").exists() and controller.name != "unified":
            (controller / CGROUP_ROOT).mkdir(exist_ok=True)


def bridge_up() -> None:
    """The pod network's bridge, with the node's address (the CNI bridge plugin takes it as it
    is)."""
    if run(["ip", "link", "show", BRIDGE]).returncode != 0:
        for argv in (
            ["ip", "link", "add", BRIDGE, "type", "bridge"],
            ["ip", "addr", "add", f"{GATEWAY}/24", "dev", BRIDGE],
            ["ip", "link", "set", BRIDGE, "up"],
        ):
            done = run(argv)
            if done.returncode != 0:
                raise ClusterError(f"{' '.join(argv)}: {done.stderr.strip()}")


def _cgroup_dirs() -> list[Path]:
    """Every cgroup under the kubelet's subtree, deepest first."""
    found = []
    for controller in [CONTROLLERS] if CGROUP_V2 else CONTROLLERS.iterdir():
        top = controller / CGROUP_ROOT
        if top.is_dir():
            found += [p for p in top.rglob("*") if p.is_dir()] + [top]
    return sorted(found, key=lambda p: len(p.parts), reverse=True)


def _mounts() -> list[str]:
    """Mount points the cluster made: under the state directory, or the kubelet's defaults."""
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point.startswith(str(STATE)) or point.startswith("/var/lib/kubelet"):
            points.append(point)
    return points


def _pids_in_cgroups() -> set[int]:
    pids = set()
    for directory in _cgroup_dirs():
        try:
            pids |= {int(p) for p in (directory / "cgroup.procs").read_text().split()}
        except OSError:
            continue
    return pids


def _our_processes(bins: str | None) -> set[int]:
    """Processes of this cluster whatever became of the supervisor: in its cgroups, or running
    one of its binaries."""
    pids = _pids_in_cgroups()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            exe = os.readlink(entry / "exe")
        except OSError:
            continue
        if bins and exe.startswith(bins):
            pids.add(int(entry.name))
    pids.discard(os.getpid())
    return pids


def _veths() -> list[str]:
    done = run(["ip", "-o", "link", "show", "master", BRIDGE])
    return [line.split(":")[1].strip().split("@")[0] for line in done.stdout.splitlines()]


def leftovers(bins: str | None = None, chains_before: list[str] | None = None) -> list[str]:
    """What of a cluster is still here: processes, mounts, cgroups, the bridge and its veths,
    network namespaces, iptables chains, the state directory."""
    left = []
    chains = [c for c in kube_chains() if c not in (chains_before or [])]
    if chains:
        left.append(f"iptables chains {chains[:6]}")
    pids = _our_processes(bins)
    if pids:
        left.append(f"processes {sorted(pids)}")
    if _mounts():
        left.append(f"mounts {_mounts()}")
    if _cgroup_dirs():
        left.append(f"cgroups {[str(p) for p in _cgroup_dirs()][:5]}")
    if run(["ip", "link", "show", BRIDGE]).returncode == 0:
        left.append(f"bridge {BRIDGE} (veths {_veths()})")
    netns = Path("/run/netns")
    named = [p.name for p in netns.iterdir() if p.name.startswith("cni-")] if netns.is_dir() else []
    if named:
        left.append(f"network namespaces {named}")
    if STATE.exists():
        left.append(f"{STATE}")
    return left


IPTABLES = ("iptables", "ip6tables")
TABLES = ("filter", "nat", "mangle")


def kube_chains() -> list[str]:
    """The Kubernetes chains in this machine's iptables (``iptables:nat:KUBE-SERVICES``): the
    kubelet makes KUBE-FIREWALL and its canaries, kube-proxy the services' chains."""
    found = []
    for tool in IPTABLES:
        for table in TABLES:
            done = run([tool, "-w", "5", "-t", table, "-S"])
            found += [
                f"{tool}:{table}:{line.split()[1]}"
                for line in done.stdout.splitlines()
                if line.startswith("-N KUBE-")
            ]
    return found


def chains_down(bins: str | None) -> None:
    """kube-proxy's rules (its own --cleanup), then the kubelet's chains: the rules of the
    built-in chains that jump to them, then the chains themselves."""
    if bins and Path(bins, "kube-proxy").exists():
        run([Path(bins, "kube-proxy"), "--cleanup"], timeout=60)
    for tool in IPTABLES:
        for table in TABLES:
            rules = run([tool, "-w", "5", "-t", table, "-S"]).stdout.splitlines()
            for line in rules:
                words = shlex.split(line)
                if words[0] == "-A" and not words[1].startswith("KUBE-") and "KUBE-" in line:
                    run([tool, "-w", "5", "-t", table, "-D", *words[1:]])
            chains = [w.split()[1] for w in rules if w.startswith("-N KUBE-")]
            for flag in ("-F", "-X"):
                for chain in chains:
                    run([tool, "-w", "5", "-t", table, flag, chain])


def down(echo=print) -> list[str]:
    """Stop every process of the cluster and remove what it made; what is left (empty: all)."""
    bins, before = None, []
    with contextlib.suppress(OSError, ValueError, KeyError):
        plan = json.loads((STATE / "plan.json").read_text())
        bins, before = plan["bins"], plan.get("kube_chains_before", [])
    pid = supervisor_pid()
    if pid is not None:
        echo("stopping the cluster")
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    for _ in range(3):  # what outlived the supervisor (or had none)
        pids = _our_processes(bins)
        if not pids:
            break
        stop_processes(pids, grace_s=1)
    for point in sorted(_mounts(), key=len, reverse=True):
        run(["umount", "-l", point])
    for veth in _veths():
        run(["ip", "link", "del", veth])
    run(["ip", "link", "del", BRIDGE])
    for directory in _cgroup_dirs():
        with contextlib.suppress(OSError):
            directory.rmdir()
    if not before:
        chains_down(bins)
    if STATE.exists():
        run(["rm", "-rf", "--one-file-system", str(STATE)])
    return leftovers(bins, before)


def main(args: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scripts/k8s-local.sh",
        description="A one-node Kubernetes on this machine (etcd, the control plane, "
        "containerd and the kubelet), for numaspark's tests and for trying numaspark on "
        "Kubernetes. Needs root and Go.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    start = sub.add_parser("up", help="build what is missing, start, wait until Ready")
    start.add_argument(
        "--kubelet-config",
        type=Path,
        help="numaspark's kubelet-config.yaml (plan --target k8s): the kubelet's managers "
        "place the pods (admin rights). Default: the kubelet as it comes",
    )
    sub.add_parser("down", help="stop everything and remove what the cluster made")
    sub.add_parser("status", help="whether it is up, and where")
    sub.add_parser(
        "env",
        help="the running cluster's KUBECONFIG, K8S_MASTER and K8S_IMAGE, as shell exports "
        '(eval "$(bash scripts/k8s-local.sh env)")',
    )
    sub.add_parser("build", help="build the parts and images alone")
    sub.add_parser("supervise", help=argparse.SUPPRESS)
    options = parser.parse_args(args)
    try:
        if options.command == "supervise":
            return supervise()
        if options.command == "build":
            from images import build_images  # noqa: PLC0415 (beside this script)

            parts.debian_packages()
            print(parts.build())
            print(build_images())
            return 0
        if options.command == "up":
            printed = up(options.kubelet_config)
            print(f"API server: {printed['server']}")
            print(f"kubeconfig: {printed['kubeconfig']}")
            print(f"images: {printed['spark']} (Spark), {printed['pause']} (sandbox)")
            # the driver listens on the node's address (the gateway), which numaspark reads
            print(
                f"use: KUBECONFIG={printed['kubeconfig']} numaspark run APP --master "
                f"k8s://{printed['server']} --xml NODE.xml --image {printed['spark']} ..."
            )
            return 0
        if options.command == "env":
            if supervisor_pid() is None:
                raise ClusterError("the local Kubernetes is down: `bash scripts/k8s-local.sh up`")
            printed = json.loads((STATE / "plan.json").read_text())["printed"]
            for name, value in (
                ("KUBECONFIG", printed["kubeconfig"]),
                ("K8S_MASTER", f"k8s://{printed['server']}"),
                ("K8S_IMAGE", printed["spark"]),
            ):
                print(f"export {name}={shlex.quote(value)}")
            return 0
        if options.command == "status":
            pid = supervisor_pid()
            if pid is None:
                print("down" + (f" (leftovers: {'; '.join(leftovers())})" if leftovers() else ""))
                return 1
            printed = json.loads((STATE / "plan.json").read_text())["printed"]
            print(f"up: {printed['server']}, kubeconfig {printed['kubeconfig']}")
            return 0
        left = down()
        if left:
            print(f"k8s-local: left behind: {'; '.join(left)}", file=sys.stderr)
            return 1
        print("down: nothing left")
        return 0
    except (ClusterError, parts.PartsError) as exc:
        print(f"k8s-local: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "k8s-local: interrupted; `bash scripts/k8s-local.sh down` removes what was made",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
