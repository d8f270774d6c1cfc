"""Benchmark: what `numaspark run -- spark-submit LINE` costs over the user's LINE run by plain
spark-submit (goal, on the long application: median wall-time ratio at most 1.05 with the
collectors on and 1.02 with them off).

    .venv/bin/python bench/app_overhead.py [--pairs 3] [--short-rows N] [--long-rows N]
    .venv/bin/python bench/app_overhead.py --cluster [--pairs 5]     # as root (namespaces)
    .venv/bin/python bench/app_overhead.py --cluster --leave-out 4   # which settings cost

``--cluster`` measures numaspark's fixed cost per application on a cluster at another address
(goal: at most 2 s): a plain standalone Master and two Workers on two network-namespace hosts
(tests/nscluster.py's ``SparkHosts``, started with Spark's own classes), the short application
submitted to it by plain spark-submit (``--master spark://...`` and ``spark.driver.host``
set to this machine's address on the route, as a user must) and by ``numaspark run
--master ... --bind none`` (numaspark plans from the master's status, ships the plugin, reads
its reports back, parses the event log and stores the record). The fixed cost is the median
of the pairs' differences; the parts are as above, ``run`` being spark-submit's wall time
over the baseline's (the plugin's start in each executor, the event log). Namespaces share
this machine's CPUs: the figure is numaspark's own work, not the cluster's speed.

The application is a user's own (tests/apps/squares.py: an RDD sums the squares of N
numbers), given as the same spark-submit line to both sides: ``--master local[2]``. The
baseline runs that line verbatim with pyspark's spark-submit (no plugin, no event log, none
of numaspark's settings); numaspark runs it with ``--bind none`` (its default). The two
alternate in pairs (baseline first, then numaspark first) so that drift falls on both sides,
collectors on and off, on a short application (about 10 s) and a long one.

Reported per application and collector setting: the median wall time of each side and the
median of the pairs' ratios, and the seconds numaspark adds, split into
- start-up: the Python interpreter and numaspark's imports (a ``numaspark version``);
- planning: the rest until the application's plan is written (topology, plan, environment);
- run: numaspark's spark-submit wall time over the baseline's (event log, collectors,
  the watcher, numaspark's conf);
- analysis: from spark-submit's end to numaspark's exit (event-log parsing, assembly,
  storing, the tables it prints).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from numaspark.spark.home import spark_env, spark_home

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "tests" / "apps" / "squares.py"


@dataclass(frozen=True)
class Where:
    """Where both sides run: local[2] here, or a standalone master at another address."""

    master: str = "local[2]"
    ui: str | None = None  # the master's web UI (numaspark's side sizes the run from it)
    here: str = "127.0.0.1"  # the driver's address, as the executors reach it


def line(rows: int, answer: Path, where: Where = Where()) -> list[str]:
    """The user's line: what both sides run."""
    driver = [] if where.ui is None else ["--conf", f"spark.driver.host={where.here}"]
    return [
        str(spark_home() / "bin" / "spark-submit"),
        "--master",
        where.master,
        *driver,
        str(APP),
        str(answer),
        str(rows),
    ]


def baseline(rows: int, tmp: Path, where: Where = Where()) -> float:
    started = time.monotonic()
    subprocess.run(
        line(rows, tmp / "base.json", where),
        check=True,
        capture_output=True,
        env=spark_env(where.here),
    )
    return time.monotonic() - started


def numaspark(
    rows: int, tmp: Path, collect: bool, where: Where = Where(), out: Path | None = None
) -> dict[str, float]:
    out = out or tmp / f"out-{time.monotonic_ns()}"
    ui = [] if where.ui is None else ["--master-ui", where.ui]
    argv = [
        sys.executable,
        "-m",
        "numaspark",
        "run",
        "--out",
        str(out),
        "--collect" if collect else "--no-collect",
        *ui,
        "--",
        *line(rows, tmp / "ns.json", where),
    ]
    started = time.time()
    subprocess.run(argv, check=True, capture_output=True)
    ended = time.time()
    (run_dir,) = (out / "runs").iterdir()
    (record,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    submit_s = record["app"]["wall_time_s"]
    app_done = (run_dir / "app.json").stat().st_mtime
    return {
        "wall": ended - started,
        "submit": submit_s,
        "before": (run_dir / "plan.json").stat().st_mtime - started,
        "analysis": ended - app_done,
    }


def startup_s() -> float:
    times = []
    for _ in range(5):
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "numaspark", "version"], check=True, capture_output=True
        )
        times.append(time.monotonic() - started)
    return statistics.median(times)


