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

import pytest
from conftest import run_cli

from numaspark import records
from numaspark.collect.numa import NumaCollector
from numaspark.collect.os_stats import OsCollector
from numaspark.decide.advise import Severity, Subject, advise, advise_results
from numaspark.decide.readings import cpu_reading, process_tree_reading, readings
from numaspark.experiment.assemble import _python_missed
from numaspark.experiment.result import Measurements, RunResult
from numaspark.metrics.eventlog import parse_event_log
from numaspark.metrics.memory import process_tree_memory, python_tasks
from numaspark.metrics.registry import Metrics
from numaspark.placement import Binding, JvmPlacement, Layout, MemPolicy, plan
from numaspark.readback.proc import EffectiveJvm, parse_effective
from numaspark.readback.python_processes import DAEMON, DRIVER, WORKER, PythonProcess, python_cpu_s
from numaspark.readback.tree import (
    READ_TREE,
    ProcText,
    parse_tree_text,
    python_processes,
    read_tree_here,
)
from numaspark.report.console import run_lines
from numaspark.report.html import build_report
from numaspark.report.plots import _series
from numaspark.spark.address import DriverAddress
from numaspark.spark.affinity import plugin_effective
from numaspark.spark.app import run_settings
from numaspark.supervise.watch import Watch, Watched
from numaspark.topology import CpuSet, load_synthetic

FIXTURES = Path(__file__).parent / "fixtures"
SQUARES_RUNS = FIXTURES / "runs" / "app-squares" / "results.jsonl"


def _tree(name: str) -> dict:
    return json.loads((FIXTURES / "pyspark" / name).read_text())


def _texts(entries: list[dict]) -> list[ProcText]:
    return [ProcText(**entry) for entry in entries]


def _planned(
    cpus: str = "0-1", binding: Binding = Binding.NODE, policy: MemPolicy | None = MemPolicy.BIND
) -> JvmPlacement:
    return JvmPlacement(
        role="driver",
        index=0,
        cores=2,
        heap=1 << 30,
        overhead=0,
        binding=binding,
        cpus=CpuSet.parse(cpus),
        nodes=CpuSet.parse("0"),
        mem_policy=policy,
        mem_nodes=CpuSet.parse("0"),
    )


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
    other = ProcText(
        pid=1,
        ppid=root,
        cmdline="/bin/sh -c true",
        status="",
        numa_maps="",
        stat="1 (sh) S 0 0 0 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 0 0 0",
    )
    assert [p.pid for p in python_processes(root, [*tree, other], driver=True)] == [
        p.pid for p in python_processes(root, tree, driver=True)
    ]
    simple = ProcText(
        pid=2,
        ppid=root,
        cmdline="python3 -m pyspark.worker",
        status=tree[1].status,
        numa_maps="",
        stat=tree[1].stat,
    )
    assert python_processes(root, [simple])[0].role == WORKER  # no daemon (use.daemon=false)
    daemon = tree[1]
    helper = ProcText(
        pid=3,
        ppid=daemon.pid,
        cmdline="bash /opt/pyenv/libexec/pyenv-exec",
        status=daemon.status,
        numa_maps="",
        stat=daemon.stat,
    )
    assert 3 not in {p.pid for p in python_processes(root, [*tree, helper])}  # a shim's helper


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
        # both below it, the grandchild past its exec (a forked child shows its parent's
        # command line until then: a loaded machine caught it so, 2026-12-07)
        while time.monotonic() < deadline and not (
            len(here) == 2 and any(p.cmdline.endswith(f"-c {sleep}") for p in here)
        ):
            time.sleep(0.1)
            here = read_tree_here(top.pid)
        text = subprocess.run(
            ["sh", "-c", READ_TREE, "sh", str(top.pid)], capture_output=True, text=True, check=True
        ).stdout
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
    exiting = {
        **worker,
        "numa_maps": "",
        "stat": " ".join(fields),
        "status": "".join(
            line + "\n"
            for line in worker["status"].splitlines()
            if not line.startswith(("VmRSS", "VmHWM"))
        ),
    }
    entry = _watch([alive, [*alive[:-1], exiting]], recorded["root"], _planned()).effective()[0]
    (last,) = [p for p in entry.python if p.pid == worker["pid"]]
    (first,) = [
        p for p in python_processes(recorded["root"], _texts(alive), True) if p.pid == worker["pid"]
    ]
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
    procs = (
        PythonProcess(
            pid=5,
            role=DAEMON,
            cpus="0-1",
            mems="0",
            policy="default",
            bytes_per_node={"0": 4096},
            cpu_s=0.5,
            rss_bytes=1 << 20,
            threads=1,
        ),
        PythonProcess(pid=6, role=WORKER, cpus="0-1", cpu_s=2.0, ended=True),
    )
    entry = EffectiveJvm(
        jvm="executor 0",
        index=0,
        pid=4,
        cpus="0-1",
        mems="0",
        policy="default",
        python=procs,
        python_at_once=1,
    )
    data = records.dump(entry)
    assert data["python"][1] == {
        "pid": 6,
        "role": "worker",
        "cpus": "0-1",
        "bytes_per_node": {},
        "cpu_s": 2.0,
        "ended": True,
    }
    assert records.load(EffectiveJvm, json.loads(json.dumps(data))) == entry
    old = json.loads(SQUARES_RUNS.read_text().splitlines()[0])
    run = records.load(RunResult, old)
    assert run.effective_placement and all(e.python == () for e in run.effective_placement)
    assert records.dump(run)["effective_placement"] == old["effective_placement"]


