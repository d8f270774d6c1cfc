"""The checks the guest runs (as PID 1's child, with the venv's Python), all through numaspark's
own commands: on two nodes all of them, on four (``NUMASPARK_GUEST_NODES=4``) the topology, the
plan and the plugin's node binding. Each prints ``NUMASPARK-CHECK PASS|FAIL name: details`` on the
console; the host's test reads them. What numaspark read from the guest's /proc (effective CPUs,
numa_maps policy, pages per node) is in the details.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

from jvmcrash import say_crash  # noqa: E402 (beside this script: run as tests/guest/checks.py)

NUMASPARK = os.environ["NUMASPARK_BIN"]  # the venv's, set by init.sh
# 200 MiB heap touched at start (-XX:+AlwaysPreTouch), 64 MiB more by the program, held 4 s
TOUCHER = [
    "java",
    "-Xms200m",
    "-Xmx200m",
    "-XX:+AlwaysPreTouch",
    "-XX:+UseSerialGC",
    "-cp",
    os.environ.get("NUMASPARK_TOUCHER", ""),
    "Toucher",
    "64",
    "4",
]
results: list[bool] = []
# the guest's shape, from numa-guest.sh (build.py) through the command script: node i has CPU i
NODES = int(os.environ.get("NUMASPARK_GUEST_NODES", "2"))
NODE_MIB = int(os.environ.get("NUMASPARK_GUEST_NODE_MIB", "2048"))
CPUS_PER_NODE = int(os.environ.get("NUMASPARK_GUEST_CPUS_PER_NODE", "1"))
HERE = Path(__file__).resolve().parent


def numaspark(*args: str) -> str:
    proc = subprocess.run(
        [NUMASPARK, *args], capture_output=True, text=True, env={**os.environ, "COLUMNS": "160"}
    )
    if proc.returncode != 0:
        raise AssertionError(
            f"numaspark {' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()[-400:]}"
        )
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
    assert sorted(nodes) == list(range(NODES)), f"nodes {sorted(nodes)}, want 0-{NODES - 1}"
    for index in range(NODES):
        assert nodes[index]["cpus"] == str(index), f"node {index} has CPUs {nodes[index]['cpus']}"
        memory = nodes[index]["memory_bytes"] or 0
        assert 0.75 * NODE_MIB * (1 << 20) < memory <= NODE_MIB << 20, (
            f"node {index} has {memory} bytes, want ~{NODE_MIB} MiB"
        )
    return "; ".join(
        f"node {i}: CPUs {nodes[i]['cpus']}, {nodes[i]['memory_bytes'] >> 20} MiB"
        for i in range(NODES)
    )


def plan() -> str:
    placement = json.loads(
        numaspark("plan", "--executors-per-node", "1", "--bind", "node", "--json")
    )
    executors = [j for j in placement["jvms"] if j["runs_tasks"]]
    assert len(executors) == NODES, f"{len(executors)} executors, want one per node"
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
    return (
        f"{p['name']} pid {p['pid']}: Cpus_allowed_list {eff['cpus']}, Mems_allowed_list "
        f"{eff['mems']}, numa_maps {eff['policy']}, {pages['resident_bytes'] >> 20} MiB "
        f"resident ({shares}), memory {p['memory']}"
    )


def bound_per_node() -> str:
    processes = launch(
        "/tmp/launch-bind", "--executors-per-node", "1", "--bind", "node", "--mem-policy", "bind"
    )
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
    (p,) = launch(
        "/tmp/launch-remote",
        "--executors",
        "1",
        "--nodes",
        "0",
        "--bind",
        "node",
        "--mem-nodes",
        "1",
        "--memory-per-executor",
        "450m",
    )
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
        numaspark(
            "cluster",
            "up",
            cluster,
            "--executors-per-node",
            "1",
            "--bind",
            "node",
            "--memory-per-executor",
            "450m",
        )
    except AssertionError as exc:
        logs = sorted(Path(cluster).glob("logs/*.log")) + sorted(Path(cluster).glob("worker-*/*"))
        tails = " | ".join(
            f"{log}: {log.read_text(errors='replace')[-400:]}" for log in logs if log.is_file()
        )
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
        found.append(
            f"worker {node} pid {worker['pid']}: CPUs {eff['cpus']}, {eff['policy']}, "
            f"{on_node:.0%} of {sum(pages.values()) >> 20} MiB on N{node}"
        )
    return "; ".join(found)


def cpu_list(text: str) -> set[int]:
    """A Linux list ("0-2,5") as a set."""
    found: set[int] = set()
    for part in filter(None, text.strip().split(",")):
        low, _, high = part.partition("-")
        found.update(range(int(low), int(high or low) + 1))
    return found


def node_cpus() -> dict[int, set[int]]:
    base = Path("/sys/devices/system/node")
    return {int(d.name[4:]): cpu_list((d / "cpulist").read_text()) for d in base.glob("node[0-9]*")}


def executor_pids() -> list[int]:
    """The executor JVMs running now (Spark's CoarseGrainedExecutorBackend; on YARN
    YarnCoarseGrainedExecutorBackend), read from /proc."""
    return jvm_pids(b"CoarseGrainedExecutorBackend")


def threads_cpus(pid: int) -> dict[int, set[int]]:
    """Each thread's Cpus_allowed_list (/proc/PID/task/TID/status)."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
        except OSError:  # a thread that ended meanwhile
            continue
        found[int(task.name)] = cpu_list(
            re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M).group(1)
        )
    return found


