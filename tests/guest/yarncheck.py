"""Issue 33's proof, a boot of its own (``checks.py yarn-node-binding``): YARN's own NUMA
binding from the settings numaspark renders, read from the guest's /proc."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from checks import (
    NODES,
    NUMASPARK,
    hold_job,
    jvm_pids,
    mib,
    node_cpus,
    numaspark,
    placed,
    policy_of,
)


def yarn_node_binding() -> str:
    """Issue 33's proof: YARN's own NUMA binding from the settings numaspark renders. ``plan
    --target yarn --out`` writes the NodeManager's yarn-site.xml fragment for this guest (one
    one-core executor a node); a mini YARN (``numaspark yarn up --site`` that fragment, the
    default container executor) runs ``holdjob.py`` with NODES executors and the plugin at
    level none (it reports, it binds nothing). After the first job, from this guest's /proc:
    every container the NodeManager launched (the application master and each executor) has
    all its threads on one node's CPUs (numactl --cpunodebind) and its anonymous memory under
    the policy YARN gives (--interleave over the nodes it picked), at least 90% of it there."""
    from numaspark.spark.home import spark_home

    work = Path("/tmp/yarn-node")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    files, yarn, out = work / "files", work / "yarn", work / "out"
    numaspark(
        "plan",
        "--bind",
        "node",
        "--executors-per-node",
        "1",
        "--cores-per-executor",
        "1",
        "--memory-per-executor",
        "512m",
        "--target",
        "yarn",
        "--out",
        str(files),
    )
    site = (files / "yarn-site.xml").read_text()
    assert "numa-awareness.enabled</name>\n    <value>true" in site, site
    assert "LinuxContainerExecutor" not in site.split("-->", 1)[-1], "the setuid executor was set"
    timings: dict[str, float] = {}
    began = time.monotonic()
    env = {**os.environ, "COLUMNS": "160", "NUMASPARK_START_TIMEOUT": "1200"}
    up = subprocess.run(
        [
            NUMASPARK,
            "yarn",
            "up",
            str(yarn),
            "--site",
            str(files / "yarn-site.xml"),
            "--min-allocation",
            "128m",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert up.returncode == 0, f"yarn up exited {up.returncode}: {(up.stdout + up.stderr)[-1500:]}"
    timings["yarn_up_s"] = time.monotonic() - began
    env["HADOOP_CONF_DIR"] = str(yarn / "conf")
    app = None
    try:
        app, started = hold_job(
            work,
            out,
            ["--master", "yarn"],
            [
                "--conf",
                "spark.yarn.am.extraJavaOptions=-XX:TieredStopAtLevel=1",
                "--conf",
                "spark.yarn.am.memory=384m",
                # Spark's jars from where they lie (the shared root), not uploaded to the
                # staging directory: the guest's overlay (a 512 MiB tmpfs) cannot hold them
                "--conf",
                f"spark.yarn.jars=local:{spark_home() / 'jars'}/*",
            ],
            env,
        )
        timings["first_job_s"] = time.monotonic() - started
        cpus_of = node_cpus()
        seen = {}
        for role, marker in (
            ("application master", b"ExecutorLauncher"),
            ("executor", b"CoarseGrainedExecutorBackend"),
        ):
            for pid in jvm_pids(marker):
                seen[pid] = {**placed(pid, cpus_of), "role": role, "policy": policy_of(pid)}
        (work / "go").write_text("")
        app.wait(timeout=1200)
        timings["run_s"] = time.monotonic() - started
        run_log = (work / "run.log").read_text(errors="replace")
        assert app.returncode == 0, f"run exited {app.returncode}: {run_log[-1500:]}"
    finally:
        if app is not None and app.poll() is None:
            subprocess.run(["kill", str(app.pid)], check=False)
            app.wait(timeout=120)
        subprocess.run([NUMASPARK, "yarn", "down", str(yarn)], capture_output=True, env=env)
    found, problems = [], []
    for pid, s in sorted(seen.items()):
        node = s["homes"][0] if len(s["homes"]) == 1 else None
        total = sum(s["anon"].values())
        local = s["anon"].get(node, 0) / total if node is not None and total else 0.0
        found.append(
            f"{s['role']} pid {pid}: {s['threads']} threads, all on CPUs "
            f"{','.join(map(str, sorted(s['allowed'])))} (node {node}); policy "
            f"{s['policy']}; anon {local:.1%} on N{node} of {total / (1 << 20):.0f} MiB "
            f"({mib(s['anon'])}); file-backed {mib(s['files'])}"
        )
        if node is None:
            problems.append(
                f"{s['role']} {pid}: threads on CPUs {sorted(s['allowed'])}, not one node"
            )
            continue
        if not s["policy"].startswith(("interleave:", "bind:")) or str(node) not in s["policy"]:
            problems.append(
                f"{s['role']} {pid}: memory policy {s['policy']}, not YARN's on node {node}"
            )
        if local < 0.9:
            problems.append(
                f"{s['role']} {pid}: only {local:.1%} of its anonymous pages on node {node}"
            )
    executors = [s for s in seen.values() if s["role"] == "executor"]
    if len(executors) != NODES:
        problems.append(f"{len(executors)} executor container(s) seen, want {NODES}")
    record = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
    containers = (record.get("yarn") or {}).get("containers") or []
    found.append(
        f"record: application {(record.get('yarn') or {}).get('application_id')}, "
        f"containers {[c.get('container_id') for c in containers]}"
    )
    summary = (
        " | ".join(found) + " | timings: " + ", ".join(f"{k} {v:.0f}" for k, v in timings.items())
    )
    assert not problems, "; ".join(problems) + " | " + summary
    return summary