def test_numaspark_run_says_where_each_python_process_ran():
    """The lines under ``numaspark run``: each Python process under its JVM."""
    old = json.loads(SQUARES_RUNS.read_text().splitlines()[-1])
    run = records.load(RunResult, old)
    worker = PythonProcess(
        pid=77,
        role=WORKER,
        cpus="0-1",
        policy="bind:0",
        bytes_per_node={"0": 3 << 20},
        cpu_s=1.25,
        ended=True,
    )
    jvm = dataclasses.replace(run.effective_placement[0], python=(worker,))
    lines = run_lines([dataclasses.replace(run, effective_placement=[jvm])])
    assert (
        "  its Python worker (pid 77, ended): CPUs 0-1, policy bind:0, pages node 0 3.0 MiB, "
        "1.2 s CPU"
    ) in lines


# --- measurement: settings, readings, advice ---------------------------------------------


def test_a_pyspark_application_gets_process_tree_metrics_and_keeps_its_own():
    placement = plan(load_synthetic("pack:1 numa:1 core:2 pu:1"), Layout(executors=1), Binding.NONE)
    address = DriverAddress("127.0.0.1", "loopback")
    ours = run_settings(placement, Path("/tmp/ev"), address, {}, {}, pyspark=True)
    assert ours["spark.executor.processTreeMetrics.enabled"] == "true"
    assert ours["spark.executor.metrics.pollingInterval"] == "1s"
    assert "spark.executor.processTreeMetrics.enabled" not in run_settings(
        placement, Path("/tmp/ev"), address, {}, {}
    )  # a JAR's
    users = {"spark.executor.metrics.pollingInterval": "5s"}
    kept = run_settings(placement, Path("/tmp/ev"), address, users, {}, pyspark=True)
    assert "spark.executor.metrics.pollingInterval" not in kept  # theirs stays
    # each worker's BLAS threads at spark.task.cpus, as Spark sets OMP_NUM_THREADS
    assert ours["spark.executorEnv.OPENBLAS_NUM_THREADS"] == "1"
    assert ours["spark.executorEnv.MKL_NUM_THREADS"] == "1"
    two = {"spark.task.cpus": "2", "spark.executorEnv.MKL_NUM_THREADS": "4"}
    wide = run_settings(placement, Path("/tmp/ev"), address, two, {}, pyspark=True)
    assert wide["spark.executorEnv.OPENBLAS_NUM_THREADS"] == "2"
    assert "spark.executorEnv.MKL_NUM_THREADS" not in wide  # theirs stays


