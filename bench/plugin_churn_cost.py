"""What the affinity plugin costs every executor that dynamic allocation adds (issue 57): the
time from the executor's start to its first task, with the plugin binding at node level
against without the plugin, in alternating pairs, on a standalone cluster here.

A plain standalone master and worker (2 cores, 2 GiB), started once with Spark's own
classes. Each application is a PySpark job of --bursts bursts (2 tasks of 1 s each) with idle
spells between them longer than the idle timeout, under dynamic allocation with shuffle
tracking (0 to 2 executors of one core, idle timeout 4 s): every burst adds executors and
every idle spell removes them, as churn does. One side runs it with the plugin
(``spark.plugins``, level node, its lock directory in a temporary directory), the other
without the plugin; a pair runs both, the first pair with the plugin first, the next
without it first, and so on, so that drift falls on both sides.

Per executor, from the application's event log: ``SparkListenerExecutorAdded``'s
``Timestamp`` (the driver registered the executor) to the ``Launch Time`` of that executor's
first ``SparkListenerTaskStart``. Spark offers an executor no task before it says it is
ready (``LaunchedExecutor``, once its ``Executor`` and so its plugins have started), so the
interval holds the plugin's start in the executor: its node choice (the host-wide choice lock,
reading the holders, the slot), its binding, its first placement report.

On this machine's one NUMA node the plugin chooses and reads but binds nothing and moves no
page: the figure is the floor of what churn pays per executor. On several nodes the page
migration adds to it; bench/binding_cost.py gives that part per GiB resident. Both sides share
two CPUs with the driver, the master and the worker: compare the medians, not single runs.

    .venv/bin/python bench/plugin_churn_cost.py [--pairs 3] [--bursts 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from numaspark.placement.plugin import LEVEL_KEY, LOCK_DIR_KEY, PLUGIN_CLASS
from numaspark.spark.affinity import build_jar
from numaspark.spark.home import free_port, spark_env, spark_home
from numaspark.spark.standalone_master import alive_workers, master_json
from numaspark.supervise.processes import stop_processes

APP = r"""
import sys
import time

from pyspark.sql import SparkSession


def task(index, rows):
    import time

    time.sleep(1.0)
    yield index


bursts, idle_s = int(sys.argv[1]), float(sys.argv[2])
spark = SparkSession.builder.appName("plugin-churn-cost").getOrCreate()
for burst in range(bursts):
    if burst:
        time.sleep(idle_s)
    spark.sparkContext.parallelize(range(2), 2).mapPartitionsWithIndex(task).collect()
