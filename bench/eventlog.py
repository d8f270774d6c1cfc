"""Event-log analysis at scale: numaspark against Spark's own History Server.

    .venv/bin/python bench/eventlog.py --tasks 100000 1000000 [--dir /tmp/evbench] [--no-history]

Generates application logs of N tasks in 100 stages (50 jobs of a shuffle-map
and a result stage) from the recorded fixture tests/fixtures/eventlogs/plain
(its real Spark 4.3.0 events as templates: task ids, times and run times vary
per task), plain and rolling zstd (files of 128 MB before compression, one
zstd frame each, as Spark writes them). Then, per log: `numaspark analyze
--json` and `numaspark whatif --json` timed as the user runs them, and
Spark's History Server (from the installed pyspark, 4 GB heap) timed from its
start until its REST API returns every stage of the application. Times are the
median of --repeat runs with nothing watching; peak memory, from one more run,
is the largest sum of PSS over the process and its children, sampled every
200 ms. The sums of numaspark and of the REST API are compared (tasks,
executorRunTime), as tests/test_spark_runs.py does on the recorded logs.
Generated logs are kept in --dir for re-runs (a 1,000,000-task log is 4.5 GiB
plain, 0.03 GiB zstd: repeated templates compress far better than a real log,
which makes the zstd case lighter on reading than a real one); nothing is
written into the repository.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil
import zstandard

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "eventlogs" / "plain"
STAGES = 100
ROLL_BYTES = 128 << 20  # spark.eventLog.rolling.maxFileSize's default


# --- generating logs -----------------------------------------------------------------


def _templates() -> dict:
    events = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    by_kind: dict[str, list[dict]] = {}
    for event in events:
        by_kind.setdefault(event["Event"], []).append(event)
    return by_kind


def _format(event: dict, fields: dict[str, tuple[tuple[str, ...], int]]) -> str:
    """The event as a str.format template: each named field's value becomes {name}."""
    sentinels = {}
    for i, (name, (path, _)) in enumerate(fields.items()):
        target = event
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = 900_000_000_001 + i
        sentinels[name] = str(900_000_000_001 + i)
    text = json.dumps(event, separators=(",", ":")).replace("{", "{{").replace("}", "}}")
    for name, sentinel in sentinels.items():
        text = text.replace(sentinel, "{" + name + "}")
    return text + "\n"


def _task_templates(kinds: dict) -> dict[int, tuple[str, str]]:
    """Per fixture stage (0: shuffle map, 1: result): a TaskStart and a TaskEnd template."""
    out = {}
    info = ("Task Info",)
    ids = {
        "stage": (("Stage ID",), 0),
        "task": ((*info, "Task ID"), 0),
        "index": ((*info, "Index"), 0),
        "partition": ((*info, "Partition ID"), 0),
        "launch": ((*info, "Launch Time"), 0),
    }
    for stage in (0, 1):
        start = next(e for e in kinds["SparkListenerTaskStart"] if e["Stage ID"] == stage)
        end = next(e for e in kinds["SparkListenerTaskEnd"] if e["Stage ID"] == stage)
        end_fields = {
            **ids,
            "finish": ((*info, "Finish Time"), 0),
            "run": (("Task Metrics", "Executor Run Time"), 0),
            "cpu": (("Task Metrics", "Executor CPU Time"), 0),
        }
        out[stage] = (
            _format(json.loads(json.dumps(start)), ids),
            _format(json.loads(json.dumps(end)), end_fields),
        )
    return out


def _stage_event(
    template: dict, stage: int, tasks: int, parents: list[int], t: int, done: bool
) -> str:
    event = json.loads(json.dumps(template))
    info = event["Stage Info"]
    info.update(
        {"Stage ID": stage, "Number of Tasks": tasks, "Parent IDs": parents, "Submission Time": t}
    )
    if done:
        info["Completion Time"] = t + 1000
    return json.dumps(event, separators=(",", ":")) + "\n"


