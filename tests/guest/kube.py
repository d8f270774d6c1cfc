"""The Kubernetes proof (issue 60, item 5), run in a guest of its own: two nodes of two CPUs and
4 GiB each, the local Kubernetes of tests/k8s/ (etcd, the control plane, kube-proxy, CoreDNS,
containerd and the kubelet) started inside it, its state on the guest's /run (a tmpfs: the
guest's root is an overlay, on which containerd's overlay snapshots cannot be made).

Three checks, each read from the guest's own /proc and cgroup files, never numaspark's
record alone:

- ``k8s-kubelet-managers``, way (a): the kubelet started with the ``kubelet-config.yaml`` of
  ``numaspark plan --target k8s --bind node --executors-per-node 1`` (the static CPU Manager
  with CPU 0 reserved, the Memory Manager, the Topology Manager at single-numa-node), and
  ``numaspark run holdjob.py --master k8s://... --bind node --executors 2`` in client mode.
  Each executor pod asks for more memory than half a node holds, so the Memory Manager cannot
  put both on one node. While they hold after their first job: each executor container's
  cgroup ``cpuset.cpus.effective`` and ``cpuset.mems.effective`` within one node, a different
  node for each; every thread of its JVM on that node's CPUs; at least 90% of its anonymous
  pages there (numa_maps); the record says ``placed_by: cgroup``.
- ``k8s-topology-refusal``: on that kubelet, an executor pod of 3 CPUs (the scheduler sees 3
  allocatable; no node has 3): the kubelet refuses it (``TopologyAffinityError``), numaspark's
  run fails with one line naming the pod and the reason, and no pod of it is left.
- ``k8s-plugin-from-inside``, way (b): the cluster again, the kubelet as it comes (no
  manager), the same run: the plugin binds each executor from inside its pod, the lock
  directory shared through the pod template's hostPath; each JVM's threads on one node's CPUs,
  a different node for each, at least 90% of its anonymous pages there; ``placed_by:
  plugin``.

On this machine's one node (``NUMASPARK_GUEST_NODES=1``) the orchestration can be tried
before a boot, the node checks then holding trivially.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from checks import HERE, NUMASPARK, cpu_list, holdjob_argv, jvm_pids, mib, node_cpus, placed

# the cluster's state on a tmpfs (before tests/k8s/configs.py reads it), and patience: every
# part starts ~20x slower under emulation
os.environ.setdefault("NUMASPARK_K8S_DIR", "/run/numaspark-k8s")
os.environ.setdefault("NUMASPARK_K8S_PATIENCE", "8")
# the images, imported once (13 minutes here), kept for the second cluster
os.environ.setdefault("NUMASPARK_K8S_CONTAINERD_ROOT", "/run/numaspark-containerd")
sys.path.insert(0, str(HERE.parent / "k8s"))
import local  # noqa: E402 (after its settings)

WORK = Path("/tmp/k8s-proof")
EXECUTOR = b"KubernetesExecutorBackend"
LOCAL_SHARE = 0.9


def _xml() -> Path:
    """This guest's topology, as a user gives a node's to numaspark (``--xml``)."""
    WORK.mkdir(parents=True, exist_ok=True)
    path = WORK / "node.xml"
    subprocess.run(["lstopo-no-graphics", "--of", "xml", str(path)], check=True)
    return path


def _run(printed: dict, out: Path, bind: str, executors: int, cores: int, memory: str) -> list[str]:
    """``numaspark run holdjob.py --master k8s://...`` in client mode (the driver here, on
    the node's address), waiting up to an hour for its executor pods."""
    where = ["--master", f"k8s://{printed['server']}", "--xml", str(WORK / "node.xml")]
    conf = [
        "--image",
        printed["spark"],
        "--bind",
        bind,
        # the driver's Kubernetes client: a TLS connection to the API takes over its default
        # 10 s under emulation
        "--conf",
        "spark.kubernetes.driver.connectionTimeout=180000",
        "--conf",
        "spark.kubernetes.driver.requestTimeout=180000",
    ]
    return holdjob_argv(
        "holdjob.py", where, out.parent, out, executors, cores, memory, 3600, 3600, 6000, conf
    )


