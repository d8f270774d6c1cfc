"""The checks the two-node guest runs (as PID 1's child, with the venv's Python), all through
numaspark's own commands. Each prints ``NUMASPARK-CHECK PASS|FAIL name: details`` on the
console; the host's test reads them. What numaspark read from the guest's /proc (effective CPUs,
numa_maps policy, pages per node) is in the details.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path

NUMASPARK = os.environ["NUMASPARK_BIN"]  # the venv's, set by init.sh
# 200 MiB heap touched at start (-XX:+AlwaysPreTouch), 64 MiB more by the program, held 4 s
TOUCHER = ["java", "-Xms200m", "-Xmx200m", "-XX:+AlwaysPreTouch", "-XX:+UseSerialGC",
           "-cp", os.environ["NUMASPARK_TOUCHER"], "Toucher", "64", "4"]  # fmt: skip
results: list[bool] = []


def numaspark(*args: str) -> str:
    proc = subprocess.run([NUMASPARK, *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "160"})  # fmt: skip
    if proc.returncode != 0:
        raise AssertionError(f"numaspark {' '.join(args)} exited {proc.returncode}: "
                             f"{proc.stderr.strip()[-400:]}")  # fmt: skip
    return proc.stdout


def show(*args: str) -> None:
    """The human view of a command, for the log."""
    print(f"$ numaspark {' '.join(args)}", flush=True)
    print(numaspark(*args), flush=True)


def check(name: str, test) -> None:
    try:
        details = test()
        ok = True
    except AssertionError as exc:
        ok, details = False, str(exc)
    except Exception:  # noqa: BLE001 - a broken check is a failed check, with its traceback
        ok, details = False, traceback.format_exc().strip().replace("\n", " | ")
    results.append(ok)
    print(f"NUMASPARK-CHECK {'PASS' if ok else 'FAIL'} {name}: {details}", flush=True)


def topology() -> str:
    topo = json.loads(numaspark("topology", "--json"))
    nodes = {n["os_index"]: n for n in topo["numa_nodes"]}
    assert sorted(nodes) == [0, 1], f"nodes {sorted(nodes)}, want [0, 1]"
    for index in (0, 1):
        assert nodes[index]["cpus"] == str(index), f"node {index} has CPUs {nodes[index]['cpus']}"
        memory = nodes[index]["memory_bytes"] or 0
        assert 1.5 * (1 << 30) < memory <= 2 << 30, f"node {index} has {memory} bytes, want ~2 GiB"
    return "; ".join(f"node {i}: CPUs {nodes[i]['cpus']}, {nodes[i]['memory_bytes'] >> 20} MiB"
                     for i in (0, 1))  # fmt: skip


def plan() -> str:
    placement = json.loads(numaspark("plan", "--executors-per-node", "1", "--bind", "node",
                                     "--json"))  # fmt: skip
    executors = [j for j in placement["jvms"] if j["runs_tasks"]]
    assert len(executors) == 2, f"{len(executors)} executors, want one per node"
    found = []
    for node, jvm in enumerate(sorted(executors, key=lambda j: j["nodes"])):
        want = ["numactl", f"--cpunodebind={node}", f"--membind={node}"]
        assert (jvm["nodes"], jvm["cpus"]) == (str(node), str(node)), f"executor {jvm}"
        assert jvm["prefix"] == want, f"prefix {jvm['prefix']}, want {want}"
        found.append(f"executor {jvm['index']}: node {jvm['nodes']}, {' '.join(jvm['prefix'])}")
    return "; ".join(found)


def launch(out: str, *options: str) -> list[dict]:
    show("launch", *options, "--out", out, "--", *TOUCHER)  # the table, for the log
    with open(f"{out}/launch.json") as saved:
        record = json.load(saved)
    for p in record["processes"]:
        assert p["ok"], f"{p['name']} {p['status']}: {p.get('error')}"
        assert p.get("effective") and p.get("pages"), f"{p['name']}: placement or pages not read"
    return record["processes"]


def describe(p: dict) -> str:
    eff, pages = p["effective"], p["pages"]
    shares = ", ".join(f"N{n} {s:.1%}" for n, s in pages["share_per_node"].items())
    return (f"{p['name']} pid {p['pid']}: Cpus_allowed_list {eff['cpus']}, Mems_allowed_list "
            f"{eff['mems']}, numa_maps {eff['policy']}, {pages['resident_bytes'] >> 20} MiB "
            f"resident ({shares}), memory {p['memory']}")  # fmt: skip


def bound_per_node() -> str:
    processes = launch("/tmp/launch-bind", "--executors-per-node", "1", "--bind", "node",
                       "--mem-policy", "bind")  # fmt: skip
    assert len(processes) == 2, f"{len(processes)} processes, want 2"
    for node, p in enumerate(sorted(processes, key=lambda p: p["planned"]["nodes"])):
        eff, pages = p["effective"], p["pages"]
        assert eff["cpus"] == str(node), f"{p['name']} runs on CPUs {eff['cpus']}, want {node}"
        assert eff["policy"] == f"bind:{node}", f"{p['name']} policy {eff['policy']}"
        assert pages["share_on_bound_nodes"] >= 0.9, f"{describe(p)}: pages off node {node}"
        assert p["memory"] == "local" and not p["problems"], describe(p)
    return " | ".join(describe(p) for p in processes)


def interleaved() -> str:
    (p,) = launch("/tmp/launch-interleave", "--executors", "1", "--mem-policy", "interleave")
    shares = p["pages"]["share_per_node"]
    assert p["effective"]["policy"] == "interleave:0-1", describe(p)
    assert all(0.3 <= shares.get(n, 0) <= 0.7 for n in ("0", "1")), f"not split: {describe(p)}"
    assert p["memory"] == "interleaved", describe(p)
    return describe(p)


def remote() -> str:
    # one node's memory less the driver's leaves no auto heap: the plan gets an explicit one
    (p,) = launch("/tmp/launch-remote", "--executors", "1", "--nodes", "0", "--bind", "node",
                  "--mem-nodes", "1", "--memory-per-executor", "450m")  # fmt: skip
    eff, pages = p["effective"], p["pages"]
    assert eff["cpus"] == "0" and eff["policy"] == "bind:1", describe(p)
    assert p["memory"] == "remote", f"recorded as {p['memory']}: {describe(p)}"
    assert pages["share_on_cpu_nodes"] <= 0.1, f"pages near the CPUs: {describe(p)}"
    return describe(p)


def spark_workers() -> str:
    """A standalone cluster with one worker per node, each bound: where they really run."""
    cluster = "/tmp/cluster"
    os.environ["NUMASPARK_START_TIMEOUT"] = "400"  # every JVM here starts ~20x slower
    try:
        numaspark("cluster", "up", cluster, "--executors-per-node", "1", "--bind", "node",
                  "--memory-per-executor", "450m")  # fmt: skip
    except AssertionError as exc:
        logs = sorted(Path(cluster).glob("logs/*.log")) + sorted(Path(cluster).glob("worker-*/*"))
        tails = " | ".join(f"{log}: {log.read_text(errors='replace')[-400:]}" for log in logs
                            if log.is_file())  # fmt: skip
        raise AssertionError(f"{exc} | {tails}") from None
    try:
        seen = json.loads(numaspark("cluster", "status", cluster, "--json"))
    finally:
        numaspark("cluster", "down", cluster)
    found = []
    for node, worker in enumerate(sorted(seen["workers"], key=lambda w: w["index"])):
        eff, pages = worker["effective"], worker["bytes_per_node"]
        assert worker["state"] == "ALIVE", f"worker {node}: {worker['state']}"
        assert eff["cpus"] == str(node) and eff["policy"] == f"bind:{node}", f"worker {worker}"
        on_node = pages.get(str(node), 0) / max(1, sum(pages.values()))
        assert on_node >= 0.9, f"worker {node}: {on_node:.0%} of its pages on node {node}"
        found.append(f"worker {node} pid {worker['pid']}: CPUs {eff['cpus']}, {eff['policy']}, "
                     f"{on_node:.0%} of {sum(pages.values()) >> 20} MiB on N{node}")  # fmt: skip
    return "; ".join(found)


def main() -> int:
    print("NUMASPARK-CHECKS BEGIN", flush=True)
    print(subprocess.run(["numactl", "--hardware"], capture_output=True, text=True).stdout)
    for name, test in [("topology-two-nodes", topology), ("plan-one-executor-per-node", plan),
                       ("launch-bound-per-node", bound_per_node),
                       ("launch-interleave-split", interleaved),
                       ("launch-remote-memory", remote)]:  # fmt: skip
        check(name, test)
    if os.environ.get("NUMASPARK_GUEST_SPARK") == "1":  # minutes more under emulation
        check("spark-worker-per-node", spark_workers)
    print(f"NUMASPARK-CHECKS END {sum(results)} passed, {len(results) - sum(results)} failed",
          flush=True)  # fmt: skip
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
