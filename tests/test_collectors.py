"""Collectors: OS, NUMA and perf readings, their windows, and that a failing one never breaks a run.

The OS and NUMA collectors read this machine's real /proc and /sys (one NUMA
node here); multi-node numa_maps and numastat are tested on text in the
kernel's format.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import FIXTURES
from prereq import require

from numaspark.collect.base import Collector, CollectorSet
from numaspark.collect.numa import NumaCollector, read_numastat
from numaspark.collect.os_stats import OsCollector, read_jvm
from numaspark.collect.perf_stat import PerfCollector
from numaspark.decide.readings import readings
from numaspark.metrics.perf import HARDWARE_EVENTS, parse_perf_interval_csv, summarize_counts
from numaspark.readback.proc import pages_per_node

WITH_PMU = (FIXTURES / "perf" / "with-pmu-interval.csv").read_text()
NO_PMU = (FIXTURES / "perf" / "kvm-guest-no-pmu.csv").read_text()


def test_perf_summary_with_hardware_events():
    counts = [c for _, c in parse_perf_interval_csv(WITH_PMU)]
    summary = summarize_counts(counts, seconds=2.0)
    d = summary["derived"]
    assert d["ipc"] == pytest.approx(2_000_000_000 / 2_000_000_000)  # 0.8 and 1.2 over 2e9 cycles
    assert d["cpi"] == pytest.approx(1.0)
    assert d["llc_miss_ratio"] == pytest.approx(20_000_000 / 50_000_000)
    assert d["cache_miss_ratio"] == pytest.approx(30_000_000 / 100_000_000)
    assert d["cpus_utilised"] == pytest.approx(4.0 / 2.0)
    assert d["context-switches_per_s"] == pytest.approx(1000.0)
    events = summary["events"]
    assert events["LLC-loads"]["running_share"] == 25.0 and events["LLC-loads"]["multiplexed"]
    assert events["cycles"]["running_share"] == 50.0
    assert not events["task-clock"]["multiplexed"]
    assert events["node-loads"]["status"] == "not counted"
    assert events["node-load-misses"]["status"] == "unsupported"
    assert summary["unsupported"] == ["node-load-misses"]
    assert d["node_miss_ratio"] is None  # never counted: no ratio, not zero


def test_interval_stamps_and_metric_only_lines():
    stamped = parse_perf_interval_csv(WITH_PMU)
    assert {t for t, _ in stamped} == {1.001054218, 2.002187431}
    assert len(stamped) == 24


def test_perf_summary_without_a_pmu_keeps_the_software_events():
    from numaspark.metrics.perf import parse_perf_csv

    summary = summarize_counts(parse_perf_csv(NO_PMU), seconds=1.0)
    assert "cycles" in summary["unsupported"] and summary["derived"]["ipc"] is None
    assert summary["events"]["page-faults"]["value"] == 49
    assert summary["events"]["task-clock"]["status"] == "measured"


def test_numa_maps_pages_per_node_with_huge_pages():
    text = (
        "00400000 default file=/usr/bin/java mapped=3 N0=3 kernelpagesize_kB=4\n"
        "7f0000000000 bind:1 anon=512 dirty=512 N1=512 kernelpagesize_kB=4\n"
        "7f1000000000 interleave:0-1 anon=4 dirty=4 N0=2 N1=2 kernelpagesize_kB=2048\n"
        "7ffd00000000 default stack anon=2 dirty=2 N0=2 kernelpagesize_kB=4\n"
    )
    assert pages_per_node(text) == {
        0: (3 + 2) * 4096 + 2 * 2 * 2**20,
        1: 512 * 4096 + 2 * 2 * 2**20,
    }


def test_numastat_of_several_nodes(tmp_path):
    for node, hits in ((0, 100), (1, 7)):
        (tmp_path / f"node{node}").mkdir()
        (tmp_path / f"node{node}" / "numastat").write_text(
            f"numa_hit {hits}\nnuma_miss 3\nnuma_foreign 0\ninterleave_hit 1\nlocal_node {hits}\n"
            "other_node 3\n"
        )
    stats = read_numastat(tmp_path)
    assert stats["0"]["numa_hit"] == 100 and stats["1"]["other_node"] == 3


def test_this_machines_numastat_and_own_numa_maps():
    stats = read_numastat()
    assert "0" in stats and stats["0"]["numa_hit"] > 0
    mine = pages_per_node(Path("/proc/self/numa_maps").read_text())
    assert mine.get(0, 0) > 0 and set(mine) <= {int(n) for n in stats}


def test_os_collector_follows_a_busy_process_through_a_window():
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        collector = OsCollector()
        jvms = {busy.pid: ("executor 0", frozenset({0}))}
        start = time.time()
        collector.samples.append({"t": start, **collector.sample(start, jvms)})
        # until it has had 0.6 s of CPU (at most 20 s): on a loaded machine (parallel test
        # workers) 1.5 s of wall time may give it less
        spinner = psutil.Process(busy.pid)
        deadline = time.monotonic() + 20
        while sum(spinner.cpu_times()[:2]) < 0.6 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)
        end = time.time()
        collector.samples.append({"t": end, **collector.sample(end, jvms)})
    finally:
        busy.kill()
        busy.wait()
    summary = collector.summarize(start, end)
    (jvm,) = summary["jvms"]
    assert jvm["name"] == "executor 0" and jvm["pid"] == busy.pid
    assert jvm["cpu_user_s"] + jvm["cpu_system_s"] > 0.5  # it spun for at least 0.6 s of CPU
    assert jvm["involuntary_switches"] >= 0 and jvm["peak_rss_bytes"] >= jvm["rss_bytes"] > 0
    assert 0 < summary["cpu_utilisation"] <= 1
    assert len(summary["cpu_utilisation_per_cpu"]) >= 1
    assert summary["cpu_user_share"] > 0


def test_read_jvm_of_a_process_that_is_gone():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert read_jvm(proc.pid) is None


class Broken(Collector):
    name = "broken"

    def sample(self, now, jvms):
        raise RuntimeError("no such counter")

    def summarize(self, start, end):
        return {}


def test_a_failing_collector_is_reported_and_the_others_go_on(tmp_path):
    collectors = CollectorSet([Broken(), NumaCollector()], lambda: {}, tmp_path, interval_s=0.1)
    collectors.begin()
    time.sleep(0.35)
    collectors.finish()
    summary = collectors.summarize(0, time.time())
    assert summary["broken"]["problem"] == "RuntimeError: no such counter"
    assert "problem" not in summary["numa"] and summary["numa"]["note"].startswith("numastat")
    assert len(collectors.collectors[1].samples) >= 3
    assert (tmp_path / "collectors.jsonl").exists()


def test_a_watch_that_cannot_say_the_jvms_is_kept_as_why_not_swallowed(tmp_path):
    """The watcher's view failing leaves the samples without JVMs, and says why: in the
    window's summary and in collectors.jsonl, which a recording reads back the same."""
    from numaspark.collect import Recording

    def gone():
        raise ProcessLookupError("the JVM ended")

    collectors = CollectorSet([NumaCollector()], gone, tmp_path, interval_s=0.1)
    collectors.begin()
    time.sleep(0.25)
    collectors.finish()
    summary = collectors.summarize(0, time.time())
    assert summary["jvms_problem"].startswith("the JVMs were not known to one sample or more")
    assert "ProcessLookupError: the JVM ended" in summary["jvms_problem"]
    lines = [json.loads(x) for x in (tmp_path / "collectors.jsonl").read_text().splitlines()]
    assert Recording(lines).summarize(0, time.time())["jvms_problem"] == summary["jvms_problem"]


