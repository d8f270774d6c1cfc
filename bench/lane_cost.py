"""Benchmark: what a test lane costs here, test by test, and how many JVMs it starts.

    .venv/bin/python bench/lane_cost.py             # the fast lane's pytest (test.sh --fast)
    .venv/bin/python bench/lane_cost.py --jvm       # the tests marked jvm, under the JVM lock
    .venv/bin/python bench/lane_cost.py --top 40 -- tests/test_report.py   # some tests

It runs pytest as the lane does, with this file as a plugin (-p lane_cost), and prints
the lane's wall time, the CPU time its tests used, the slowest tests by CPU and by wall,
and the JVMs started. A test's CPU is its worker's and that of every process under the
worker, alive or reaped (psutil): a forked bad-input case, tpchgen-cli, a JVM. This
machine is shared, so wall times vary with what else runs; CPU times compare like with
like. A JVM is counted when a java process carrying this run's marker in its environment
is seen (/proc polled every 0.1 s): a JVM that lives less than that may be missed, and one
whose environment was cleared (the QEMU guests') is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARK = "NUMASPARK_LANE_COST"  # the marker variable, inherited by every process pytest starts
OUT = "NUMASPARK_LANE_COST_OUT"  # where each pytest process writes its tests' costs

# --- the pytest plugin (in each pytest worker) --------------------------------------------

_rows: list[tuple[str, float, float]] = []


def _cpu_under_me() -> float:
    import psutil

    me = psutil.Process()
    times = me.cpu_times()
    # reaped children are in children_*; the ones still alive (a fork server) are read here
    total = times.user + times.system + times.children_user + times.children_system
    for child in me.children(recursive=True):
        try:
            t = child.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
        except psutil.Error:  # ended meanwhile: its parent has it (or will)
            continue
    return total


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):  # noqa: ARG001 (pytest's hook signature)
    wall, cpu = time.monotonic(), _cpu_under_me()
    yield
    _rows.append((item.nodeid, time.monotonic() - wall, _cpu_under_me() - cpu))


def pytest_sessionfinish(session):  # noqa: ARG001
    out = os.environ.get(OUT)
    if out:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(out, f"{worker}.json").write_text(json.dumps(_rows))


# --- the runner ---------------------------------------------------------------------------


def _count_jvms(marker: bytes, seen: dict, stop: threading.Event) -> None:
    """Every java process whose environment holds ``marker``, keyed by pid and start time."""
    while not stop.is_set():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                if stat[stat.index("(") + 1 : stat.rindex(")")] != "java":
                    continue
                key = (pid, stat[stat.rindex(")") + 2 :].split()[19])  # field 22: start time
                if key in seen:
                    continue
                env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                seen[key] = _main_class(argv) if marker in env else None
            except (OSError, ValueError, IndexError):
                continue
        stop.wait(0.1)


def _main_class(argv: list[bytes]) -> str:
    words = [a.decode(errors="replace") for a in argv[1:] if a]
    for i, word in enumerate(words):
        if word in ("-cp", "-classpath", "--class-path"):
            continue
        if i and words[i - 1] in ("-cp", "-classpath", "--class-path"):
            continue
        if not word.startswith("-"):
            return word.rsplit("/", 1)[-1]
    return " ".join(words) or "?"  # no class: java -version, say


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jvm", action="store_true", help="the tests marked jvm, one at a time")
    parser.add_argument("--top", type=int, default=25, help="how many tests to list")
    parser.add_argument("--json", type=Path, help="also write every test's costs here")
    parser.add_argument("pytest_args", nargs="*", help="after --: tests or pytest options")
    args = parser.parse_args()
    python = ROOT / ".venv" / "bin" / "python"
    marker = f"{os.getpid()}-{time.time_ns()}"
    env = {**os.environ, MARK: marker, "PYTHONPATH": str(ROOT / "bench")}
    if args.jvm:
        env.setdefault("NUMASPARK_TEST_LOCK", "/tmp/numaspark-jvm.lock")
        lane = ["-m", "jvm"]
    else:  # scripts/test.sh --fast
        env.update(NUMASPARK_FAST_LANE="1", NUMASPARK_NO_JVM="1")
        lane = ["-n", "2", "-m", "not jvm"]
    seen: dict = {}
    stop = threading.Event()
    counter = threading.Thread(
        target=_count_jvms, args=(f"{MARK}={marker}".encode(), seen, stop), daemon=True
    )
    counter.start()
    with tempfile.TemporaryDirectory(prefix="lane-cost-") as out:
        env[OUT] = out
        started = time.monotonic()
        code = subprocess.run(
            [str(python), "-m", "pytest", "-q", "-p", "lane_cost", *lane, *args.pytest_args],
            cwd=ROOT,
            env=env,
            check=False,
        ).returncode
        wall = time.monotonic() - started
        stop.set()
        counter.join()
        rows = [row for path in Path(out).glob("*.json") for row in json.loads(path.read_text())]
    jvms = Counter(main for main in seen.values() if main)
    print(
        f"\nlane {'jvm' if args.jvm else 'fast'}: pytest exit {code}, {len(rows)} tests, "
        f"{wall:.0f} s wall, the tests' CPU {sum(r[2] for r in rows):.0f} s, "
        f"wall summed over the tests {sum(r[1] for r in rows):.0f} s"
    )
    print(
        f"JVMs started: {sum(jvms.values())} ({', '.join(f'{n} {m}' for m, n in jvms.most_common())})"
    )
    for title, column in (("by CPU", 2), ("by wall", 1)):
        print(f"\nthe {args.top} slowest {title}:   wall s    CPU s")
        for nodeid, seconds, cpu in sorted(rows, key=lambda r: -r[column])[: args.top]:
            print(f"  {seconds:8.2f} {cpu:8.2f}  {nodeid}")
    if args.json:
        args.json.write_text(
            json.dumps({"wall_s": wall, "exit": code, "jvms": dict(jvms), "tests": rows}, indent=1)
        )
    return code


if __name__ == "__main__":
    sys.exit(main())