def pages_per_node(pid: int) -> tuple[dict[int, int], dict[int, int]]:
    """Resident bytes per node from /proc/PID/numa_maps: of anonymous mappings (anon, heap,
    stack: no file=) and, apart, of file-backed ones (libjvm, the CDS archive, jars)."""
    anon: dict[int, int] = {}
    files: dict[int, int] = {}
    for line in Path(f"/proc/{pid}/numa_maps").read_text().splitlines():
        fields = line.split()
        size = (
            next((int(f.split("=")[1]) for f in fields if f.startswith("kernelpagesize_kB=")), 4)
            << 10
        )
        into = files if any(f.startswith("file=") for f in fields) else anon
        for f in fields:
            if re.fullmatch(r"N\d+=\d+", f):
                node, pages = f[1:].split("=")
                into[int(node)] = into.get(int(node), 0) + int(pages) * size
    return anon, files


def mib(per_node: dict[int, int]) -> str:
    return " ".join(f"N{n} {b / (1 << 20):.1f}" for n, b in sorted(per_node.items())) + " MiB"


def placed(pid: int, cpus_of: dict[int, set[int]]) -> dict:
    """Where JVM ``pid`` runs, from /proc: its threads, the CPUs they may use, the nodes whose
    CPUs hold them all (``homes``), its anonymous and file-backed resident bytes per node."""
    threads = threads_cpus(pid)
    allowed = set().union(*threads.values())
    anon, files = pages_per_node(pid)
    return {
        "threads": len(threads),
        "allowed": allowed,
        "anon": anon,
        "files": files,
        "homes": [n for n, cpus in cpus_of.items() if allowed <= cpus],
    }


def holdjob_argv(
    app: str,
    where: list[str],
    work: Path,
    out: Path,
    executors: int,
    cores: int,
    memory: str,
    first_s: int,
    every_s: int,
    timeout_s: int,
    conf: list[str],
) -> list[str]:
    """``numaspark run APP`` (holdjob.py, pythonhold.py) on ``where`` (``--master ...``),
    C1 only (under emulation C2's compiles cost minutes of the run), numaspark waiting up to
    ``first_s`` for the first executor and the first job up to ``every_s`` for all of them,
    so that each one works in it; its tasks hold until ``work/go`` exists. Shared by the
    checks here (plain_hold_argv) and kube.py's."""
    return [
        NUMASPARK,
        "run",
        str(HERE / app),
        *where,
        "--executors",
        str(executors),
        "--cores-per-executor",
        str(cores),
        "--memory-per-executor",
        memory,
        "--executor-wait",
        f"{first_s}s",
        "--timeout",
        str(timeout_s),
        "--no-collect",
        "--out",
        str(out),
        "--conf",
        "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1",
        "--conf",
        "spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1",
        "--conf",
        "spark.scheduler.minRegisteredResourcesRatio=1.0",
        "--conf",
        f"spark.scheduler.maxRegisteredResourcesWaitingTime={every_s}s",
        *conf,
        "--",
        str(work),
        str(executors * cores),
        "900",
    ]