ALS_GAP = {"os_cpu_s": 18.6, "spark_executor_cpu_s": 0.3, "ratio": 62.0, "python_cpu_s": 41.2}


def test_the_readings_say_python_dominates_and_never_blame_the_jvms_for_it():
    """The ALS-like case of issue 40: executorCpuTime 0.3 s, the JVMs 18.6 s, the workers
    41.2 s: Python dominates, and the JVMs are not said to burn CPU outside the tasks."""
    line = cpu_reading(ALS_GAP)
    assert line.startswith("CPU time: JVMs 18.6 s, their Python workers 41.2 s, Spark's task")
    assert "the Python workers dominate (69% of the processes' CPU time)" in line
    assert "burn" not in line
    jvm_heavy = cpu_reading({**ALS_GAP, "python_cpu_s": 2.0})
    assert "the JVMs dominate, mostly outside their task threads" in jvm_heavy
    tasks = cpu_reading(
        {**ALS_GAP, "python_cpu_s": 2.0, "spark_executor_cpu_s": 15.0, "ratio": 1.24}
    )
    assert tasks.endswith("the JVMs dominate, mostly in their task threads")
    # a JVM-only application keeps the line it always had
    jvm_only = {k: v for k, v in ALS_GAP.items() if k != "python_cpu_s"}
    assert cpu_reading(jvm_only).endswith(
        "the JVMs burn CPU outside the tasks (JIT, GC threads, Spark's own work)"
    )


def _pyspark_run(process_tree: dict | None = None, conf: dict | None = None) -> RunResult:
    old = json.loads(SQUARES_RUNS.read_text().splitlines()[-1])
    run = records.load(RunResult, old)
    found = {"executor_cpu_gap": ALS_GAP}
    if process_tree is not None:
        found["process_tree"] = process_tree
    return dataclasses.replace(
        run,
        measurements=Measurements(found),
        spec=dataclasses.replace(run.spec, spark_conf=conf or {}),
    )


def test_the_advisor_compares_the_three_cpu_figures():
    finding = next(
        f for f in advise(Subject(None, _pyspark_run()), "x").findings if f.rule == "python-cpu"
    )
    assert finding.severity is Severity.LOW and "the Python workers dominate" in finding.finding
    assert finding.evidence == {
        "jvm_cpu_s": 18.6,
        "python_cpu_s": 41.2,
        "spark_executor_cpu_s": 0.3,
    }
    jvm_only = dataclasses.replace(
        _pyspark_run(),
        measurements=Measurements(
            {"executor_cpu_gap": {k: v for k, v in ALS_GAP.items() if k != "python_cpu_s"}}
        ),
    )
    assert any(n.rule == "python-cpu" for n in advise(Subject(None, jvm_only), "x").not_assessed)


def test_python_memory_past_the_overhead_asks_for_its_own_share_with_the_command():
    """The recorded run's driver (local mode: a 6776 MiB heap, 677.6 MiB overhead) with Python
    workers of 800 MiB: past the overhead they live in; the command sets pyspark.memory."""
    tree = {
        "executors": [
            {
                "executor": "driver",
                "jvm_rss_bytes": 700 << 20,
                "python_rss_bytes": 800 << 20,
                "other_rss_bytes": 0,
            }
        ]
    }
    advice = advise(Subject(None, _pyspark_run(tree)), "x")
    finding = next(f for f in advice.findings if f.rule == "python-memory")
    assert finding.severity is Severity.MODERATE and "800.0 MiB" in finding.finding
    assert "--conf spark.executor.pyspark.memory=1200m" in finding.command
    assert finding.command.startswith("numaspark run")
    small = {"executors": [{**tree["executors"][0], "python_rss_bytes": 100 << 20}]}
    quiet = next(
        f
        for f in advise(Subject(None, _pyspark_run(small)), "x").findings
        if f.rule == "python-memory"
    )
    assert quiet.severity is Severity.NONE and "within the 677.6 MiB overhead" in quiet.finding
    capped = _pyspark_run(tree, {"spark.executor.pyspark.memory": "800m"})
    at_limit = next(
        f for f in advise(Subject(None, capped), "x").findings if f.rule == "python-memory"
    )
    assert at_limit.severity is Severity.SEVERE and "MemoryError" in at_limit.finding
    none = advise(Subject(None, _pyspark_run()), "x")
    assert any(n.rule == "python-memory" for n in none.not_assessed)