def generate_lines(tasks: int, app_id: str):
    """The log's lines, in the order Spark writes them."""
    kinds = _templates()
    head = (
        "SparkListenerLogStart",
        "SparkListenerResourceProfileAdded",
        "SparkListenerExecutorAdded",
        "SparkListenerBlockManagerAdded",
        "SparkListenerEnvironmentUpdate",
        "SparkListenerApplicationStart",
    )
    t0 = 1_795_000_000_000
    for kind in head:
        event = kinds[kind][0]
        if kind == "SparkListenerApplicationStart":
            event = {**event, "App ID": app_id, "App Name": f"bench-{tasks}", "Timestamp": t0}
        yield json.dumps(event, separators=(",", ":")) + "\n"
    task_lines = _task_templates(kinds)
    submitted = {e["Stage Info"]["Stage ID"]: e for e in kinds["SparkListenerStageSubmitted"]}
    completed = {e["Stage Info"]["Stage ID"]: e for e in kinds["SparkListenerStageCompleted"]}
    job_start = kinds["SparkListenerJobStart"][0]
    per_stage = tasks // STAGES
    task_id = 0
    for job in range(STAGES // 2):
        stages = [2 * job, 2 * job + 1]
        t = t0 + 10_000 * (job + 1)
        start = json.loads(json.dumps(job_start))
        start.update({"Job ID": job, "Submission Time": t, "Stage IDs": stages})
        for info, stage in zip(start["Stage Infos"], stages, strict=True):
            info.update(
                {
                    "Stage ID": stage,
                    "Number of Tasks": per_stage,
                    "Parent IDs": [stage - 1] if stage % 2 else [],
                }
            )
        yield json.dumps(start, separators=(",", ":")) + "\n"
        for kind, stage in zip((0, 1), stages, strict=True):
            parents = [stage - 1] if kind else []
            yield _stage_event(submitted[kind], stage, per_stage, parents, t, done=False)
            start_line, end_line = task_lines[kind]
            for index in range(per_stage):
                launch = t + index % 977
                run = 20 + (task_id * 7919) % 113
                values = {
                    "stage": stage,
                    "task": task_id,
                    "index": index,
                    "partition": index,
                    "launch": launch,
                }
                yield start_line.format(**values)
                yield end_line.format(**values, finish=launch + run + 9, run=run, cpu=run * 600_000)
                task_id += 1
            yield _stage_event(completed[kind], stage, per_stage, parents, t, done=True)
        yield (
            json.dumps(
                {
                    "Event": "SparkListenerJobEnd",
                    "Job ID": job,
                    "Completion Time": t + 2000,
                    "Job Result": {"Result": "JobSucceeded"},
                },
                separators=(",", ":"),
            )
            + "\n"
        )
    yield (
        json.dumps(
            {"Event": "SparkListenerApplicationEnd", "Timestamp": t0 + 10_000 * 60, "ExitCode": 0},
            separators=(",", ":"),
        )
        + "\n"
    )


def write_plain(tasks: int, directory: Path) -> Path:
    app_id = f"local-bench{tasks}"
    path = directory / app_id
    if not path.exists():
        partial = path.with_suffix(".part")
        with partial.open("w") as out:
            out.writelines(generate_lines(tasks, app_id))
        partial.rename(path)
    return path


def write_rolling_zstd(tasks: int, directory: Path) -> Path:
    app_id = f"local-benchz{tasks}"
    path = directory / f"eventlog_v2_{app_id}"
    if path.exists():
        return path
    partial = directory / f"partial_{app_id}"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    (partial / f"appstatus_{app_id}").touch()
    number, written, writer, handle = 0, ROLL_BYTES, None, None
    for line in generate_lines(tasks, app_id):
        if written >= ROLL_BYTES:
            if writer is not None:
                writer.close()
            number += 1
            handle = (partial / f"events_{number}_{app_id}.zstd").open("wb")
            writer = zstandard.ZstdCompressor(level=1).stream_writer(handle)  # one frame a file
            written = 0
        data = line.encode()
        writer.write(data)
        written += len(data)
    writer.close()
    partial.rename(path)
    return path


# --- timing ----------------------------------------------------------------------------


class PeakMemory:
    """The largest sum of PSS (resident memory, shared pages divided among their sharers) of a
    process and its children, sampled every 200 ms: RSS would count forked workers' shared
    pages once per worker."""

    def __init__(self, pid: int) -> None:
        self.root, self.peak, self._stop = psutil.Process(pid), 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(psutil.Error):
                procs = [self.root, *self.root.children(recursive=True)]
                total = 0
                for proc in procs:
                    with contextlib.suppress(psutil.Error):
                        total += proc.memory_full_info().pss
                self.peak = max(self.peak, total)
            time.sleep(0.2)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def timed_numaspark(args: list[str], repeat: int) -> tuple[float, int, dict]:
    """The median wall time of ``repeat`` runs with nothing watching them, then one more run
    under the memory sampler for the peak (reading smaps costs CPU that would slow a timed
    run on two cores); the JSON the command printed."""
    numaspark = Path(sys.executable).with_name("numaspark")
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run([str(numaspark), *args], capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"numaspark {' '.join(args)} failed: {proc.stderr.strip()}")
    proc = subprocess.Popen(
        [str(numaspark), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    memory = PeakMemory(proc.pid)
    out, _ = proc.communicate()
    return statistics.median(times), memory.stop(), json.loads(out)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def timed_history_server(log: Path, app_id: str, stages: int) -> tuple[float, int, dict]:
    """Start Spark's History Server on a directory holding only ``log``; the time until its
    REST API lists every stage of the application, its peak memory, and its stage sums."""
    from numaspark.spark.home import spark_home

    directory = log.parent / f"history-{log.name}"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    (directory / log.name).symlink_to(log.resolve(), target_is_directory=log.is_dir())
    port = _free_port()
    env = {
        **os.environ,
        "SPARK_DAEMON_MEMORY": "4g",
        "SPARK_HISTORY_OPTS": f"-Dspark.history.fs.logDirectory={directory.as_uri()} "
        f"-Dspark.history.ui.port={port} "
        "-Dspark.history.fs.update.interval=1s",
    }
    api = f"http://127.0.0.1:{port}/api/v1/applications/{app_id}/stages"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [
            str(spark_home() / "bin" / "spark-class"),
            "org.apache.spark.deploy.history.HistoryServer",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    memory = PeakMemory(proc.pid)
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit("the History Server exited; run it by hand to see why")
            try:
                found = json.loads(urllib.request.urlopen(api, timeout=600).read())
            except OSError:  # not listening, or the application not replayed yet
                time.sleep(0.25)
                continue
            if len(found) >= stages:
                break
            time.sleep(0.25)
        elapsed = time.perf_counter() - start
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(20)
        if proc.poll() is None:
            proc.kill()
        peak = memory.stop()
        shutil.rmtree(directory, ignore_errors=True)
    sums = {
        "numTasks": sum(s["numCompleteTasks"] + s["numFailedTasks"] for s in found),
        "executorRunTime": sum(s["executorRunTime"] for s in found),
    }
    return elapsed, peak, sums


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/numaspark-eventlog-bench"))
    parser.add_argument("--formats", nargs="+", default=["plain", "rolling-zstd"])
    parser.add_argument("--no-history", action="store_true", help="skip the History Server")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each command")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    rows = []
    gib = 1 << 30
    for tasks in args.tasks:
        for fmt in args.formats:
            start = time.perf_counter()
            log = (write_plain if fmt == "plain" else write_rolling_zstd)(tasks, args.dir)
            size = (
                sum(f.stat().st_size for f in log.iterdir()) if log.is_dir() else log.stat().st_size
            )
            print(
                f"{tasks:>9,} tasks {fmt:<12} {size / gib:5.2f} GiB on disk "
                f"(ready in {time.perf_counter() - start:.0f} s)",
                flush=True,
            )
            app_id = f"local-bench{tasks}" if fmt == "plain" else f"local-benchz{tasks}"
            a_s, a_mem, analyzed = timed_numaspark(["analyze", str(log), "--json"], args.repeat)
            w_s, w_mem, _ = timed_numaspark(
                ["whatif", str(log), "--cores", "1,8,64", "--json"], args.repeat
            )
            ours = analyzed["logs"][0]["aggregates"]
            row = {
                "tasks": tasks,
                "format": fmt,
                "analyze_s": a_s,
                "analyze_gib": a_mem / gib,
                "whatif_s": w_s,
                "whatif_gib": w_mem / gib,
            }
            print(
                f"  analyze {a_s:6.1f} s {a_mem / gib:5.2f} GiB   whatif {w_s:6.1f} s "
                f"{w_mem / gib:5.2f} GiB",
                flush=True,
            )
            if not args.no_history:
                h_s, h_mem, theirs = timed_history_server(log, app_id, STAGES)
                same = (
                    theirs["numTasks"] == ours["numTasks"]
                    and theirs["executorRunTime"] == ours["executorRunTime"]
                )
                row.update(history_s=h_s, history_gib=h_mem / gib, sums_agree=same)
                print(
                    f"  History Server {h_s:6.1f} s {h_mem / gib:5.2f} GiB; sums agree: {same} "
                    f"(tasks {theirs['numTasks']:,} / {ours['numTasks']:,.0f})",
                    flush=True,
                )
            rows.append(row)
    print("\n| tasks | log | analyze | whatif | History Server | sums agree |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        history = (
            f"{r['history_s']:.1f} s, {r['history_gib']:.2f} GiB" if "history_s" in r else "not run"
        )
        print(
            f"| {r['tasks']:,} | {r['format']} | {r['analyze_s']:.1f} s, "
            f"{r['analyze_gib']:.2f} GiB | {r['whatif_s']:.1f} s, {r['whatif_gib']:.2f} GiB | "
            f"{history} | {r.get('sums_agree', '-')} |"
        )


if __name__ == "__main__":
    main()