def plain_hold_argv(
    work: Path, out: Path, where: list[str], conf: list[str], executors: int, cores: int, app: str
) -> list[str]:
    """hold_job's run: executors of 512 MiB, the first within 1800 s, all within 1800 s (a
    four-node boot with two other guests on this machine's two cores, 2026-12-07, had none
    of its four executors started after 900 s)."""
    # the cluster is on this guest, whose venv its executors have: numaspark's own Python, as
    # a user names theirs (by default executors run plain python3)
    python = ["--python", str(Path(NUMASPARK).parent / "python")]
    return holdjob_argv(
        app, where, work, out, executors, cores, "512m", 1800, 1800, 3600, python + conf
    )


def hold_job(
    work: Path,
    out: Path,
    where: list[str],
    conf: list[str],
    env: dict,
    executors: int = NODES,
    cores: int = 1,
    app: str = "holdjob.py",
) -> tuple[subprocess.Popen, float]:
    """``numaspark run holdjob.py`` (or ``app``: pythonhold.py) on ``where`` (``--master ...``) with ``executors`` executors
    of ``cores`` cores (NODES of one by default), returned once its first job is done (the
    executors then hold until ``work/go`` exists), with when it was submitted. A run that exits
    first, or has no first job in 3000 s, fails the check with its output and spark-submit's
    log."""
    argv = plain_hold_argv(work, out, where, conf, executors, cores, app)
    print("$ " + " ".join(argv), flush=True)
    app = subprocess.Popen(
        argv, stdout=(work / "run.log").open("w"), stderr=subprocess.STDOUT, env=env
    )
    started = time.monotonic()
    shown = started
    while not (work / "first-job-done").exists():
        if time.monotonic() > shown + 120:  # progress, for a boot cut short by its timeout
            shown = time.monotonic()
            alone = ALONE / "cgroup.procs"
            print(
                f"waiting {shown - started:.0f} s: executors {executor_pids()}, in "
                f"{ALONE}: {alone.read_text().split() if alone.exists() else 'none'}",
                flush=True,
            )
        if app.poll() is not None or time.monotonic() > started + 3000:
            submit = sorted(out.glob("runs/*/spark-submit.log"))
            said = submit[-1].read_text(errors="replace")[-2500:] if submit else "no log"
            if app.poll() is None:  # timed out: the caller never gets it to stop
                app.kill()
                app.wait()
            crash = say_crash(said)
            raise AssertionError(
                (f"the driver's JVM crashed: {crash} | " if crash else "")
                + f"no first job (run exited {app.poll()}): "
                f"{(work / 'run.log').read_text(errors='replace')[-1500:]} "
                f"| spark-submit.log: {said}".replace("\n", " | ")
            )
        time.sleep(2)
    return app, started


