"""Issue 40's proof, a boot of its own (``checks.py python-workers``, two CPUs per node):
PySpark's Python workers stay with their executor. On one plain cluster,
``pythonhold.py``'s numpy tasks hold while the check reads every Python process under each
executor JVM from /proc (``pyspark.daemon`` and the workers it forks): at ``--bind node``
(one-core executors) all on the executor's node with at least 90% of their anonymous pages
there; at ``--bind core`` (executors of two cores, each started on a node of its own) not
all on one core.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from checks import (
    CPUS_PER_NODE,
    NODES,
    PlainCluster,
    executor_pids,
    hold_job,
    mib,
    node_cpus,
    placed,
    with_timings,
)


def python_of(executor: int) -> dict[int, str]:
    """The Python processes under executor JVM ``executor``, read from /proc (every process's
    parent in /proc/PID/stat, not the plugin's walk): ``pyspark.daemon``, the JVM's child, and
    the workers it forks (the daemon's command line), by pid, with their role."""
    parent_of: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # ended meanwhile
                continue
            parent_of[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: dict[int, str] = {}
    below = {executor}
    for _ in range(8):  # the tree's depth: JVM, daemon, workers (a launcher's shell at most)
        below |= {p for p, parent in parent_of.items() if parent in below}
    for pid in sorted(below - {executor}):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"pyspark.daemon" in argv or b"pyspark.worker" in argv:
            found[pid] = "daemon" if parent_of.get(pid) == executor else "worker"
    return found


def node_java_home(home: Path, taken: Path) -> Path:
    """A JAVA_HOME for the executors (``spark.executorEnv.JAVA_HOME``) whose java runs each
    executor on a node of its own, its CPUs only (``numactl --cpunodebind``; its memory by
    first touch): the first to make ``taken/node-N`` gets node N. At level core the plugin
    pins tasks within an executor's allowed CPUs; on the unbound plain cluster those would be
    every node's."""
    shutil.rmtree(taken, ignore_errors=True)
    taken.mkdir(parents=True)
    java = os.path.realpath(shutil.which("java") or "java")
    script = home / "bin" / "java"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        "#!/bin/sh\n# each executor on a node of its own (CPUs only)\n"
        f"for n in {' '.join(map(str, range(NODES)))}; do\n"
        f"  if mkdir {taken}/node-$n 2>/dev/null; then\n"
        f'    exec numactl --cpunodebind=$n {java} "$@"\n  fi\ndone\n'
        f'exec {java} "$@"\n'
    )
    script.chmod(0o755)
    return home


def run_python_app(
    cluster: PlainCluster, work: Path, level: str, cores: int, conf: list[str]
) -> dict:
    """``pythonhold.py`` on ``cluster`` with the plugin at ``level`` (``--bind node|core``),
    NODES executors of ``cores`` cores. Once every task holds its numpy arrays, from /proc:
    each executor's placement (``placed()``), and that of each of its Python processes (every
    thread's CPUs, anonymous pages per node), with the pid each task wrote."""
    from numaspark.supervise.stop import stop_processes

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    master = cluster.up()
    out = work / "out"
    app = None
    timings = {"cluster_up_s": cluster.up_s}
    conf = [*conf, "--conf", f"spark.numaspark.affinity.lockDir={work}-locks"]
    shutil.rmtree(f"{work}-locks", ignore_errors=True)
    try:
        app, started = hold_job(
            work,
            out,
            [*master, "--bind", level],
            conf,
            {**os.environ, "COLUMNS": "160"},
            NODES,
            cores,
            app="pythonhold.py",
        )
        timings["tasks_hold_s"] = time.monotonic() - started
        # the plugin re-binds Python processes every 250 ms (PythonWorkers.WATCH_MS): a
        # worker forked a moment ago has had four of its rounds
        time.sleep(1)
        cpus_of = node_cpus()
        seen = {}
        for pid in executor_pids():
            python = {p: {**placed(p, cpus_of), "role": role} for p, role in python_of(pid).items()}
            seen[pid] = {**placed(pid, cpus_of), "python": python}
        tasks = {int(f.name[5:]): int(f.read_text()) for f in work.glob("task-*")}
        (work / "go").write_text("")
        app.wait(timeout=900)
        timings["run_s"] = time.monotonic() - started
        run_log = (work / "run.log").read_text(errors="replace")
        assert app.returncode == 0, f"run exited {app.returncode}: {run_log[-1500:]}"
    finally:
        if app is not None and app.poll() is None:
            stop_processes([app.pid])
    return {"seen": seen, "tasks": tasks, "timings": timings}


def python_workers(cluster: PlainCluster, level: str, cores: int, conf: list[str]) -> str:
    """Issue 40's proof: PySpark's Python workers stay with their executor. ``pythonhold.py``
    at ``--bind level`` with NODES executors of ``cores`` cores on the plain cluster; read from
    /proc while every task holds 96 MiB of written numpy arrays: each executor on its own
    node; every Python process under it (``pyspark.daemon`` and the workers it forked) with
    all its threads within that node's CPUs and at least 90% of its anonymous pages on it;
    every task's worker among them. At level core (executors of two cores or more), an
    executor's workers do not all sit on one core: the daemon, forked from a task thread the
    plugin pinned to one CPU, was re-bound to all the executor's CPUs."""
    run = run_python_app(cluster, Path(f"/tmp/python-{level}"), level, cores, conf)
    seen, tasks = run["seen"], run["tasks"]
    found, problems = [], []
    nodes_used = []
    for pid, s in sorted(seen.items()):
        node = s["homes"][0] if len(s["homes"]) == 1 else None
        if node is None:
            problems.append(f"executor {pid}: threads on CPUs {sorted(s['allowed'])}, not one node")
            continue
        nodes_used.append(node)
        found.append(
            f"executor pid {pid}: node {node}, CPUs {','.join(map(str, sorted(s['allowed'])))}"
        )
        workers = {p: w for p, w in s["python"].items() if w["role"] == "worker"}
        if not workers:
            problems.append(f"executor {pid}: no Python worker under it")
        for p, w in sorted(s["python"].items()):
            total = sum(w["anon"].values())
            local = w["anon"].get(node, 0) / total if total else 0.0
            found.append(
                f"  {w['role']} pid {p} (executor {pid}): {w['threads']} threads, CPUs "
                f"{','.join(map(str, sorted(w['allowed'])))}; anon {local:.1%} on "
                f"N{node} of {total / (1 << 20):.0f} MiB ({mib(w['anon'])})"
            )
            if not w["allowed"] <= cpus_of_node(node):
                problems.append(
                    f"{w['role']} {p}: threads on CPUs {sorted(w['allowed'])}, outside node {node}"
                )
            if local < 0.9:
                problems.append(
                    f"{w['role']} {p}: only {local:.1%} of its anonymous pages on node {node}"
                )
        if level == "core" and s["allowed"] != cpus_of_node(node):
            problems.append(f"executor {pid}: CPUs {sorted(s['allowed'])}, not node {node}'s")
        spread = set().union(*(w["allowed"] for w in workers.values())) if workers else set()
        if level == "core" and cores > 1 and len(spread) < 2:
            problems.append(
                f"executor {pid}: its workers {sorted(workers)} all on CPUs "
                f"{sorted(spread)}, one core of {sorted(s['allowed'])}"
            )
    if len(seen) != NODES or sorted(nodes_used) != list(range(NODES)):
        problems.append(f"{len(seen)} executors on nodes {sorted(nodes_used)}, want one a node")
    ours = {p for s in seen.values() for p, w in s["python"].items() if w["role"] == "worker"}
    if len(tasks) != NODES * cores or not set(tasks.values()) <= ours:
        problems.append(f"the tasks' workers {tasks} are not all among those read: {sorted(ours)}")
    found.append(f"tasks (partition: worker pid) {dict(sorted(tasks.items()))}")
    summary = with_timings(" | ".join(found), run["timings"])
    assert not problems, "; ".join(problems) + " | " + summary
    return summary


def cpus_of_node(node: int) -> set[int]:
    return node_cpus()[node]


def python_checks(check) -> None:
    """Issue 40's checks, on one plain cluster of a guest with two CPUs per node (a boot of
    their own: ``python-workers``): the Python workers at ``--bind node`` with one-core
    executors (the plugin binds each to a node), then at ``--bind core`` with executors of
    CPUS_PER_NODE cores, each started on a node of its own (``node_java_home``) where the
    plugin pins its tasks to single cores. ``check`` is checks.py's, run as the script (whose
    results its exit status counts), not this module's import of it."""
    work = Path("/tmp/python-cluster")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cluster = PlainCluster(work)
    try:
        check("python-workers-node", lambda: python_workers(cluster, "node", 1, []))
        # at level core the plugin pins within the executor's CPUs: each on a node of its own
        home = node_java_home(Path("/tmp/python-java-home"), Path("/tmp/python-core-nodes"))
        check(
            "python-workers-core",
            lambda: python_workers(
                cluster, "core", CPUS_PER_NODE, ["--conf", f"spark.executorEnv.JAVA_HOME={home}"]
            ),
        )
    finally:
        cluster.down()