def _env(printed: dict) -> dict:
    return {**os.environ, "KUBECONFIG": printed["kubeconfig"], "COLUMNS": "200"}


def _container_cpuset(pid: int) -> tuple[set[int], set[int]]:
    """The CPUs and memory nodes of ``pid``'s own cgroup (v2: its container's), effective."""
    line = Path(f"/proc/{pid}/cgroup").read_text().splitlines()[0]  # "0::/path" on v2
    directory = Path("/sys/fs/cgroup") / line.split("::", 1)[1].lstrip("/")
    return (
        cpu_list((directory / "cpuset.cpus.effective").read_text()),
        cpu_list((directory / "cpuset.mems.effective").read_text()),
    )


def _held(printed: dict, bind: str, name: str) -> tuple[dict, dict, str]:
    """Two executor pods of one core, held after their first job: what /proc and the cgroups
    say of each executor JVM (by pid), the run's record, and the API's pods' QoS."""
    work = WORK / name
    subprocess.run(["rm", "-rf", str(work)], check=True)
    work.mkdir(parents=True)
    out = work / "out"
    # more than half a node's 3 GiB the kubelet may give pods (4 GiB less 1 GiB reserved):
    # the Memory Manager cannot put both pods on one node
    argv = _run(printed, out, bind, 2, 1, "1536m")
    print("$ " + " ".join(argv), flush=True)
    app = subprocess.Popen(
        argv, stdout=(work / "run.log").open("w"), stderr=subprocess.STDOUT, env=_env(printed)
    )
    started = time.monotonic()
    try:
        while not (work / "first-job-done").exists():
            if app.poll() is not None or time.monotonic() > started + 2700:
                raise AssertionError(
                    f"no first job (run exited {app.poll()}): "
                    + (work / "run.log").read_text(errors="replace")[-1500:].replace("\n", " | ")
                )
            time.sleep(5)
        first_job_s = time.monotonic() - started
        cpus_of = node_cpus()
        seen = {}
        for pid in jvm_pids(EXECUTOR):
            seen[pid] = {**placed(pid, cpus_of), "cgroup": _container_cpuset(pid)}
        qos = local.kubectl("get", "pods", "-l", "spark-role=executor", "-o", "json").stdout
        qos = {p["metadata"]["name"]: p["status"].get("qosClass") for p in json.loads(qos)["items"]}
        (work / "go").write_text("")
        app.wait(timeout=1200)
        assert app.returncode == 0, f"run exited {app.returncode}: " + (work / "run.log").read_text(
            errors="replace"
        )[-1500:].replace("\n", " | ")
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    (record,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    timing = f"first job {first_job_s:.0f} s, run {time.monotonic() - started:.0f} s"
    return seen, {"record": record, "qos": qos}, timing


def _judge(seen: dict, facts: dict, placed_by: str, timing: str) -> str:
    """Each executor on one node by its threads, its cgroup and its pages, a node each."""
    cpus_of = node_cpus()
    found, problems, nodes = [], [], []
    for pid, s in sorted(seen.items()):
        cpus, mems = s["cgroup"]
        home = s["homes"][0] if len(s["homes"]) == 1 else None
        anon_total = sum(s["anon"].values())
        local_share = s["anon"].get(home, 0) / anon_total if home is not None and anon_total else 0
        found.append(
            f"executor pid {pid}: container cpuset.cpus {sorted(cpus)}, cpuset.mems "
            f"{sorted(mems)}; {s['threads']} threads on CPUs {sorted(s['allowed'])} "
            f"(node {home}); anon {local_share:.1%} on N{home} ({mib(s['anon'])})"
        )
        if home is None:
            problems.append(f"pid {pid}: threads on CPUs {sorted(s['allowed'])}, not one node")
            continue
        nodes.append(home)
        if local_share < LOCAL_SHARE:
            problems.append(f"pid {pid}: {local_share:.1%} of its anonymous pages on node {home}")
        if placed_by == "cgroup" and (not cpus <= cpus_of[home] or mems != {home}):
            problems.append(f"pid {pid}: its container's cpuset is not node {home}'s alone")
    if len(seen) != 2 or sorted(nodes) != [0, 1]:
        problems.append(f"{len(seen)} executors on nodes {sorted(nodes)}, want 2, one a node")
    record = facts["record"]
    by = sorted(p.get("placed_by") or "?" for p in record["effective_placement"])
    if record["status"] != "ok" or by != [placed_by, placed_by]:
        problems.append(f"record: status {record['status']}, placed_by {by}")
    if set(facts["qos"].values()) != {"Guaranteed"}:
        problems.append(f"executor pods' QoS {facts['qos']}")
    summary = " | ".join(found) + f" | pods {facts['qos']} | placed_by {by} | {timing}"
    assert not problems, "; ".join(problems) + " | " + summary
    return summary


def kubelet_managers(printed: dict) -> str:
    seen, facts, timing = _held(printed, "node", "managers")
    return _judge(seen, facts, "cgroup", timing)


def plugin_from_inside(printed: dict) -> str:
    seen, facts, timing = _held(printed, "node", "plugin")
    return _judge(seen, facts, "plugin", timing)


def topology_refusal(printed: dict) -> str:
    """An executor pod of 3 CPUs on nodes of 1 and 2 allocatable: one line, no pod left."""
    out = WORK / "refusal" / "out"
    subprocess.run(["rm", "-rf", str(out.parent)], check=True)
    out.parent.mkdir(parents=True)
    began = time.monotonic()
    done = subprocess.run(
        _run(printed, out, "none", 1, 3, "512m"),
        env=_env(printed),
        capture_output=True,
        text=True,
        timeout=4800,
    )
    took = time.monotonic() - began
    (record,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    reason = record.get("failure_reason") or ""
    left = json.loads(local.kubectl("get", "pods", "-l", "numaspark-run", "-o", "json").stdout)
    left = [p["metadata"]["name"] for p in left["items"]]
    assert done.returncode != 0 and "TopologyAffinityError" in reason and "\n" not in reason, (
        f"run exited {done.returncode}, reason {reason!r}: {done.stdout[-800:]}"
    )
    assert reason.startswith("executor pod ") and "refused by node" in reason, reason
    assert not left, f"pods left: {left}"
    return f"{reason} | in {took:.0f} s, no pod left"


def _failed(why: str) -> str:
    raise AssertionError(why)


def kubernetes_checks(check) -> None:
    """Way (a) and its refusal on one cluster, way (b) on the next; each cluster down after."""
    xml = _xml()
    plan_dir = WORK / "plan"
    subprocess.run(
        [
            NUMASPARK,
            "plan",
            "--xml",
            str(xml),
            "--target",
            "k8s",
            "--bind",
            "node",
            "--executors-per-node",
            "1",
            "--out",
            str(plan_dir),
        ],
        check=True,
        capture_output=True,
    )
    print((plan_dir / "kubelet-config.yaml").read_text(), flush=True)
    for kubelet_file, checks in (
        (
            plan_dir / "kubelet-config.yaml",
            (
                ("k8s-kubelet-managers", kubelet_managers),
                ("k8s-topology-refusal", topology_refusal),
            ),
        ),
        (None, (("k8s-plugin-from-inside", plugin_from_inside),)),
    ):
        began = time.monotonic()
        try:
            printed = local.up(kubelet_file)
        except (local.ClusterError, local.parts.PartsError) as exc:
            for name, _ in checks:
                check(name, lambda exc=exc: _failed(f"the cluster did not come up: {exc}"))
            local.down()
            continue
        print(f"cluster up in {time.monotonic() - began:.0f} s", flush=True)
        try:
            for name, test in checks:
                check(name, lambda test=test, printed=printed: test(printed))
        finally:
            left = local.down()
            print(f"cluster down: left {left or 'nothing'}", flush=True)