class PlainCluster:
    """A standalone master and one worker of NODES * CPUS_PER_NODE cores started with Spark's own classes,
    unbound (daemons that only schedule: little heap, no optimising JIT, as every JVM starts
    ~20x slower here), shared by the plugin's applications of one boot. ``up()`` starts it
    once (a failure fails every check that needs it, with the daemons' logs); ``down()``
    stops it."""

    def __init__(
        self, work: Path, worker_env: dict | None = None, worker_memory: str | None = None
    ) -> None:
        self.work = work
        self.worker_env = worker_env or {}  # the worker's alone (its resources: gpus.py)
        self.worker_memory = worker_memory or f"{NODES * 640}m"
        self.daemons: list[subprocess.Popen] = []
        self.failed: str | None = None
        self.master: list[str] = []
        self.up_s = 0.0

    def _why(self, deadline: float) -> str:
        """Why the cluster is not up: a daemon's JVM that crashed (its signal, frame and error
        file), one that exited, or the wait that ran out; each with its log's tail."""
        said = []
        for name, daemon in zip(("master", "worker"), self.daemons, strict=True):
            log = (self.work / f"{name}.log").read_text(errors="replace")
            crash = say_crash(log)
            if crash is not None:
                said.append(f"the {name}'s JVM crashed: {crash}")
            elif daemon.poll() is not None:
                said.append(f"the {name} exited {daemon.poll()}: {log[-600:]}")
        if not said:
            said.append(
                f"no worker alive after {900 - max(0.0, deadline - time.monotonic()):.0f} s"
            )
        return " | ".join(said)

    def up(self) -> list[str]:
        """``numaspark run``'s ``--master``/``--master-ui`` options for this cluster."""
        from numaspark.spark.home import free_port, spark_env, spark_home
        from numaspark.spark.standalone import alive_workers, master_json

        if self.failed:
            raise AssertionError(f"the plain cluster did not start: {self.failed}")
        if self.master:
            return self.master
        work = self.work
        spark_class = str(spark_home() / "bin" / "spark-class")
        port, webui, wport, wwebui = (free_port() for _ in range(4))
        env = spark_env(
            extra={
                "SPARK_DAEMON_MEMORY": "256m",
                "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
            }
        )
        began = time.monotonic()
        self.daemons = [
            subprocess.Popen(
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(webui),
                ],
                env=env,
                stdout=(work / "master.log").open("w"),
                stderr=subprocess.STDOUT,
            ),
            subprocess.Popen(
                [
                    spark_class,
                    "org.apache.spark.deploy.worker.Worker",
                    f"spark://127.0.0.1:{port}",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(wport),
                    "--webui-port",
                    str(wwebui),
                    "--cores",
                    str(NODES * CPUS_PER_NODE),
                    "--memory",
                    self.worker_memory,
                    "--work-dir",
                    str(work / "work"),
                ],
                env={**env, **self.worker_env},
                stdout=(work / "worker.log").open("w"),
                stderr=subprocess.STDOUT,
            ),
        ]
        deadline = time.monotonic() + 900
        while alive_workers(master_json("127.0.0.1", webui)) < 1:
            if time.monotonic() > deadline or any(d.poll() is not None for d in self.daemons):
                self.failed = self._why(deadline)
                raise AssertionError(f"the plain cluster did not start: {self.failed}")
            time.sleep(2)
        self.up_s = time.monotonic() - began
        self.master = [
            "--master",
            f"spark://127.0.0.1:{port}",
            "--master-ui",
            f"http://127.0.0.1:{webui}",
        ]
        return self.master

    def down(self) -> None:
        from numaspark.supervise.stop import stop_processes

        stop_processes([d.pid for d in self.daemons])


def memory_view(pid: int) -> dict:
    """Where JVM ``pid``'s memory may go, from /proc: its Mems_allowed_list (status), its
    cgroup (v2 ``0::PATH``), the numa_maps policy of /proc/PID/numa_maps (the main thread's
    view: a mapping without a policy of its own shows the policy of the thread whose numa_maps
    is read) and that of each of Spark's task threads (``Executor task launch worker``:
    /proc/PID/task/TID/numa_maps, where the policy set_mempolicy gave that thread shows)."""
    status = Path(f"/proc/{pid}/status").read_text()
    cgroup = Path(f"/proc/{pid}/cgroup").read_text().strip().splitlines()
    tasks = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if (task / "comm").read_text().startswith("Executor task"):
                tasks[int(task.name)] = thread_policy(task / "numa_maps")
        except OSError:  # a thread that ended meanwhile
            continue
    path = next((c[3:] for c in cgroup if c.startswith("0::")), "?")
    files = Path("/sys/fs/cgroup" + path)
    procs = (
        (files / "cgroup.procs").read_text().split() if (files / "cgroup.procs").exists() else []
    )
    cpuset = None  # (cpuset.mems, cpuset.mems.effective) where the cpuset controller is on
    if (files / "cpuset.mems").exists():
        cpuset = tuple(
            (files / f).read_text().strip() for f in ("cpuset.mems", "cpuset.mems.effective")
        )
    return {
        "mems": re.search(r"^Mems_allowed_list:\s*(\S+)", status, re.M).group(1),
        "cgroup": path,
        "cpuset": cpuset,
        "cgroup_procs": procs,
        "process_policy": thread_policy(Path(f"/proc/{pid}/numa_maps")),
        "task_policies": tasks,
    }


