"""PySpark's Python processes read back and recorded under their JVM: the tree parsed from
recorded /proc text (a real local-mode run here, kept in tests/fixtures/pyspark/), the SSH
script against psutil on a real process tree, the watch over workers that come and go, and
the record's JSON (old records load unchanged)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

from numaspark.experiment.result import RunResult
from numaspark.placement import Binding, JvmPlacement, MemPolicy
from numaspark.readback.proc import EffectiveJvm, parse_effective
from numaspark.readback.python import DAEMON, DRIVER, WORKER, PythonProcess, python_cpu_s
from numaspark.readback.tree import (
    READ_TREE,
    ProcText,
    parse_tree_text,
    python_processes,
    read_tree_here,
)
from numaspark.report.console import run_lines
from numaspark.supervise.watch import Watch, Watched
from numaspark.topology import CpuSet

FIXTURES = Path(__file__).parent / "fixtures"
SQUARES_RUNS = FIXTURES / "runs" / "app-squares" / "results.jsonl"


def _tree(name: str) -> dict:
    return json.loads((FIXTURES / "pyspark" / name).read_text())


def _texts(entries: list[dict]) -> list[ProcText]:
    return [ProcText(**entry) for entry in entries]


def _planned(cpus: str = "0-1", binding: Binding = Binding.NODE,
             policy: MemPolicy | None = MemPolicy.BIND) -> JvmPlacement:  # fmt: skip
    return JvmPlacement(role="driver", index=0, cores=2, heap=1 << 30, overhead=0,
                        binding=binding, cpus=CpuSet.parse(cpus), nodes=CpuSet.parse("0"),
                        mem_policy=policy, mem_nodes=CpuSet.parse("0"))  # fmt: skip


def test_a_local_mode_driver_tree_names_its_script_its_daemon_and_workers():
    """Recorded from a real run under numactl --physcpubind=0-1 --membind=0: the workers are
    forked (the daemon's command line), so their role comes from their parent."""
    recorded = _tree("tree-local.json")
    found = python_processes(recorded["root"], _texts(recorded["tree"]), driver=True)
    assert [p.role for p in found] == [DRIVER, DAEMON, WORKER, WORKER]
    for proc in found:
        assert proc.cpus == "0-1" and proc.mems == "0" and proc.policy == "bind:0"
        assert set(proc.bytes_per_node) == {"0"} and proc.bytes_per_node["0"] > 0
        assert proc.rss_bytes and proc.rss_bytes > 10 * 1024 * 1024 and proc.threads >= 1
    driver = found[0]
    assert driver.cpu_s == 0.92  # utime 83 + stime 9 ticks at 100 Hz
    assert python_cpu_s(found) == round(sum(p.cpu_s for p in found[1:]), 2)
    assert python_cpu_s(found, (DRIVER,)) == 0.92


def test_an_executor_tree_has_no_driver_and_other_children_are_left_out():
    """On an executor the JVM's children are its daemon and workers only; a non-Python child,
    or a Python child that is not Spark's, is no Python worker of it."""
    recorded = _tree("tree-local.json")
    tree = _texts(recorded["tree"])
    found = python_processes(recorded["root"], tree, driver=False)
    assert [p.role for p in found] == [DAEMON, WORKER, WORKER]
    root = recorded["root"]
    other = ProcText(pid=1, ppid=root, cmdline="/bin/sh -c true", status="", numa_maps="",
                     stat="1 (sh) S 0 0 0 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 0 0 0")  # fmt: skip
    assert [p.pid for p in python_processes(root, [*tree, other], driver=True)] == [
        p.pid for p in python_processes(root, tree, driver=True)
    ]
    simple = ProcText(pid=2, ppid=root, cmdline="python3 -m pyspark.worker",
                      status=tree[1].status, numa_maps="", stat=tree[1].stat)  # fmt: skip
    assert python_processes(root, [simple])[0].role == WORKER  # no daemon (use.daemon=false)


def test_the_ssh_script_reads_the_tree_psutil_reads(tmp_path):
    """READ_TREE (what a host over SSH runs) on a real tree here: a parent with a child and
    a grandchild gives the pids, parents and command lines psutil's walk gives."""
    sleep = "import time; time.sleep(30)"
    child = (
        f"import subprocess,sys,time; subprocess.Popen([sys.executable,'-c',{sleep!r}]); {sleep}"
    )
    parent = f"import subprocess,sys; subprocess.run([sys.executable,'-c',{child!r}])"
    top = subprocess.Popen([sys.executable, "-c", parent])
    try:
        deadline = time.monotonic() + 10
        here = read_tree_here(top.pid)
        while len(here) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
            here = read_tree_here(top.pid)
        text = subprocess.run(["sh", "-c", READ_TREE, "sh", str(top.pid)], capture_output=True,
                              text=True, check=True).stdout  # fmt: skip
        over_ssh, ticks = parse_tree_text(text)
    finally:
        for proc in read_tree_here(top.pid):
            subprocess.run(["kill", str(proc.pid)], check=False)
        top.kill()
        top.wait()
    assert len(here) == 2 and ticks == 100
    assert sorted((p.pid, p.ppid, p.cmdline) for p in over_ssh) == sorted(
        (p.pid, p.ppid, p.cmdline) for p in here
    )
    for proc in over_ssh:
        assert "Cpus_allowed_list" in proc.status and proc.stat.startswith(str(proc.pid))


class _Replay:
    """The recorded samples, one a call, the last repeated."""

    def __init__(self, samples: list[list[dict]]) -> None:
        self.samples = samples
        self.calls = 0

    def __call__(self, pid: int) -> tuple[list[ProcText], int]:
        sample = self.samples[min(self.calls, len(self.samples) - 1)]
        self.calls += 1
        return _texts(sample), 100


def _watch(samples: list[list[dict]], root: int, planned: JvmPlacement) -> Watch:
    replay = _Replay(samples)
    placed = _texts(samples[0])[0]

    def read(pid: int):
        return parse_effective(pid, placed.status, placed.numa_maps), {}

    watch = Watch(lambda: [Watched(root, planned, read, tree=replay, driver=True)])
    for _ in samples:
        watch.sample()
    return watch


def test_workers_that_come_and_go_are_all_kept_with_the_most_seen_at_once():
    """spark.python.worker.reuse=false, recorded: each sample's workers differ; the record
    keeps every one seen, at its last reading, marks the gone ones ended, and says how many
    were alive at once at most."""
    recorded = _tree("tree-noreuse.json")
    samples, root = recorded["samples"], recorded["root"]
    seen_workers = {t["pid"] for s in samples for t in s if t["ppid"] != root}
    entry = _watch(samples, root, _planned(binding=Binding.NONE, policy=None)).effective()[0]
    workers = [p for p in entry.python if p.role == WORKER]
    assert {p.pid for p in workers} == seen_workers and len(workers) >= 4
    last = {t["pid"] for t in samples[-1]}
    assert all(p.ended == (p.pid not in last) for p in entry.python)
    assert any(p.ended for p in workers) and entry.python_at_once == 2
    for proc in workers:  # its last reading: the most CPU time it was seen with
        readings = [python_processes(root, _texts(s), driver=True) for s in samples]
        most = max(p.cpu_s for r in readings for p in r if p.pid == proc.pid)
        assert proc.cpu_s == most
    assert [p.role for p in entry.python].count(DRIVER) == 1
    assert entry.differences == ()  # planned unbound: nothing to judge


def test_an_exiting_worker_keeps_its_placement_and_its_last_cpu_time():
    """Read as it exits (a zombie: no mappings, no VmRSS), a worker keeps what it was seen
    with alive, and the CPU time it ended with."""
    recorded = _tree("tree-local.json")
    alive = recorded["tree"]
    worker = alive[-1]
    fields = worker["stat"].split()
    fields[13] = str(int(fields[13]) + 250)  # utime: 2.5 s more at 100 Hz
    exiting = {**worker, "numa_maps": "", "stat": " ".join(fields),
               "status": "".join(line + "\n" for line in worker["status"].splitlines()
                                 if not line.startswith(("VmRSS", "VmHWM")))}  # fmt: skip
    entry = _watch([alive, [*alive[:-1], exiting]], recorded["root"], _planned()).effective()[0]
    (last,) = [p for p in entry.python if p.pid == worker["pid"]]
    (first,) = [p for p in python_processes(recorded["root"], _texts(alive), True)
                if p.pid == worker["pid"]]  # fmt: skip
    assert last.policy == "bind:0" and last.rss_bytes == first.rss_bytes
    assert last.cpu_s == round(first.cpu_s + 2.5, 2)


def test_a_python_worker_off_its_jvms_cpus_is_a_difference():
    """Planned on CPU 1 alone, the recorded workers ran on 0-1: each Python process says so."""
    recorded = _tree("tree-local.json")
    entry = _watch([recorded["tree"]], recorded["root"], _planned("1", Binding.CORE)).effective()[0]
    strayed = [d for d in entry.differences if "'s Python" in d]
    assert len(strayed) == len(entry.python) == 4
    assert "driver's Python worker" in strayed[-1] and "planned CPUs 1, runs on 0-1" in strayed[-1]


def test_the_record_keeps_them_under_their_jvm_and_old_records_load():
    procs = (PythonProcess(pid=5, role=DAEMON, cpus="0-1", mems="0", policy="default",
                           bytes_per_node={"0": 4096}, cpu_s=0.5, rss_bytes=1 << 20, threads=1),
             PythonProcess(pid=6, role=WORKER, cpus="0-1", cpu_s=2.0, ended=True))  # fmt: skip
    entry = EffectiveJvm(jvm="executor 0", index=0, pid=4, cpus="0-1", mems="0",
                         policy="default", python=procs, python_at_once=1)  # fmt: skip
    data = entry.to_dict()
    assert data["python"][1] == {"pid": 6, "role": "worker", "cpus": "0-1",
                                 "bytes_per_node": {}, "cpu_s": 2.0, "ended": True}  # fmt: skip
    assert EffectiveJvm.from_dict(json.loads(json.dumps(data))) == entry
    old = json.loads(SQUARES_RUNS.read_text().splitlines()[0])
    run = RunResult.from_dict(old)
    assert run.effective_placement and all(e.python == () for e in run.effective_placement)
    assert run.to_dict()["effective_placement"] == old["effective_placement"]


def test_numaspark_run_says_where_each_python_process_ran():
    """The lines under ``numaspark run``: each Python process under its JVM."""
    old = json.loads(SQUARES_RUNS.read_text().splitlines()[-1])
    run = RunResult.from_dict(old)
    worker = PythonProcess(pid=77, role=WORKER, cpus="0-1", policy="bind:0",
                           bytes_per_node={"0": 3 << 20}, cpu_s=1.25, ended=True)  # fmt: skip
    jvm = dataclasses.replace(run.effective_placement[0], python=(worker,))
    lines = run_lines([dataclasses.replace(run, effective_placement=[jvm])])
    assert ("  its Python worker (pid 77, ended): CPUs 0-1, policy bind:0, pages node 0 3.0 MiB, "
            "1.2 s CPU") in lines  # fmt: skip