#: where the kernel lists a CPU's hardware counters (x86, hybrid Intel, ARM); none in most VMs
PMU_DEVICES = ("cpu", "cpu_core", "cpu_atom", "armv8_pmuv3")


def _text(path: Path | None) -> str:
    return path.read_text(errors="replace") if path and path.exists() else ""


def test_perf_collector_system_wide_here(tmp_path):
    """This machine's perf: system-wide (`perf stat -a`, and the summary says so), software
    events counted, hardware events unsupported where the machine has no PMU (and each of
    them named so, not dropped). Fails if perf_stat.py's `-a` is dropped from perf's argv,
    if its summary's scope is changed from "system-wide", or if metrics/perf.py reads
    `<not supported>` as "not counted" (the unsupported list then empty)."""
    require("perf")
    collector = PerfCollector(interval_ms=200)
    collector.start(tmp_path)
    assert not collector.problem, collector.problem  # perf is here: it must count
    start = time.time()
    time.sleep(0.8)
    # a machine under load (guest boots beside the fast lane) can start perf late: wait for
    # its first interval's task-clock line, up to 20 s
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and "task-clock" not in _text(collector.output):
        time.sleep(0.2)
    collector.stop()
    assert "-a" in collector.popen.args  # every CPU, not perf's own process tree
    summary = collector.summarize(start, time.time())
    assert summary["scope"] == "system-wide"
    assert summary["events"]["task-clock"]["status"] == "measured"
    assert summary["derived"]["cpus_utilised"] is not None
    assert collector.popen.poll() is not None  # perf stopped with the run
    devices = Path("/sys/bus/event_source/devices")
    if not any((devices / name).exists() for name in PMU_DEVICES):
        assert summary["unsupported"] == sorted(HARDWARE_EVENTS)
        assert {summary["events"][e]["status"] for e in HARDWARE_EVENTS} == {"unsupported"}
        assert summary["derived"]["ipc"] is None
    else:  # a PMU: the basic counters at least are read
        assert "cycles" not in summary["unsupported"], summary["unsupported"]


def test_readings_say_what_is_unavailable():
    class Result:
        metrics = {"gcShare": 0.31}
        measurements = {
            "perf": {"events": {"cycles": {}}, "unsupported": ["cycles"], "derived": {"ipc": None}}
        }

    lines = readings(Result())
    assert lines[0].startswith("GC takes 31% of executor time: give executors more heap")
    assert lines[1].startswith("IPC: unavailable")