def executor_java_home(home: Path, cgroup: Path) -> Path:
    """A JAVA_HOME for the executors (``spark.executorEnv.JAVA_HOME``: the worker launches
    ``$JAVA_HOME/bin/java``) whose java puts the first executor alone into ``cgroup`` before its
    JVM starts: the first to make the directory writes its pid into ``cgroup.procs`` and execs
    the real java (same pid); the others run in the worker's cgroup. The cgroup's parent (the
    root, where init.sh mounts cgroup v2) gets the cpuset controller, so ``cpuset.mems`` exists
    in it for the plugin to write."""
    controllers = (cgroup.parent / "cgroup.controllers").read_text().split()
    assert "cpuset" in controllers, f"no cpuset controller in {cgroup.parent}: {controllers}"
    (cgroup.parent / "cgroup.subtree_control").write_text("+cpuset")
    java = os.path.realpath(shutil.which("java") or "java")
    script = home / "bin" / "java"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        "#!/bin/sh\n# the first executor alone in a cgroup the check made\n"
        f"if mkdir {cgroup} 2>/dev/null; then\n"
        f"  echo $$ > {cgroup}/cgroup.procs || exit 97\nfi\n"
        f'exec {java} "$@"\n'
    )
    script.chmod(0o755)
    return home


def run_plugin_app(
    cluster: PlainCluster, work: Path, conf: list[str], executors: int = NODES, cores: int = 1
) -> dict:
    """``holdjob.py`` on ``cluster`` with the plugin at level node (``--bind node`` and
    ``conf``); after its first job, while the executors hold, each executor's placement
    (``placed()``) and memory (``memory_view()``) read from /proc; then the run record's
    plugin reports by pid, and the timings."""
    from numaspark.supervise.stop import stop_processes

    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    master = cluster.up()
    out = work / "out"
    app = None
    timings = {"cluster_up_s": cluster.up_s}
    try:
        app, started = hold_job(
            work,
            out,
            [*master, "--bind", "node"],
            conf,
            {**os.environ, "COLUMNS": "160"},
            executors,
            cores,
        )
        timings["first_job_s"] = time.monotonic() - started
        cpus_of = node_cpus()
        # the task threads' policies first: an idle task thread ends after 60 s (Spark's
        # cached pool)
        memory = {pid: memory_view(pid) for pid in executor_pids()}
        seen = {pid: {**placed(pid, cpus_of), "memory": m} for pid, m in memory.items()}
        (work / "go").write_text("")
        app.wait(timeout=900)
        timings["run_s"] = time.monotonic() - started
        run_log = (work / "run.log").read_text(errors="replace")
        assert app.returncode == 0, f"run exited {app.returncode}: {run_log[-1500:]}"
    finally:
        if app is not None and app.poll() is None:
            stop_processes([app.pid])
    (record,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    reported = {e["pid"]: e for e in record["effective_placement"]}
    return {"seen": seen, "reported": reported, "timings": timings}


def with_timings(summary: str, timings: dict) -> str:
    return summary + " | timings: " + ", ".join(f"{k} {v:.0f}" for k, v in timings.items())


# Two nodes: the plugin's bind policy, one executor alone in this cgroup (the cgroup path), the
# other in the worker's (the per-thread path)
ALONE = Path("/sys/fs/cgroup/numaspark-executor")


def plugin_node_binding(cluster: PlainCluster, runs: dict) -> str:
    """Issue 32's proof: a standalone cluster started with Spark's own classes (unbound, one
    worker of NODES cores), an application with the affinity plugin at level node (``numaspark
    run --master spark://... --bind node``) and NODES executors of one core. Read from this
    guest's /proc after its first job, while the executors still run: every thread of each
    executor within one node's CPUs, the executors on NODES different nodes, at least 90% of
    each one's anonymous resident pages on its node; and the plugin's report (the run record's
    effective_placement) names the same pids and nodes. On two nodes the application asks for
    ``--mem-policy bind`` and its first executor starts alone in a cgroup (``ALONE``): what
    that adds is checked by ``plugin_bind_thread`` and ``plugin_bind_cgroup``; on four the
    plugin's default, preferred."""
    work = Path("/tmp/plugin-node")
    conf = ["--conf", f"spark.numaspark.affinity.lockDir={work}-locks"]
    shutil.rmtree(f"{work}-locks", ignore_errors=True)
    if NODES == 2:
        if ALONE.exists():
            ALONE.rmdir()
        home = executor_java_home(Path("/tmp/plugin-java-home"), ALONE)
        conf += ["--mem-policy", "bind", "--conf", f"spark.executorEnv.JAVA_HOME={home}"]
    run = runs["node"] = run_plugin_app(cluster, work, conf)
    seen, reported = run["seen"], run["reported"]
    found, problems = [], []
    for pid, s in sorted(seen.items()):
        node = s["homes"][0] if len(s["homes"]) == 1 else None
        anon_total = sum(s["anon"].values())
        local = s["anon"].get(node, 0) / anon_total if node is not None and anon_total else 0.0
        r = reported.get(pid, {})
        found.append(
            f"executor pid {pid}: {s['threads']} threads, all on CPUs "
            f"{','.join(map(str, sorted(s['allowed'])))} (node {node}); anon "
            f"{local:.1%} on N{node} of {anon_total / (1 << 20):.0f} MiB "
            f"({mib(s['anon'])}); file-backed {mib(s['files'])}; plugin: chosen_nodes "
            f"{r.get('chosen_nodes')}, cpus {r.get('cpus')}, choice {r.get('choice')!r}, "
            f"binding {r.get('binding')!r}, local_share {r.get('local_share')}"
        )
        if node is None:
            problems.append(f"pid {pid}: threads on CPUs {sorted(s['allowed'])}, not one node")
            continue
        if local < 0.9:
            problems.append(f"pid {pid}: only {local:.1%} of its anonymous pages on node {node}")
        if r.get("chosen_nodes") != str(node) or cpu_list(r.get("cpus") or "") != s["allowed"]:
            problems.append(
                f"pid {pid}: the plugin reported nodes {r.get('chosen_nodes')} CPUs "
                f"{r.get('cpus')}, /proc says node {node}"
            )
    nodes_used = sorted(n for s in seen.values() for n in s["homes"][:1] if len(s["homes"]) == 1)
    if len(seen) != NODES or nodes_used != list(range(NODES)):
        problems.append(f"{len(seen)} executors on nodes {nodes_used}, want {NODES}, one a node")
    if sorted(reported) != sorted(seen):
        problems.append(f"the plugin reported pids {sorted(reported)}, /proc had {sorted(seen)}")
    summary = with_timings(" | ".join(found), run["timings"])
    assert not problems, "; ".join(problems) + " | " + summary
    return summary


def policy_evidence(pid: int, s: dict, r: dict) -> str:
    m = s["memory"]
    return (
        f"executor pid {pid}: Cpus_allowed_list {','.join(map(str, sorted(s['allowed'])))}, "
        f"Mems_allowed_list {m['mems']}, cgroup {m['cgroup']}; numa_maps: task threads "
        f"{m['task_policies']}, main thread {m['process_policy']}; anon {mib(s['anon'])}; "
        f"plugin binding {r.get('binding')!r}"
    )


def one_node(s: dict) -> int:
    assert len(s["homes"]) == 1, f"threads on CPUs {sorted(s['allowed'])}, not one node"
    return s["homes"][0]


def plugin_bind_thread(runs: dict) -> str:
    """``--mem-policy bind``, the per-thread path: the executor that shares the worker's cgroup
    (not the plugin's to restrict) gets ``set_mempolicy(MPOL_BIND)`` on each task thread. Its
    task threads' numa_maps say ``bind:N`` for its node N; its main thread's (/proc/PID/
    numa_maps) stays ``default`` (a thread's policy, not the process's); its Mems_allowed_list
    is still every node; at least 90% of its anonymous pages are on N; the report says so."""
    run = runs.get("node")
    assert run, "plugin-node-binding's application did not run"
    shared = [
        (pid, s) for pid, s in run["seen"].items() if s["memory"]["cgroup"] != f"/{ALONE.name}"
    ]
    assert len(shared) == NODES - 1, f"{len(shared)} executor(s) outside {ALONE}, want {NODES - 1}"
    found = []
    for pid, s in shared:
        node, m, r = one_node(s), s["memory"], run["reported"].get(pid, {})
        evidence = policy_evidence(pid, s, r)
        assert m["task_policies"], f"no task thread (Executor task launch worker): {evidence}"
        assert set(m["task_policies"].values()) == {f"bind:{node}"}, evidence
        assert m["process_policy"] == "default", evidence
        assert cpu_list(m["mems"]) == set(range(NODES)), evidence
        assert s["anon"].get(node, 0) >= 0.9 * sum(s["anon"].values()), evidence
        assert f"bind:{node} set on" in (r.get("binding") or ""), evidence
        found.append(evidence)
    return " | ".join(found)


def plugin_bind_cgroup(runs: dict) -> str:
    """``--mem-policy bind``, the cgroup path: the executor that started alone in ``ALONE`` (a
    cgroup v2 this check made, the cpuset controller on) has the plugin write its node into the
    cgroup's cpuset.mems: its Mems_allowed_list (/proc/PID/status) is its node N, the cgroup's
    cpuset.mems.effective too, at least 98% of its anonymous pages are on N (every thread's
    pages, the kernel moves those elsewhere), and the report says which cgroup."""
    run = runs.get("node")
    assert run, "plugin-node-binding's application did not run"
    alone = [
        (pid, s) for pid, s in run["seen"].items() if s["memory"]["cgroup"] == f"/{ALONE.name}"
    ]
    assert len(alone) == 1, f"{len(alone)} executor(s) in {ALONE}, want 1: {run['seen']}"
    ((pid, s),) = alone
    node, m, r = one_node(s), s["memory"], run["reported"].get(pid, {})
    evidence = (
        policy_evidence(pid, s, r) + f"; the cgroup's processes {m['cgroup_procs']}, "
        f"(cpuset.mems, cpuset.mems.effective) {m['cpuset']}"
    )
    assert m["cgroup_procs"] == [str(pid)], evidence
    assert m["mems"] == str(node), evidence
    assert m["cpuset"] == (str(node), str(node)), evidence
    assert s["anon"].get(node, 0) >= 0.98 * sum(s["anon"].values()), evidence
    assert f"cgroup {ALONE} cpuset.mems set to {node}" in (r.get("binding") or ""), evidence
    return evidence


def plugin_interleave(cluster: PlainCluster, runs: dict) -> str:
    """``--mem-policy interleave``: a second application on the same cluster, one executor of
    NODES cores, more than a node holds, so the plugin chooses every node (and binds its threads
    to no fewer CPUs). Its task threads' numa_maps say ``interleave:0-(NODES-1)``, its main
    thread's ``default``; its anonymous pages are on every node; the report says so."""
    run = runs["interleave"] = run_plugin_app(
        cluster,
        Path("/tmp/plugin-interleave"),
        [
            "--mem-policy",
            "interleave",
            "--conf",
            "spark.numaspark.affinity.lockDir=/tmp/plugin-interleave-locks",
        ],
        executors=1,
        cores=NODES,
    )
    assert len(run["seen"]) == 1, f"{len(run['seen'])} executors, want 1"
    ((pid, s),) = run["seen"].items()
    m, r = s["memory"], run["reported"].get(pid, {})
    every = f"0-{NODES - 1}"
    evidence = with_timings(policy_evidence(pid, s, r), run["timings"])
    assert s["allowed"] == set(range(NODES)), evidence
    assert m["task_policies"], f"no task thread (Executor task launch worker): {evidence}"
    assert set(m["task_policies"].values()) == {f"interleave:{every}"}, evidence
    assert m["process_policy"] == "default", evidence
    assert all(s["anon"].get(n, 0) > 0 for n in range(NODES)), evidence
    assert f"interleave:{every} set on" in (r.get("binding") or ""), evidence
    return evidence


def plugin_checks() -> None:
    """The plugin's checks, on one plain cluster: its node binding (with bind's two paths on
    two nodes), then on two nodes the interleave application."""
    work = Path("/tmp/plugin-cluster")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cluster, runs = PlainCluster(work), {}
    try:
        check("plugin-node-binding", lambda: plugin_node_binding(cluster, runs))
        if NODES == 2:
            check("plugin-bind-thread-policy", lambda: plugin_bind_thread(runs))
            check("plugin-bind-cgroup", lambda: plugin_bind_cgroup(runs))
            if os.environ.get("NUMASPARK_GUEST_INTERLEAVE", "1") == "1":  # minutes more
                check("plugin-interleave-thread-policy", lambda: plugin_interleave(cluster, runs))
    finally:
        cluster.down()


def thread_policy(numa_maps: Path) -> str:
    """The memory policy of the thread whose numa_maps this is: the policy on the process's
    initial stack (``stack``), a mapping with no policy of its own, where the kernel shows the
    reading thread's. Unlike most mappings' policy, the heap's regions that -XX:+UseNUMA binds
    cannot hide it."""
    for line in numa_maps.read_text().splitlines():
        fields = line.split()
        if "stack" in fields[2:]:
            return fields[1]
    return "?"


def policy_of(pid: int) -> str:
    """The numa_maps policy of most of ``pid``'s resident anonymous memory (``interleave:1``)."""
    weight: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/numa_maps").read_text().splitlines():
        fields = line.split()
        if len(fields) < 2 or any(f.startswith("file=") for f in fields):
            continue
        pages = sum(int(f.split("=")[1]) for f in fields if re.fullmatch(r"N\d+=\d+", f))
        weight[fields[1]] = weight.get(fields[1], 0) + pages
    return max(weight, key=weight.get) if weight else "?"


def jvm_pids(marker: bytes) -> list[int]:
    """The JVMs whose command line names ``marker`` (a main class), read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"java") and any(marker in a for a in argv):
                found.append(int(entry.name))
    return sorted(found)


def _python_workers() -> None:
    from pyworkers import python_checks

    python_checks(check)


def _yarn() -> None:
    from yarncheck import yarn_node_binding

    check("yarn-node-binding", yarn_node_binding)


def _churn() -> None:
    from churn import churn_under_dynamic_allocation

    check("executor-churn", churn_under_dynamic_allocation)


def _devices() -> None:
    from gpus import device_checks

    for name, test in device_checks():
        check(name, test)


def _jvm_stress() -> None:
    from jvmstress import stress_checks

    stress_checks(check)


def _kubernetes() -> None:
    from kube import kubernetes_checks

    kubernetes_checks(check)


def _default_checks() -> None:
    """The two- and four-node boots' checks (no argument): topology and plan, the launch
    checks on two nodes, then the plugin's (minutes under emulation) unless left out."""
    topology_name = f"topology-{ {2: 'two', 4: 'four'}.get(NODES, str(NODES)) }-nodes"
    checks = [(topology_name, topology), ("plan-one-executor-per-node", plan)]
    if NODES == 2:  # the launch checks are the two-node guest's; four nodes prove the plugin
        checks += [
            ("launch-bound-per-node", bound_per_node),
            ("launch-interleave-split", interleaved),
            ("launch-remote-memory", remote),
        ]
    for name, test in checks:
        check(name, test)
    if os.environ.get("NUMASPARK_GUEST_PLUGIN", "1") == "1":  # minutes under emulation
        plugin_checks()
    if os.environ.get("NUMASPARK_GUEST_SPARK") == "1":  # minutes more under emulation
        check("spark-worker-per-node", spark_workers)


# The boots of their own (test_numa_guest.py), by the one argument checks.py gets there.
OWN_BOOTS = {
    "yarn-node-binding": _yarn,  # the mini YARN (yarncheck.py)
    "python-workers": _python_workers,  # two CPUs per node (pyworkers.py)
    "devices": _devices,  # a stand-in GPU on each node (gpus.py)
    "churn": _churn,  # two CPUs per node (churn.py)
    "kubernetes": _kubernetes,  # 2 CPUs, 4 GiB a node (kube.py)
    "jvm-stress": _jvm_stress,  # 2 CPUs a node: JVMs under load (jvmstress.py, issue 57)
    "plugin": plugin_checks,  # the plugin's checks alone, to iterate on them (minutes)
}


def main() -> int:
    print("NUMASPARK-CHECKS BEGIN", flush=True)
    if os.environ.get("NUMASPARK_GUEST_JAVA_OPTIONS"):  # every JVM of the boot (issue 57's tries)
        os.environ["JDK_JAVA_OPTIONS"] = os.environ["NUMASPARK_GUEST_JAVA_OPTIONS"]
        print(f"JDK_JAVA_OPTIONS={os.environ['JDK_JAVA_OPTIONS']}", flush=True)
    print(subprocess.run(["numactl", "--hardware"], capture_output=True, text=True).stdout)
    chosen = sys.argv[1:]
    if len(chosen) == 1 and chosen[0] in OWN_BOOTS:
        OWN_BOOTS[chosen[0]]()
    elif chosen:
        print(f"checks.py: no boot {' '.join(chosen)!r}: give one of {', '.join(OWN_BOOTS)}")
        return 2
    else:
        _default_checks()
    print(
        f"NUMASPARK-CHECKS END {sum(results)} passed, {len(results) - sum(results)} failed",
        flush=True,
    )
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