def test_a_users_application_is_named_by_its_configuration_never_none():
    run = _pyspark_run()
    assert run.spec.label is None and run.spec.configuration == "local 1x2 bind=node mem=bind"
    (advice,) = advise_results([run])
    assert (
        advice.subject == "squares: local 1x2 bind=node mem=bind" and "None" not in advice.subject
    )


def test_the_report_plots_jvm_and_python_memory_per_node_and_names_the_configuration(tmp_path):
    """The recorded run's collector samples with a Python reading added to one JVM: the
    memory plot has a JVM and a Python series per node; the runs table and the advice name
    the configuration by its shape, never None."""
    samples_read = [
        json.loads(line)
        for line in (FIXTURES / "runs" / "app-squares" / "collectors.jsonl")
        .read_text()
        .splitlines()
    ]
    numa = next(r for r in samples_read if r["collector"] == "numa")
    for sample in numa["samples"]:
        for jvm in sample["jvms"].values():
            jvm["python_bytes_per_node"] = {"0": 50 << 20}
    samples = tmp_path / "collectors.jsonl"
    samples.write_text("".join(json.dumps(r) + "\n" for r in samples_read))
    _, _, nodes = _series(samples)
    assert set(nodes) == {"0 JVM", "0 Python"}
    assert max(nodes["0 Python"][1]) == 50 << 20  # samples before the JVM was seen: 0
    run = records.load(RunResult, json.loads(SQUARES_RUNS.read_text().splitlines()[-1]))
    run = dataclasses.replace(
        run,
        artifacts=dataclasses.replace(
            run.artifacts, collector_samples=str(samples), event_log=None
        ),
    )
    (tmp_path / "results.jsonl").write_text(json.dumps(records.dump(run)) + "\n")
    html = build_report(tmp_path)
    assert "<td>local 1x2 bind=node mem=bind</td>" in html and "<td>None</td>" not in html
    assert "squares: local 1x2 bind=node mem=bind" in html
    assert "JVM and Python resident memory per NUMA node" in html