def measure(
    rows: int, collect: bool, pairs: int, tmp: Path, startup: float, where: Where = Where()
) -> dict:
    base, ours, ratios, added = [], [], [], []
    for pair in range(pairs):
        if pair % 2 == 0:
            b, n = baseline(rows, tmp, where), numaspark(rows, tmp, collect, where)
        else:
            n, b = numaspark(rows, tmp, collect, where), baseline(rows, tmp, where)
        base.append(b)
        ours.append(n)
        ratios.append(n["wall"] / b)
        added.append(n["wall"] - b)
        print(
            f"  pair {pair}: baseline {b:.2f} s, numaspark {n['wall']:.2f} s "
            f"(ratio {n['wall'] / b:.3f})",
            flush=True,
        )
    median_base = statistics.median(base)
    median = {k: statistics.median(o[k] for o in ours) for k in ours[0]}
    return {
        "baseline_s": median_base,
        "numaspark_s": median["wall"],
        "ratio": statistics.median(ratios),
        "added_s": statistics.median(added),
        "startup_s": startup,
        "planning_s": median["before"] - startup,
        "run_s": median["submit"] - median_base,
        "analysis_s": median["analysis"],
    }


def on_cluster(rows: int, pairs: int, startup: float) -> None:
    """The fixed cost per application on a cluster at another address (namespace hosts)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from nscluster import SparkHosts  # the tests' namespace hosts: a bench helper, not numaspark

    with tempfile.TemporaryDirectory() as tmp, SparkHosts(Path(tmp) / "hosts") as cluster:
        where = Where(cluster.master, cluster.ui, cluster.here)
        print(f"cluster at {cluster.master}, the driver at {cluster.here}", flush=True)
        found = measure(rows, False, pairs, Path(tmp), startup, where)
    print(
        "\n| application | baseline s | numaspark s | added s (median of pairs) | start-up s "
        "| planning s | run s | analysis s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| short ({rows:,} rows), 2 executors at another address | {found['baseline_s']:.2f} "
        f"| {found['numaspark_s']:.2f} | {found['added_s']:.2f} | {found['startup_s']:.2f} "
        f"| {found['planning_s']:.2f} | {found['run_s']:.2f} | {found['analysis_s']:.2f} |"
    )
    met = "met" if found["added_s"] <= 2.0 else "NOT met"
    print(f"goal, fixed cost per application on a cluster <= 2 s: {found['added_s']:.2f} s: {met}")


# numaspark's settings on a cluster, in groups that `--leave-out` leaves out one at a time
GROUPS = {
    "event log": ("spark.eventLog.",),
    "plugin": ("spark.plugins", "spark.jars", "spark.numaspark."),
    "executor metrics": (
        "spark.executor.processTreeMetrics.",
        "spark.executor.metrics.",
    ),
    "java options": ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"),
    "layout": (
        "spark.executor.instances",
        "spark.executor.cores",
        "spark.executor.memory",
        "spark.cores.max",
        "spark.task.cpus",
        "spark.default.parallelism",
        "spark.sql.shuffle.partitions",
    ),
}
# what Spark itself writes into an application's properties, run by run
RUNTIME = ("spark.app.", "spark.driver.port", "spark.executor.id", "spark.submit.", "spark.ui.port")


def _properties(event_dir: Path) -> dict[str, str]:
    from numaspark.metrics.eventlog import parse_event_log

    (log_path,) = [p for p in event_dir.iterdir() if not p.name.startswith(".")]
    return dict(parse_event_log(log_path).spark_properties)


def numasparks_settings(rows: int, tmp: Path, where: Where) -> dict[str, str]:
    """The settings numaspark's run gave the application beyond the user's line: its
    record's Spark properties less those of the same line run plainly with an event log."""
    probe = tmp / "probe-events"
    probe.mkdir()
    logged = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": str(probe)}
    with_settings(rows, tmp, where, logged)
    plain = _properties(probe)
    out = tmp / "probe-ns"
    numaspark(rows, tmp, False, where, out)
    (record,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    ours = record["app"]["spark_conf"]
    return {
        k: v
        for k, v in ours.items()
        if not k.startswith(RUNTIME) and (plain.get(k) != v or k.startswith("spark.eventLog."))
    }


def with_settings(rows: int, tmp: Path, where: Where, settings: dict[str, str]) -> float:
    """The user's line run by plain spark-submit with ``settings`` added."""
    plain_line = line(rows, tmp / "set.json", where)
    confs = [x for k, v in settings.items() for x in ("--conf", f"{k}={v}")]
    started = time.monotonic()
    subprocess.run(
        [plain_line[0], *confs, *plain_line[1:]],
        check=True,
        capture_output=True,
        env=spark_env(where.here),
    )
    return time.monotonic() - started


def leave_out(rows: int, rounds: int) -> None:
    """Plain spark-submit, then with all of numaspark's settings, then with all but one group
    at a time, on the cluster at another address, in rounds of rotating order: which of
    numaspark's settings its cost per application comes from."""
    sys.path.insert(0, str(ROOT / "tests"))
    from nscluster import SparkHosts

    with tempfile.TemporaryDirectory() as tmp, SparkHosts(Path(tmp) / "hosts") as cluster:
        where = Where(cluster.master, cluster.ui, cluster.here)
        settings = numasparks_settings(rows, Path(tmp), where)
        (Path(tmp) / "events").mkdir(exist_ok=True)
        settings = {
            k: (str(Path(tmp) / "events") if k == "spark.eventLog.dir" else v)
            for k, v in settings.items()
        }
        print("numaspark's settings:", json.dumps(settings, indent=1), flush=True)
        variants = {"plain": {}, "all of numaspark's": settings}
        for group, prefixes in GROUPS.items():
            left = {k: v for k, v in settings.items() if not k.startswith(prefixes)}
            if left != settings:
                variants[f"all but {group}"] = left
        times: dict[str, list[float]] = {name: [] for name in variants}
        names = list(variants)
        for round_ in range(rounds):
            for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
                times[name].append(with_settings(rows, Path(tmp), where, variants[name]))
                print(f"  round {round_}: {name} {times[name][-1]:.2f} s", flush=True)
    plain = statistics.median(times["plain"])
    print("\n| settings | median s | over plain s | runs |\n|---|---:|---:|---|")
    for name, found in times.items():
        median = statistics.median(found)
        runs = ", ".join(f"{t:.1f}" for t in found)
        print(f"| {name} | {median:.2f} | {median - plain:+.2f} | {runs} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--short-rows", type=int, default=2_000_000)
    parser.add_argument("--long-rows", type=int, default=400_000_000)
    parser.add_argument("--only", choices=("short", "long"), default=None)
    parser.add_argument("--cluster", action="store_true", help="on namespace hosts (root)")
    parser.add_argument(
        "--leave-out",
        type=int,
        metavar="ROUNDS",
        help="with --cluster: plain spark-submit with numaspark's settings, all and all but "
        "one group at a time, in ROUNDS rounds",
    )
    args = parser.parse_args()
    if args.leave_out:
        leave_out(args.short_rows, args.leave_out)
        return
    startup = startup_s()
    if args.cluster:
        on_cluster(args.short_rows, args.pairs, startup)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, count in (("short", args.short_rows), ("long", args.long_rows)):
            if args.only not in (None, name):
                continue
            for collect in (True, False):
                print(
                    f"{name} application ({count:,} rows), collectors "
                    f"{'on' if collect else 'off'}:",
                    flush=True,
                )
                found = measure(count, collect, args.pairs, Path(tmp), startup)
                rows.append((name, count, collect, found))
    print(
        "\n| application | collectors | baseline s | numaspark s | ratio (median of pairs) "
        "| start-up s | planning s | run s | analysis s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name, count, collect, f in rows:
        print(
            f"| {name} ({count:,} rows) | {'on' if collect else 'off'} | {f['baseline_s']:.2f} "
            f"| {f['numaspark_s']:.2f} | {f['ratio']:.3f} | {f['startup_s']:.2f} "
            f"| {f['planning_s']:.2f} | {f['run_s']:.2f} | {f['analysis_s']:.2f} |"
        )
    goals = {True: 1.05, False: 1.02}
    for name, _, collect, f in rows:
        if name == "long":
            met = "met" if f["ratio"] <= goals[collect] else "NOT met"
            print(
                f"goal, long, collectors {'on' if collect else 'off'}: ratio {f['ratio']:.3f} "
                f"<= {goals[collect]}: {met}"
            )


if __name__ == "__main__":
    main()
