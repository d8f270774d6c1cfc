"""`numaspark launch`: any program started once per planned JVM, bound, and where it really ran.

The real path runs here (one NUMA node: numactl binds to node 0, pages land on node 0). Two nodes
(bound per node, interleave split, remote memory recorded as remote) are proved in the two-node
guest (tests/test_numa_guest.py); the rules that classify memory are tested on node sets here.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import ROOT, run_cli

from numaspark.launch import command_for, memory_locality
from numaspark.placement import Binding, Layout, MemPolicy, memory_on, plan
from numaspark.topology import CpuSet, load_synthetic

pytestmark = pytest.mark.integration

# touches 64 MiB, holds it 1.5 s: long enough for two samples at 0.5 s
TOUCH = [sys.executable, "-c", "import time; b = bytearray(64 << 20); time.sleep(1.5)"]


def test_memory_locality_rules():
    assert memory_locality("bind:1", CpuSet([1])) == "local"
    assert memory_locality("bind:1", CpuSet([0])) == "remote"
    assert memory_locality("bind:0-1", CpuSet([0])) == "partly remote"
    assert memory_locality("prefer:0", CpuSet([0, 1])) == "local"
    assert memory_locality("interleave:0-1", CpuSet([0])) == "interleaved"
    assert memory_locality("default", CpuSet([0])) == "default"


def test_placeholders_filled_per_jvm():
    synthetic = load_synthetic("pack:2 numa:1 core:2 pu:1")
    placement = plan(
        synthetic,
        Layout(executors_per_node=1, memory_per_executor=1 << 30),
        Binding.NODE,
        MemPolicy.BIND,
    )
    second = placement.executors[1]
    argv = command_for(["java", "-Xmx{heap}", "--cpus={cpus}", "{index}:{nodes}"], second)
    assert argv == ["java", "-Xmx1024m", "--cpus=2-3", "1:1"]


def test_memory_on_moves_only_the_executors_memory():
    # Two nodes: the recorded topologies are real servers; this machine has one node
    synthetic = load_synthetic("pack:2 numa:1 core:2 pu:1")
    placement = plan(
        synthetic,
        Layout(executors=1, memory_per_executor=1 << 30),
        Binding.NODE,
        MemPolicy.BIND,
        only_nodes=CpuSet([0]),
    )
    moved = memory_on(placement, CpuSet([1]))
    (executor,) = moved.executors
    assert (str(executor.cpus), str(executor.mem_nodes)) == ("0-1", "1")
    assert moved.driver == placement.driver


def _launch_touch(out, bind: str) -> dict:
    """`numaspark launch` of TOUCH, one executor bound at ``bind``: its one process entry."""
    proc = run_cli(
        "launch",
        "--executors",
        "1",
        "--bind",
        bind,
        "--memory-per-executor",
        "450m",
        "--out",
        str(out),
        "--json",
        "--",
        *TOUCH,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record == json.loads((out / "launch.json").read_text())
    (entry,) = record["processes"]
    assert entry["ok"] and entry["status"] == "exited 0"
    # the 64 MiB it touched were seen, all on node 0 (the only node here)
    assert entry["pages"]["resident_bytes"] > 64 << 20
    assert entry["pages"]["bytes_per_node"].keys() == {"0"}
    assert entry["pages"]["share_on_cpu_nodes"] == 1.0
    return entry


def test_launch_bound_records_effective_placement_and_pages(tmp_path):
    """A node-bound process is bound (numactl's argv, the policy read back from /proc) and
    its pages are counted against the nodes its memory is bound to. On this one-node machine
    every page lands on node 0 whatever the binding, so a share of 1.0 on the bound nodes
    cannot tell bound memory from unbound by itself: the same program launched unbound must
    have no share on bound nodes (None: nothing bound), with the same pages on node 0. Fails
    if launch.py's `_watch_run` counts a process's pages against its CPUs' nodes whatever its
    memory policy (`frozenset(j.nodes)` for `frozenset(j.mem_nodes) if j.mem_policy is not
    None else None`: the unbound process then shows 1.0 "on its bound nodes", while the
    bound one's 1.0 alone still held), or if the bound one's memory policy is lost
    (`--membind=0` not given, or the policy read back not bind:0)."""
    bound = _launch_touch(tmp_path / "bound", "node")
    assert bound["argv"][:3] == ["numactl", "--cpunodebind=0", "--membind=0"]
    assert bound["effective"]["policy"] == "bind:0" and bound["problems"] == []
    assert bound["memory"] == "local"
    assert bound["pages"]["share_on_bound_nodes"] == 1.0
    unbound = _launch_touch(tmp_path / "unbound", "none")
    assert unbound["argv"][:3] == TOUCH[:3]  # nothing in front of the program
    assert unbound["effective"]["policy"] == "default" and unbound["memory"] == "default"
    assert unbound["pages"]["share_on_bound_nodes"] is None


def test_launch_failure_and_bad_input(tmp_path):
    failing = [sys.executable, "-c", "import sys; print('boom: no input'); sys.exit(3)"]
    proc = run_cli(
        "launch",
        "--executors",
        "1",
        "--memory-per-executor",
        "450m",
        "--out",
        str(tmp_path),
        "--",
        *failing,
    )
    assert proc.returncode == 1
    assert "exited 3" in proc.stderr and "boom: no input" in proc.stderr
    missing = run_cli(
        "launch",
        "--executors",
        "1",
        "--memory-per-executor",
        "450m",
        "--out",
        str(tmp_path),
        "--",
        "no-such-program-here",
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "cannot start 'no-such-program-here'" in missing.stderr
    nodes = run_cli("launch", "--mem-nodes", "7", "--out", str(tmp_path), "--", *TOUCH)
    assert nodes.returncode == 2 and "--mem-nodes 7" in nodes.stderr
    assert len(nodes.stderr.strip().splitlines()) == 1


def test_launch_duration_and_sigterm_leave_nothing_behind(tmp_path):
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    proc = run_cli(
        "launch",
        "--executors",
        "1",
        "--memory-per-executor",
        "450m",
        "--duration",
        "1s",
        "--out",
        str(tmp_path / "d"),
        "--json",
        "--",
        *sleeper,
    )
    assert proc.returncode == 0, proc.stderr
    (entry,) = json.loads(proc.stdout)["processes"]
    assert entry["status"] == "stopped after --duration"
    assert not psutil.pid_exists(entry["pid"])

    launcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "numaspark",
            "launch",
            "--executors",
            "1",
            "--memory-per-executor",
            "450m",
            "--out",
            str(tmp_path / "t"),
            "--",
            *sleeper,
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    line = launcher.stderr.readline()  # "HH:MM:SS started executor 0 (pid N): ..."
    pid = int(line.split("(pid ")[1].split(")")[0])
    time.sleep(1)
    launcher.send_signal(signal.SIGTERM)
    assert launcher.wait(timeout=30) == 130
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_jvm_crash_is_named_not_shown_as_a_hash(tmp_path):
    from numaspark.spark.logs import error_line

    log = tmp_path / "master.log"
    log.write_text(
        "#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
        "#  SIGILL (0x4) at pc=0x00007f, pid=41, tid=42\n#\n# JRE version: 17\n#\n"
    )
    assert error_line(log) == "the JVM crashed: SIGILL (0x4) at pc=0x00007f, pid=41, tid=42"
    log.write_text("starting\nlast words\n#\n")
    assert error_line(log) == "last words"