def test_the_collectors_count_a_jvms_python_workers_cpu_and_pages(tmp_path):
    """Real processes: a parent (standing in for the JVM) with a child whose command line
    names pyspark.worker (a simple worker) that burns CPU, then waits: the OS collector's
    window gives its CPU time apart from the parent's, the NUMA collector its pages."""
    burn = "import time\nx = 0\nfor i in range(3 * 10**6): x += i\ntime.sleep(30)"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; "
            f"subprocess.Popen([sys.executable, '-c', {burn!r}, "
            "'pyspark.worker']); time.sleep(30)",
        ]
    )
    os_collector, numa = OsCollector(), NumaCollector()
    jvms = {parent.pid: ("executor 0", None)}
    try:
        deadline = time.monotonic() + 20
        while not read_tree_here(parent.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        first = os_collector.sample(time.time(), jvms)
        os_collector.samples.append({"t": time.time(), **first})
        while time.monotonic() < deadline:  # until its loop is done and it sleeps
            tree = read_tree_here(parent.pid)
            found = python_processes(parent.pid, tree)
            if found and (found[0].cpu_s or 0) >= 0.1 and "(sleeping)" in tree[0].status:
                break
            time.sleep(0.1)
        last = os_collector.sample(time.time(), jvms)
        os_collector.samples.append({"t": time.time(), **last})
        pages = numa.sample(time.time(), jvms)
    finally:
        for proc in read_tree_here(parent.pid):
            subprocess.run(["kill", str(proc.pid)], check=False)
        parent.kill()
        parent.wait()
    (jvm,) = os_collector.summarize(0, time.time() + 1)["jvms"]
    assert jvm["python_cpu_s"] >= 0.1 and jvm["python_driver_cpu_s"] == 0.0
    assert jvm["python_peak_rss_bytes"] > 1 << 20
    assert last["jvms"][str(parent.pid)]["python_cpu_s"] >= jvm["python_cpu_s"]
    assert sum(pages["jvms"][str(parent.pid)]["python_bytes_per_node"].values()) > 1 << 20


def test_the_plugins_reports_give_every_python_process_an_executor_listed(tmp_path):
    """The recorded first reports of a real executor, with Python processes as the plugin
    lists them (jvm/contract.json ``python``): every one listed is kept at its last reading,
    the ones its latest report leaves out ended."""
    lines = [
        json.loads(line)
        for line in (FIXTURES / "plugin" / "first-reports.jsonl").read_text().splitlines()
    ]
    daemon = {
        "pid": 10,
        "role": "daemon",
        "cpus": "0-1",
        "mems": "0",
        "policy": "default",
        "bytes_per_node": {"0": 4096},
        "cpu_s": 0.5,
        "rss_bytes": 4096,
        "threads": 1,
    }
    first, second = (dict(lines[0]), dict(lines[1]))
    first["python"] = [daemon, {**daemon, "pid": 11, "role": "worker", "cpu_s": 1.0}]
    second["python"] = [{**daemon, "cpu_s": 0.6}, {**daemon, "pid": 12, "role": "worker"}]
    path = tmp_path / "placement.jsonl"
    path.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    (entry,) = plugin_effective(path)
    assert [(p.pid, p.role, p.ended, p.cpu_s) for p in entry.python] == [
        (10, "daemon", False, 0.6),
        (11, "worker", True, 1.0),
        (12, "worker", False, 0.5),
    ]
    assert entry.python_at_once == 1 and entry.source == "plugin"
    assert plugin_effective(FIXTURES / "plugin" / "first-reports.jsonl")[0].python == ()


PROCESS_TREE_LOG = FIXTURES / "eventlogs" / "pyspark-process-tree"


def test_process_tree_memory_is_read_per_executor_and_stage_from_a_real_log():
    """Recorded here (make_fixtures.py says how): the driver's tree has its Python beside
    its JVM, per stage; executor 0's readings are all zero and are said to be unread, never
    reported as no memory; its eight tasks ran Python."""
    log = parse_event_log(PROCESS_TREE_LOG)
    found = process_tree_memory(log)
    (driver,) = found["executors"]
    assert driver["executor"] == "driver" and found["unread"] == ["0"]
    assert driver["jvm_rss_bytes"] == 592723968 and driver["python_rss_bytes"] == 141877248
    assert [(s["stage"], s["executor"]) for s in found["stages"]] == [(0, "driver")]
    assert python_tasks(log) == 8 and python_tasks(log, {1}) == 4
    assert process_tree_memory(log, {1}) == {
        "note": "process-tree memory not logged: no stage logged a non-zero reading (stages "
        "shorter than the executors' polls)"
    }
    plain = parse_event_log(FIXTURES / "eventlogs" / "plain")  # an RDD word count, before
    assert python_tasks(plain) == 8
    assert process_tree_memory(plain)["note"].endswith("processTreeMetrics.enabled was off")
    (java,) = (FIXTURES / "runs" / "jar-squares" / "eventlog").iterdir()
    assert python_tasks(parse_event_log(java)) == 0  # a JAR's: no Python stage
    reading = process_tree_reading(found)
    assert (
        reading
        == "peak resident memory by process tree (Spark): driver JVM 565.3 MiB, Python 135.3 MiB"
    )


def test_a_python_worker_missed_between_readings_is_said():
    """spark.python.worker.reuse=false starts a worker a Python task: fewer seen than the
    log's Python tasks is one warning; as many, none."""
    log = parse_event_log(PROCESS_TREE_LOG)
    log.spark_properties["spark.python.worker.reuse"] = "false"
    seen = [{"python": [{"pid": p, "role": "worker"} for p in range(3)]}]
    (warning,) = _python_missed(seen, log)
    assert warning.startswith("Python workers: 3 seen of the 8 that ran Python tasks")
    assert _python_missed([{"python": [{"pid": p, "role": "worker"} for p in range(8)]}], log) == []
    log.spark_properties["spark.python.worker.reuse"] = "true"
    assert _python_missed(seen, log) == []


def test_where_numaspark_does_not_sample_the_plugins_python_cpu_is_read():
    """A run on a cluster numaspark did not start: no collectors, the plugin's reports give
    the workers' CPU time; the reading weighs it against Spark's task CPU."""
    run = _pyspark_run()
    worker = PythonProcess(pid=9, role=WORKER, cpu_s=12.5)
    driver = PythonProcess(pid=8, role=DRIVER, cpu_s=3.0)  # not a worker: left out
    reported = EffectiveJvm(
        jvm="executor 0",
        index=0,
        pid=7,
        cpus="0-1",
        mems="0",
        policy="default",
        source="plugin",
        python=(worker, driver),
    )
    run = dataclasses.replace(
        run,
        measurements=None,
        effective_placement=[reported],
        metrics=Metrics.of({**records.dump(run.metrics), "executorCpuTime": 500.0}),
    )
    (line,) = [r for r in readings(run) if r.startswith("CPU time")]
    assert line == (
        "CPU time: Python workers 12.5 s (as the plugin saw them, workers ended "
        "between its reports not counted), Spark's task CPU 0.5 s: the Python "
        "workers dominate: PySpark's tasks do their work there, which "
        "executorCpuTime does not count"
    )


# --- real Spark: what only Spark proves -------------------------------------------------------

ALS = Path(__file__).resolve().parents[1] / "bench" / "apps" / "als.py"


@pytest.mark.jvm
@pytest.mark.integration
def test_core_bound_pyspark_workers_run_on_the_executors_cpus_and_are_measured(
    tmp_path, no_spark_left
):
    """numpy ALS in local mode at --bind core (the plugin pins each task to a core): the
    daemon, forked from a pinned task thread, and its workers are read back on the JVM's
    CPUs (the plugin re-binds them), each worker with one thread (its BLAS capped at
    spark.task.cpus); the readings compare the three CPU figures and Spark's process-tree
    metrics put the Python RSS beside the JVM's."""
    out = tmp_path / "out"
    proc = run_cli(
        "run",
        str(ALS),
        "--bind",
        "core",
        "--interval",
        "0.5s",
        "--out",
        str(out),
        "--",
        "150",
        "400",
        "10",
        "3",
        "2",
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = (out / "results.jsonl").read_text().splitlines()
    run = records.load(RunResult, json.loads(line))
    (jvm,) = run.effective_placement
    placed = [p for p in jvm.python if p.policy not in (None, "unknown")]
    assert {p.role for p in placed} >= {"daemon", "worker", "driver"}, jvm.python
    assert jvm.cpus == "0-1" and all(p.cpus == jvm.cpus for p in placed), jvm.python
    assert all(p.threads == 1 for p in placed if p.role == WORKER), jvm.python
    assert not [d for d in jvm.differences if "'s Python" in d]
    gap = run.figures.cpu_gap
    assert gap["python_cpu_s"] > 0 and gap["spark_executor_cpu_s"] > 0
    assert any(r.startswith("CPU time: JVMs") for r in readings(run))
    (driver,) = run.figures.process_tree["executors"]
    assert driver["python_rss_bytes"] > 0 and driver["jvm_rss_bytes"] > 0
