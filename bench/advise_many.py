"""Many event logs at once: `numaspark advise DIR` over a History Server's directory of LOGS
logs of TASKS tasks each (issue 49's goal: 1,000 logs of 1,000 tasks in at most 60 s here), a
first scan, a second (every summary from the cache), and a third after some logs changed.

    .venv/bin/python bench/advise_many.py [--logs 1000] [--tasks 1000] [--dir /tmp/many-logs]

The logs come from recorded ones: bench/eventlog.py's generator (the real Spark 4.3.0 events of
tests/fixtures/eventlogs/plain, task ids and times varied, 100 stages) gives the body once; each
log then gets its own application id, name (four of them) and duration, and one of three
placements from the recorded plugin log (tests/fixtures/eventlogs/plugin-standalone): none (no
plugin), bound (its NumaPlacementEvent lines as recorded, level node, executor 0 on node 0), or
unbound (the same reports with no node chosen, policy default, level none). Half are plain
files, half rolling zstd directories (Spark 4's default). Generated logs are kept in --dir for
re-runs; nothing is written into the repository. Each scan is the command as a user runs it
(`numaspark advise DIR --json`, a fresh process), with its own empty state directory; the
first scan reads logs the generator just wrote, so from the page cache (as a History Server's
recent logs would be).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zstandard
from eventlog import generate_lines

from numaspark.metrics.eventlog import read_events
from numaspark.placement.plugin import LEVEL_KEY, PLACEMENT_EVENT

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "fixtures" / "eventlogs" / "plugin-standalone"
NAMES = ("etl", "wordcount", "ml-train", "report")
PLACEMENTS = ("none", "bound", "unbound")
T0 = 1_795_000_000_000


def _placement_lines(kind: str) -> list[str]:
    """The recorded plugin's events as one placement writes them (none: no lines)."""
    if kind == "none":
        return []
    events = [e for e in read_events(RECORDED) if e["Event"] == PLACEMENT_EVENT]
    if kind == "unbound":
        events = copy.deepcopy(events)
        for event in events:
            for report in event["reports"]:
                report.pop("chosen_nodes", None)
                report["policy"] = "default"
    return [json.dumps(e, separators=(",", ":")) + "\n" for e in events]


def _log_lines(body: list[str], number: int) -> list[str]:
    """Log ``number``: the body with its own id, name, level, placement and duration."""
    name, kind = NAMES[number % len(NAMES)], PLACEMENTS[number % len(PLACEMENTS)]
    app_id = f"app-{20260101000000 + number}-0000"
    start = T0 + number * 3_600_000
    # bound runs of each name a little faster, all of them spread: history, not a lab
    duration_ms = int(
        (300_000 if kind == "bound" else 340_000) * (1 + (number * 7919 % 200) / 1000)
    )
    out = []
    for line in body:
        if line.startswith('{"Event":"SparkListenerApplicationStart"'):
            event = json.loads(line) | {"App ID": app_id, "App Name": name, "Timestamp": start}
            line = json.dumps(event, separators=(",", ":")) + "\n"
        elif line.startswith('{"Event":"SparkListenerEnvironmentUpdate"'):
            event = json.loads(line)
            event["Spark Properties"][LEVEL_KEY] = "node" if kind == "bound" else "none"
            line = json.dumps(event, separators=(",", ":")) + "\n"
            out.append(line)
            out += _placement_lines(kind)
            continue
        elif line.startswith('{"Event":"SparkListenerApplicationEnd"'):
            line = (
                json.dumps(
                    {"Event": "SparkListenerApplicationEnd", "Timestamp": start + duration_ms}
                )
                + "\n"
            )
        out.append(line)
    return out


def generate(directory: Path, logs: int, tasks: int) -> None:
    """``logs`` logs in ``directory`` (those already there are kept)."""
    directory.mkdir(parents=True, exist_ok=True)
    body = list(generate_lines(tasks, "APP"))
    for number in range(logs):
        app_id = f"app-{20260101000000 + number}-0000"
        plain, rolling = directory / app_id, directory / f"eventlog_v2_{app_id}"
        if plain.exists() or rolling.exists():
            continue
        data = "".join(_log_lines(body, number)).encode()
        if number % 2 == 0:
            plain.write_bytes(data)
            continue
        partial = directory / f".partial-{app_id}"
        partial.mkdir(exist_ok=True)
        (partial / f"appstatus_{app_id}").touch()
        compressed = zstandard.ZstdCompressor(level=1).compress(data)  # Spark's zstd level
        (partial / f"events_1_{app_id}.zstd").write_bytes(compressed)
        partial.rename(rolling)


def scan(directory: Path, state: Path) -> tuple[float, float, dict]:
    """One `numaspark advise DIR --json`, timed from the start of its process: wall seconds,
    CPU seconds (user and system, of it and its worker processes), its JSON."""
    env = {**os.environ, "NUMASPARK_STATE_DIR": str(state)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "numaspark", "advise", str(directory), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None, help="where the logs are kept")
    parser.add_argument("--changed", type=int, default=10, help="logs touched before scan 3")
    args = parser.parse_args()
    directory = args.dir or Path(tempfile.gettempdir()) / f"numaspark-many-{args.logs}x{args.tasks}"
    start = time.perf_counter()
    generate(directory, args.logs, args.tasks)
    size = sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())
    print(
        f"{args.logs:,} logs of {args.tasks:,} tasks in {directory}: {size / 2**30:.2f} GiB on disk (ready in {time.perf_counter() - start:.0f} s)"
    )
    with tempfile.TemporaryDirectory() as state:
        scans = [("first scan", *scan(directory, Path(state)))]
        scans.append(("second scan", *scan(directory, Path(state))))
        for log in sorted(directory.iterdir())[: args.changed]:
            os.utime(log)  # touched: a History Server's log that changed
        scans.append((f"{args.changed} changed", *scan(directory, Path(state))))
    cpus = len(os.sched_getaffinity(0))
    print(f"{cpus} CPUs; load average {os.getloadavg()[0]:.1f} (other work on the machine)")
    for label, wall, cpu, found in scans:
        print(
            f"{label:<12} {wall:6.1f} s wall, {cpu:6.1f} s CPU: {found['read']} read, "
            f"{found['from_cache']} from the cache"
        )
    first = scans[0][3]
    for group in first["groups"]:
        c = group["comparison"]
        if c and c["ratio"] is not None:
            print(
                f"  {group['name']}: {c['bound_runs']} bound, {c['unbound_runs']} unbound; "
                f"median {c['bound_median_s']:.0f} s against {c['unbound_median_s']:.0f} s, "
                f"{c['ratio']:.2f}x, 95% interval {c['low']:.2f}x-{c['high']:.2f}x"
            )


if __name__ == "__main__":
    main()