spark.stop()
"""

DYNAMIC = {
    "spark.executor.cores": "1",
    "spark.executor.memory": "512m",
    "spark.cores.max": "2",
    "spark.executor.instances": "0",
    "spark.dynamicAllocation.enabled": "true",
    "spark.dynamicAllocation.shuffleTracking.enabled": "true",
    "spark.dynamicAllocation.executorIdleTimeout": "4s",
    "spark.dynamicAllocation.minExecutors": "0",
    "spark.dynamicAllocation.maxExecutors": "2",
    "spark.ui.enabled": "false",
    "spark.eventLog.enabled": "true",
    "spark.eventLog.compress": "false",
}


def start_cluster(work: Path) -> tuple[str, list[subprocess.Popen]]:
    """A plain master and a 2-core, 2 GiB worker on 127.0.0.1, with Spark's own classes."""
    spark_class = str(spark_home() / "bin" / "spark-class")
    port, webui, wport, wwebui = (free_port() for _ in range(4))
    env = spark_env()
    master = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"]
        + ["--port", str(port), "--webui-port", str(webui)],
        env=env,
        stdout=(work / "master.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    worker = subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}"]
        + ["--host", "127.0.0.1", "--port", str(wport), "--webui-port", str(wwebui)]
        + ["--cores", "2", "--memory", "2g", "--work-dir", str(work / "work")],
        env=env,
        stdout=(work / "worker.log").open("w"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while alive_workers(master_json("127.0.0.1", webui)) < 1:
        if time.monotonic() > deadline:
            stop_processes([worker.pid, master.pid])
            raise SystemExit(f"the standalone cluster did not start (see its logs in {work})")
        time.sleep(0.5)
    return f"spark://127.0.0.1:{port}", [master, worker]


def run_app(master: str, work: Path, name: str, plugin: bool, bursts: int) -> list[float]:
    """One application; the ms from each executor's addition to its first task."""
    events = work / name / "events"
    events.mkdir(parents=True)
    conf = {**DYNAMIC, "spark.eventLog.dir": str(events)}
    if plugin:
        jar = str(build_jar())
        conf |= {
            "spark.plugins": PLUGIN_CLASS,
            "spark.driver.extraClassPath": jar,
            "spark.executor.extraClassPath": jar,
            LEVEL_KEY: "node",
            LOCK_DIR_KEY: str(work / "locks"),
        }
    argv = [str(spark_home() / "bin" / "spark-submit"), "--master", master]
    for key, value in conf.items():
        argv += ["--conf", f"{key}={value}"]
    app = work / "app.py"
    with (work / name / "driver.log").open("w") as log:
        subprocess.run(
            [*argv, str(app), str(bursts), "6"],
            env=spark_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            check=True,
        )
    return start_to_first_task(events)


def start_to_first_task(events: Path) -> list[float]:
    """Per executor of the event log under ``events`` (one file, or a rolling log's folder)."""
    added: dict[str, int] = {}
    first: dict[str, int] = {}
    lines = [
        line
        for log in sorted(events.rglob("*"))
        if log.is_file() and not log.name.startswith((".", "appstatus"))
        for line in log.read_text().splitlines()
    ]
    for line in lines:
        event = json.loads(line)
        kind = event.get("Event")
        if kind == "SparkListenerExecutorAdded":
            added[event["Executor ID"]] = event["Timestamp"]
        elif kind == "SparkListenerTaskStart":
            info = event["Task Info"]
            executor = info["Executor ID"]
            first[executor] = min(first.get(executor, info["Launch Time"]), info["Launch Time"])
    return [float(first[e] - added[e]) for e in sorted(added) if e in first]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--bursts", type=int, default=2, help="bursts per application")
    args = parser.parse_args()
    build_jar()
    rows = []
    with tempfile.TemporaryDirectory(prefix="numaspark-churncost-") as tmp:
        work = Path(tmp)
        (work / "app.py").write_text(APP)
        master, daemons = start_cluster(work)
        try:
            for pair in range(args.pairs):
                order = (True, False) if pair % 2 == 0 else (False, True)
                got = {}
                for plugin in order:
                    side = "plugin" if plugin else "none"
                    got[side] = run_app(master, work, f"{pair}-{side}", plugin, args.bursts)
                rows.append(got)
                print(
                    f"pair {pair + 1}: plugin {_ms(got['plugin'])}, without {_ms(got['none'])}",
                    flush=True,
                )
        finally:
            stop_processes([d.pid for d in reversed(daemons)])
    print()
    print(f"{'pair':>4} {'executors':>9} {'plugin ms':>10} {'without ms':>11} {'difference':>11}")
    differences = []
    for i, got in enumerate(rows):
        plugin, none = statistics.median(got["plugin"]), statistics.median(got["none"])
        differences.append(plugin - none)
        count = f"{len(got['plugin'])}+{len(got['none'])}"
        print(f"{i + 1:>4} {count:>9} {plugin:>10.0f} {none:>11.0f} {plugin - none:>+11.0f}")
    every_plugin = [ms for got in rows for ms in got["plugin"]]
    every_none = [ms for got in rows for ms in got["none"]]
    print(
        f"\nexecutor added -> first task, median of {len(every_plugin)} executors with the "
        f"plugin: {statistics.median(every_plugin):.0f} ms; of {len(every_none)} without: "
        f"{statistics.median(every_none):.0f} ms"
    )
    print(
        f"the plugin's fixed cost per executor (median of the pairs' differences): "
        f"{statistics.median(differences):+.0f} ms"
    )
    return 0


def _ms(values: list[float]) -> str:
    return ", ".join(f"{v:.0f}" for v in values) + " ms"


if __name__ == "__main__":
    raise SystemExit(main())
