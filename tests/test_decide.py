"""Classification, advice and the tuner's logic (no Spark here: runs are built as stored, and
the multi-node placements come from the planner on shared/topologies, as this machine has
one NUMA node). The real runs are in test_report.py."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import FIXTURES, invoke_cli, run_cli, run_request, topology_file
from tune_models import evaluations_to, random_search

from numaspark import records
from numaspark.decide.advise import (
    Severity,
    Subject,
    advise,
    advise_event_log,
    advise_results,
    advise_source,
)
from numaspark.decide.classify import classify
from numaspark.decide.prior import Machine
from numaspark.decide.tune import (
    Space,
    read_table,
    replay_objective,
    tune,
)
from numaspark.experiment.result import RunResult
from numaspark.metrics.eventlog import parse_event_log
from numaspark.placement import Binding, Layout, Mode, placement_to_dict, plan
from numaspark.topology import load

PLAIN_LOG = FIXTURES / "eventlogs" / "plain"


def _run(
    config: str,
    wall: float,
    *,
    cpu_s: float | None = None,
    seconds: float = 10.0,
    cores: int = 2,
    cpi: float | None = None,
    switches: float = 1000.0,
    gc_share: float = 0.01,
    placement: dict | None = None,
    environment: dict | None = None,
    binding: str = "none",
    measurements: dict | None = None,
) -> RunResult:
    found = measurements or {}
    if cpu_s is not None:
        found["os"] = {
            "seconds": seconds,
            "context_switches_per_s": switches,
            "jvms": [{"name": "driver", "cpu_user_s": cpu_s, "cpu_system_s": 0.0}],
        }
    if cpi is not None:
        found["perf"] = {"derived": {"cpi": cpi}, "events": {}}
    placement = placement or {
        "jvms": [
            {
                "role": "driver",
                "index": 0,
                "runs_tasks": True,
                "cores": cores,
                "heap_bytes": 2 * 2**30,
                "nodes": "0",
                "cpus": "0-1",
            }
        ],
        "layout": {"mode": "local"},
    }
    return RunResult(
        spec={
            "workload": "wordcount",
            "size": "tiny",
            "mode": "local",
            "config": config,
            "label": f"config {config}",
            "warmup": False,
            "binding": binding,
            "cores_per_executor": cores,
            "placement": placement,
            "spark_conf": {},
        },
        environment=environment or {"numa_balancing": "0"},
        status="ok",
        wall_time_s=wall,
        metrics={"gcShare": gc_share, "jvmGCTime": gc_share * 1000, "executorRunTime": 1000.0},
        measurements=found,
    )


# -- classification ---------------------------------------------------------------------


def test_within_ten_percent_of_the_best_and_low_cpu():
    runs = [
        _run("a", 10.0, cpu_s=18.0),
        _run("a", 10.4, cpu_s=18.0),
        _run("b", 10.8, cpu_s=18.0),
        _run("c", 20.0, cpu_s=6.0),
    ]
    found = classify(runs)
    labels = {c.config: [x.name for x in c.labels] for c in found.configs}
    assert labels == {"a": ["best"], "b": ["best"], "c": ["low-cpu"]}
    slow = next(c for c in found.configs if c.config == "c")
    # 6 s of CPU over 10 s on 2 cores = 30% of what it was given; the best's 90%
    assert slow.labels[0].evidence["cpu_usage"] == {"value": 0.3, "best": 0.9}


def test_counter_labels_only_where_the_counters_exist():
    without = classify([_run("a", 10.0, cpu_s=18.0), _run("b", 15.0, cpu_s=18.0)])
    slow = without.configs[1]
    assert [x.name for x in slow.labels] == ["investigate"]
    assert "high CPI and context switches" in slow.labels[0].evidence["not_checked"]
    assert set(without.not_assessed) == {"high-cpi-cs", "high-llc", "low-bandwidth"}
    with_counters = classify(
        [
            _run("a", 10.0, cpu_s=18.0, cpi=1.0, switches=1000),
            _run("b", 15.0, cpu_s=18.0, cpi=1.5, switches=3000),
        ]
    )
    slow = with_counters.configs[1]
    assert [x.name for x in slow.labels] == ["high-cpi-cs"]
    assert slow.labels[0].evidence["cpi"] == {"value": 1.5, "best": 1.0}
    assert "high-cpi-cs" not in with_counters.not_assessed


def test_warmups_and_failures_are_not_classified():
    warm = _run("a", 1.0, cpu_s=1.0)
    warm = replace(warm, spec=replace(warm.spec, warmup=True))
    failed = replace(_run("b", 0.5, cpu_s=1.0), status="failed")
    found = classify([warm, failed, _run("c", 5.0, cpu_s=9.0)])
    assert [c.config for c in found.configs] == ["c"]


# -- advice -------------------------------------------------------------------------------


def _finding(advice, rule):
    return next(f for f in advice.findings if f.rule == rule)


def test_gc_share_grades_and_recommends_a_larger_heap_with_the_command():
    advice = advise(Subject(None, _run("a", 10.0, gc_share=0.25)), "a")
    gc = _finding(advice, "gc")
    assert gc.severity is Severity.SEVERE
    assert "more heap" in gc.recommendation
    assert "--memory-per-executor 4g" in gc.command and gc.command.startswith("numaspark run")
    quiet = advise(Subject(None, _run("a", 10.0, gc_share=0.02)), "a")
    assert _finding(quiet, "gc").severity is Severity.NONE


def _machine(memory: str):
    """A one-node, two-core machine with this much memory (hwloc's synthetic description)."""
    return load(synthetic=f"numa:1(memory={memory}) core:2 pu:1")


def test_gc_advice_doubles_the_heap_only_where_it_fits_the_runs_machine():
    """Twice a 2 GiB heap (and Spark's overhead) fits a 24 GiB machine, not a 4 GiB one, as the
    planner says on the run's machine: there the advice is more, smaller executors, with the
    planner's auto heap (the default: no --memory-per-executor)."""
    run = _run("a", 10.0, gc_share=0.25)
    roomy = _finding(advise(Subject(None, run, topology=_machine("24GiB")), "a"), "gc")
    assert "--memory-per-executor 4g" in roomy.command and not roomy.check
    tight = _finding(advise(Subject(None, run, topology=_machine("4GiB")), "a"), "gc")
    assert tight.recommendation == (
        "use more, smaller executors: twice the heap (4.0 GiB) does not fit the run's machine: "
        "1 executor(s) need 4.4 GiB (4g heap + overhead each), but the machine has 4.0 GiB: "
        "lower --memory-per-executor"
    )
    assert "--memory-per-executor" not in tight.command and not tight.check
    # local mode is one JVM whatever the executor options say: smaller executors are standalone
    argv = tight.command.split()
    assert (
        argv[argv.index("--mode") + 1] == "standalone"
        and argv[argv.index("--executors") + 1] == "2"
    )


def test_spill_advice_doubles_the_heap_only_where_it_fits():
    run = _run("a", 10.0)
    run = replace(run, metrics={**run.metrics, "diskBytesSpilled": 1e9, "memoryBytesSpilled": 2e9})
    roomy = _finding(advise(Subject(None, run, topology=_machine("24GiB")), "a"), "spill")
    assert roomy.severity is Severity.MODERATE and "--memory-per-executor 4g" in roomy.command
    tight = _finding(advise(Subject(None, run, topology=_machine("4GiB")), "a"), "spill")
    assert "--memory-per-executor" not in tight.command
    assert "spark.sql.shuffle.partitions=8" in tight.command
    assert "not fit the machine" in tight.recommendation


def test_the_machine_knows_its_memory_and_cgroup_limit():
    """A stored topology (a real 2-node server's, through its topology.json) read back."""
    from dataclasses import replace as changed

    from numaspark.topology.model import CgroupLimits, Topology

    server = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))
    stored = records.load(Topology, json.loads(json.dumps(records.dump(server))))
    assert records.dump(stored) == records.dump(server) and stored.fingerprint == server.fingerprint
    memory = server.total_memory
    assert memory and Machine.of(stored).memory == memory
    limited = changed(stored, cgroup=CgroupLimits(2, "/x", None, memory // 4))
    assert Machine.of(records.load(Topology, records.dump(limited))).memory == memory // 4
    unknown = changed(stored, nodes=tuple(changed(n, memory=None) for n in stored.nodes))
    assert Machine.of(unknown).memory is None
    here = load()  # this machine, as hwloc sees it
    limit = here.cgroup.memory_limit if here.cgroup else None
    assert Machine.of(here).memory == min(m for m in (here.total_memory, limit) if m)


def test_numa_rules_on_a_two_node_server():
    """Placements planned on a real 2-node server's XML (this machine has one node)."""
    topo = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))
    spanning = placement_to_dict(
        plan(topo, Layout(executors=1, cores_per_executor=12), Binding.CORE)
    )
    run = _run(
        "a",
        10.0,
        placement=spanning,
        binding="core",
        environment={"numa_balancing": "1"},
        measurements={
            "numa": {
                "jvms": [
                    {
                        "name": "executor 0",
                        "bound_nodes": [0],
                        "share_on_bound_nodes": 0.8,
                        "bytes_per_node": {"0": 80, "1": 20},
                    }
                ]
            }
        },
    )
    run = replace(run, spec=replace(run.spec, mode="standalone"))
    advice = advise(Subject(None, run), "a")
    straddle = _finding(advice, "numa-straddle")
    assert straddle.severity is Severity.MODERATE
    assert "--executors-per-node 1" in straddle.command and "--bind node" in straddle.command
    assert _finding(advice, "remote-pages").severity is Severity.MODERATE
    assert _finding(advice, "numa-balancing").severity is Severity.LOW
    per_node = placement_to_dict(plan(topo, Layout(executors_per_node=1), Binding.NODE))
    fine = _run("b", 10.0, placement=per_node, binding="node")
    assert _finding(advise(Subject(None, fine), "b"), "numa-straddle").severity is Severity.NONE


def _as_plan(command: str) -> list[str]:
    """`numaspark run W --size S ... --conf k=v` as the `numaspark plan` of the same layout."""
    argv = shlex.split(command)
    assert argv[:2] == ["numaspark", "run"], command
    out, rest = ["plan"], argv[3:]
    while rest:
        option, value, rest = rest[0], rest[1], rest[2:]
        if option not in ("--size", "--conf"):
            out += [option, value]
    return out


@pytest.mark.slow
def test_every_layout_advice_is_a_placement_the_planner_accepts():
    """Advice that changes the layout or the heap is checked by the planner on the run's own
    machine (a real 2-node server's XML; this machine has one node): `numaspark plan` with the
    command's options, run in this process, exits 0. Doubling a heap that does not fit, or
    --executors-per-node in local mode, would fail here."""
    xml = topology_file("24em64t-2n6c2t-pci.xml")
    topo = load(xml=xml)
    machine = Machine.of(topo)
    assert machine.memory, "the XML has node memory"
    node = machine.memory // machine.nodes

    def placed(layout: Layout, binding: Binding, heap: int, mode: str) -> RunResult:
        placement = placement_to_dict(plan(topo, layout, binding))
        for jvm in placement["jvms"]:
            jvm["heap_bytes"] = heap
        run = _run(
            "a",
            10.0,
            gc_share=0.3,
            placement=placement,
            binding=binding.value,
            measurements={
                "memory_bandwidth": {"estimate_bps": 9e10, "share": 0.95, "region": "exponential"}
            },
        )
        count = len([j for j in placement["jvms"] if j.get("runs_tasks")])
        run = replace(
            run, metrics={**run.metrics, "diskBytesSpilled": 1e9, "memoryBytesSpilled": 2e9}
        )
        return replace(run, spec=replace(run.spec, mode=mode, executors=count))

    local, spread = Layout(mode=Mode.LOCAL), Layout(executors_per_node=1, mode=Mode.STANDALONE)
    runs = [
        placed(local, Binding.NONE, node // 3, "local"),  # twice the heap fits
        placed(local, Binding.NONE, 9 * node // 10, "local"),  # twice it does not
        placed(spread, Binding.NODE, node // 3, "standalone"),  # fits its node
        placed(spread, Binding.NODE, 6 * node // 10, "standalone"),  # twice it would not
    ]
    checked = set()
    for run in runs:
        for finding in advise(Subject(None, run, topology=topo), "a").findings:
            if (
                finding.rule
                in (
                    "gc",
                    "heap-size",
                    "spill",
                    "memory-bandwidth",
                    "executor-count",
                    "numa-straddle",
                )
                and finding.command
            ):
                # in this process: what is checked is the planner's answer, not the process
                proc = invoke_cli(*_as_plan(finding.command), "--xml", str(xml))
                assert proc.returncode == 0, (finding.rule, finding.command, proc.stderr)
                checked.add((finding.rule, "--memory-per-executor" in finding.command))
    # gc: twice the heap (a heap given) and smaller executors (the auto heap); spill: twice it
    assert {("gc", True), ("gc", False), ("spill", True), ("memory-bandwidth", False)} <= checked


def _gc_run_on(tmp_path: Path, xml: str) -> Path:
    """The recorded wordcount run (local mode, core binding, 2 task slots), given a 12 GiB heap
    and 30% GC, in a results directory as if it had been recorded on ``xml``'s server."""
    out = tmp_path / xml
    out.mkdir()
    lines = []
    for line in (FIXTURES / "runs" / "wordcount-core" / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["metrics"].update(gcShare=0.3, jvmGCTime=300.0, executorRunTime=1000.0)
        for jvm in record["spec"]["placement"]["jvms"]:
            jvm["heap_bytes"] = 12 * 2**30
        lines.append(json.dumps(record))
    (out / "results.jsonl").write_text("\n".join(lines) + "\n")
    (out / "topology.json").write_text(json.dumps(records.dump(load(xml=topology_file(xml)))))
    return out


def test_advice_is_planned_on_the_machine_the_run_was_recorded_on(tmp_path, monkeypatch):
    """Each changed request is planned, by the function the run loop plans with, on the
    topology stored with the run, never on this machine. The multi-node logic is tested on
    saved topologies (shared/topologies) because this machine has one NUMA node: twice the
    12 GiB heap of a core-bound JVM (memory bound to its node) fits a node of the 4-node,
    191 GB server, not a node of the 2-node, 36 GB one, where the advice is smaller
    executors and says why in the planner's words."""
    import numaspark.decide.advise.subject as advice_module

    planned = []

    def plan_request(topology, request):
        planned.append(topology.fingerprint)
        return real(topology, request)

    real = advice_module.plan_request
    monkeypatch.setattr(advice_module, "plan_request", plan_request)
    big = load(xml=topology_file("96em64t-4n4d3ca2co-pci.xml"))
    (advice,) = advise_source(_gc_run_on(tmp_path, "96em64t-4n4d3ca2co-pci.xml"))
    gc = _finding(advice, "gc")
    assert gc.command == (
        "numaspark run wordcount --mode local --cores-per-executor 2 "
        "--memory-per-executor 24g --bind core"
    )
    assert not gc.check and planned and set(planned) == {big.fingerprint}
    planned.clear()
    small = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))
    (advice,) = advise_source(_gc_run_on(tmp_path, "24em64t-2n6c2t-pci.xml"))
    gc = _finding(advice, "gc")
    assert (
        "twice the heap (24.0 GiB) does not fit the run's machine: 1 executor(s) on node 0 "
        "need" in gc.recommendation
    )
    argv = gc.command.split()
    assert argv[argv.index("--mode") + 1] == "standalone" and "--memory-per-executor" not in argv
    assert planned and set(planned) == {small.fingerprint} and load().fingerprint not in planned


def test_every_printed_command_is_its_changed_request_to_the_real_command_line(
    tmp_path, monkeypatch
):
    """Parsed by the real ``numaspark run`` (stopped before it runs), each command advice
    prints is the finding's changed request: a built-in workload's run on a saved 4-node
    topology (this machine has one node), and a user's application with its arguments."""
    from numaspark.workloads import application as apps

    (advice,) = advise_source(_gc_run_on(tmp_path, "96em64t-4n4d3ca2co-pci.xml"))
    findings = [f for f in advice.findings if f.command]
    app_run = records.load(
        RunResult, json.loads((FIXTURES / "runs" / "app-squares" / "results.jsonl").read_text())
    )
    squares = Path(__file__).resolve().parent / "apps" / "squares.py"  # here, not where it ran
    application = apps.from_file(str(squares), list(app_run.spec.application.args))
    app_run = replace(
        app_run,
        spec=replace(app_run.spec, application=application),
        metrics={**app_run.metrics, "gcShare": 0.3, "jvmGCTime": 300.0, "executorRunTime": 1000.0},
    )
    findings += [f for f in advise(Subject(None, app_run), "app").findings if f.command]
    assert {f.rule for f in findings} >= {"gc", "executor-count"} and len(findings) >= 4
    for finding in findings:
        assert run_request(finding.command, monkeypatch) == finding.request, finding.command


def _smt_runs() -> tuple[RunResult, RunResult]:
    """SMT helped: 2 executors of 12 hardware threads each (pu binding, the 24 threads of a real
    2-node server's 12 cores) ran in 10 s, one thread per core in 12 s."""
    topo = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))
    placement = placement_to_dict(
        plan(topo, Layout(executors=2, cores_per_executor=12), Binding.PU)
    )
    runs = []
    for label, wall in (
        ("ST 12 cores standalone 2x6 bind=pu", 12.0),
        ("SMT 12 cores standalone 2x12 bind=pu", 10.0),
    ):
        run = _run("smt", wall, placement=placement, binding="pu")
        runs.append(
            replace(run, spec=replace(run.spec, mode="standalone", executors=2, label=label))
        )
    return runs[0], runs[1]


def test_a_change_the_planner_refuses_has_no_command_and_one_line_why():
    """SMT helped, so the SMT rule advises core binding (both threads of each core); but core
    binding gives each task slot a whole core, and 2 executors of 12 do not fit the 12 cores
    of the run's machine (a saved 2-node topology; this machine has one node). The finding
    keeps its numbers and recommendation, prints no command, and says in one line why the
    planner refused it. Where the run's machine is not recorded, the command is printed and
    said to be unchecked."""
    from numaspark.report.console import advice_lines

    st, smt = _smt_runs()
    topo = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))
    advice = advise(Subject(None, smt, [st, smt], topo), "smt")
    finding = _finding(advice, "smt")
    assert finding.severity is Severity.LOW and finding.evidence["smt_gain"] == 1.2
    assert finding.recommendation == "use both hardware threads of each core (core-level binding)"
    assert finding.request.binding is Binding.CORE and finding.command == ""
    assert finding.check == (
        "no command: the planner refuses it on the run's machine: 2 executor(s) x 12 cores = "
        f"24 task slots, but the machine allows 12 cores ({topo.allowed_cpus}): use fewer "
        "executors or cores per executor"
    )
    assert records.dump(finding)["command"] == "" and "\n" not in records.dump(finding)["check"]
    lines = advice_lines([advice], show_all=False, causes=advice.causes)
    assert f"           ! {finding.check}" in lines and not any("$ " in line for line in lines)
    unrecorded = _finding(advise(Subject(None, smt, [st, smt]), "smt"), "smt")
    assert "--bind core" in unrecorded.command
    assert unrecorded.check.startswith("not checked by the planner: the run's machine is not ")


def test_a_changed_executor_count_replaces_the_runs_count_per_node():
    """A run laid out per node (2 per node on 2 nodes: 4 executors) advised to use fewer,
    larger executors gets --executors 2, not its own layout back. numaspark's records store
    the total; a hand-written one may give the layout per node (records.load reads it)."""
    topo = load(xml=topology_file("24em64t-2n6c2t-pci.xml"))
    layout = Layout(executors_per_node=2, mode=Mode.STANDALONE)
    placement = placement_to_dict(plan(topo, layout, Binding.NODE))
    placement["layout"]["executors_per_node"] = 2
    run = _run("a", 10.0, gc_share=0.01, placement=placement, binding="node")
    run = replace(
        run,
        spec=replace(run.spec, mode="standalone", executors=4),
        metrics={**run.metrics, "shuffleTotalBytesRead": 100.0, "shuffleRemoteBytesRead": 80.0},
    )
    finding = _finding(advise(Subject(None, run), "a"), "executor-count")
    argv = finding.command.split()
    assert "--executors-per-node" not in argv and argv[argv.index("--executors") + 1] == "2"


def test_heap_above_31g_loses_compressed_oops():
    run = _run("a", 10.0)
    big = replace(run.spec.placement.jvms[0], heap=48 * 2**30)
    run = replace(run, spec=replace(run.spec, placement=replace(run.spec.placement, jvms=(big,))))
    heap = _finding(advise(Subject(None, run), "a"), "heap-size")
    assert heap.severity is Severity.MODERATE and "--memory-per-executor 31g" in heap.command
    assert "--mode local" in heap.command  # one JVM: a smaller heap fits where this one did
    # executors: 31g each might not fit, more of them with the planner's auto heap (<= 31g) do
    standalone = replace(run, spec=replace(run.spec, mode="standalone", executors=2))
    machine = load(synthetic="pack:2 numa:1(memory=96GiB) core:24 pu:2")
    heap = _finding(advise(Subject(None, standalone, topology=machine), "a"), "heap-size")
    assert "--memory-per-executor" not in heap.command  # the planner's auto heap: under 31 GB
    assert "--mode standalone --executors 6 --cores-per-executor 1" in heap.command


def test_smt_rule_uses_the_measured_gain():
    st = _run("st", 10.0)
    st = replace(st, spec=replace(st.spec, label="ST 2 cores local 1x2 bind=pu"))
    smt = _run("smt", 12.0)
    smt = replace(smt, spec=replace(smt.spec, label="SMT 2 cores local 1x4 bind=core"))
    advice = advise(Subject(None, st, [st, smt]), "st")
    finding = _finding(advice, "smt")
    assert finding.severity is Severity.MODERATE and "--bind pu" in finding.command
    alone = advise(Subject(None, st, [st]), "st")
    assert any(n.rule == "smt" for n in alone.not_assessed)


def test_unavailable_inputs_are_not_assessed_never_guessed():
    run = _run("a", 10.0, measurements={"memory_bandwidth": {"unavailable": "no counter"}})
    advice = advise(Subject(None, run), "a")
    reasons = {n.rule: n.why for n in advice.not_assessed}
    assert reasons["memory-bandwidth"] == "no counter"
    assert "task-skew" in reasons and "driver-time" in reasons  # no event log


def test_bandwidth_past_the_knee_spreads_a_local_run_over_executors_per_node():
    """With counters (not here: the figure is constructed) a saturated bandwidth region asks
    for one executor per node, bound: for a local run, on a standalone cluster (local mode is
    one JVM whatever --executors-per-node says)."""
    found = {"estimate_bps": 9e10, "share": 0.95, "region": "exponential"}
    run = _run("a", 10.0, measurements={"memory_bandwidth": found})
    finding = _finding(advise(Subject(None, run), "a"), "memory-bandwidth")
    assert finding.severity is Severity.SEVERE
    argv = finding.command.split()
    assert argv[argv.index("--mode") + 1] == "standalone"
    assert argv[argv.index("--executors-per-node") + 1] == "1" and "--bind" in argv


def test_advice_on_a_recorded_event_log():
    advice = advise_event_log(PLAIN_LOG)
    rules = {f.rule for f in advice.findings} | {n.rule for n in advice.not_assessed}
    assert {"gc", "task-skew", "spill", "tasks-per-core", "driver-time"} <= rules
    log = parse_event_log(PLAIN_LOG)
    driver = _finding(advice, "driver-time")
    assert driver.evidence["application_ms"] == log.end_time - log.start_time
    proc = run_cli("advise", str(PLAIN_LOG), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["advice"][0]["findings"][0]["severity"] in (
        "none",
        "low",
        "moderate",
        "severe",
        "critical",
    )


def _skewed(shuffle: bool = True):
    """The plain log with one task of its longest stage 9x the others; ``shuffle``: that
    stage read as a shuffle's reader (its sums say so), else as it is (data made in the
    driver)."""
    log = parse_event_log(PLAIN_LOG)
    stage = int(log.stages.sort_values("stageDuration").iloc[-1]["stageId"])
    tasks = log.tasks.copy()
    rows = tasks.index[tasks["stageId"] == stage]
    tasks.loc[rows, "duration"] = 100.0
    tasks.loc[rows[0], "duration"] = 900.0  # one task 9x the others
    stages = log.stages.copy()
    if shuffle:
        stages.loc[stages["stageId"] == stage, "shuffleRecordsRead"] = 1000.0
    return replace(log, tasks=tasks, stages=stages)


def test_skew_advice_sets_aqe_only_where_the_run_turned_it_off():
    """AQE and its skew join are on by default (Spark 3.2+): the advice for a skewed stage
    asks for more partitions, and turns AQE back on only in a run that had it off."""
    made, skewed = _skewed(shuffle=False), _skewed()
    # the stage made its data in the driver: its tasks are the code's partitions
    neither = _finding(advise(Subject(made), "log"), "task-skew")
    assert "it reads neither" in neither.finding and "shuffle" not in neither.command
    assert neither.change == {"spark.default.parallelism": "8"}
    default = _finding(advise(Subject(skewed), "log"), "task-skew")
    assert default.severity > Severity.NONE and "9.0x the median" in default.finding
    assert "spark.sql.shuffle.partitions=" in default.command
    assert "adaptive" not in default.command and "turn" not in default.recommendation
    run = _run("a", 10.0)
    off = replace(run, spec=replace(run.spec, spark_conf={"spark.sql.adaptive.enabled": "false"}))
    finding = _finding(advise(Subject(skewed, off), "run"), "task-skew")
    assert "--conf spark.sql.adaptive.enabled=true" in finding.command
    assert "skewJoin" not in finding.command
    assert finding.recommendation.startswith(
        "split the skewed partitions: turn spark.sql.adaptive.enabled"
    )
    # a run that had the partitions the rule would ask for (4 per slot) is asked for twice
    had = replace(run, spec=replace(run.spec, spark_conf={"spark.sql.shuffle.partitions": "8"}))
    finding = _finding(advise(Subject(skewed, had), "run"), "task-skew")
    assert "spark.sql.shuffle.partitions=16" in finding.command
    assert "spark.default.parallelism=8" in finding.command


def test_a_stored_runs_command_carries_what_it_was_given_and_the_change_only():
    """A run whose recorded settings hold what Spark derives for each application beside the
    user's (an application id, the executor id): its ``numaspark run`` carries the user's
    settings, a driver port pinned on purpose among them, and the change, never what Spark
    derives (before, every recorded key went into the command), and ``change`` names the
    settings that differ from the run's."""
    run = _run("a", 10.0)
    given = {
        "spark.app.id": "local-1",
        "spark.driver.port": "40123",
        "spark.executor.id": "driver",
        "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
        "spark.driver.extraJavaOptions": "-XX:+UseSerialGC --add-opens=java.base/java.nio=ALL-UNNAMED",
    }
    ran = replace(run, spec=replace(run.spec, spark_conf=given))
    finding = _finding(advise(Subject(_skewed(), ran), "run"), "task-skew")
    assert finding.command.startswith("numaspark run wordcount")
    for key in ("spark.app.id", "spark.executor.id"):
        assert key not in finding.command
    assert "spark.driver.port=40123" in finding.command  # the user's, kept
    assert "spark.serializer=org.apache.spark.serializer.KryoSerializer" in finding.command
    # the user's JVM flag stays, the launcher's module flag does not
    assert "spark.driver.extraJavaOptions=-XX:+UseSerialGC" in finding.command
    assert "--add-opens" not in finding.command
    assert finding.change == {
        "spark.default.parallelism": "8",
        "spark.sql.shuffle.partitions": "8",
    }


def test_advise_groups_a_directory_by_configuration():
    runs = [_run("a", 10.0), _run("a", 11.0, gc_share=0.3), _run("b", 20.0)]
    advices = advise_results(runs)
    assert [a.subject for a in advices] == ["wordcount · config a", "wordcount · config b"]


def test_advise_bad_input_is_one_line():
    proc = run_cli("advise", "/nonexistent/log")
    assert proc.returncode != 0 and "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- the tuner ----------------------------------------------------------------------------


def _table(tmp_path: Path, holes: set[tuple] = frozenset()) -> Path:  # type: ignore[assignment]
    """An additive table: time = layout x binding x partitions factors (known optimum)."""
    lines = ["executors,cores_per_executor,binding,partitions,wall_s"]
    for e in (1, 2, 4, 8):
        for c in (1, 2, 4, 8):
            for b, fb in (("none", 1.2), ("node", 1.0), ("core", 1.05)):
                for p, fp in ((8, 1.3), (16, 1.0), (64, 1.1)):
                    if (e, c, b, p) in holes:
                        continue
                    slots = e * c
                    wall = 100.0 / min(slots, 16) ** 0.8 * fb * fp * (1 + 0.02 * e)
                    lines.append(f"{e},{c},{b},{p},{wall:.4f}")
    path = tmp_path / "table.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_replay_returns_the_trial_sequence_as_json(tmp_path):
    table = _table(tmp_path)
    proc = run_cli(
        "tune",
        "--replay",
        str(table),
        "--minimize",
        "wall_s",
        "--budget",
        "8",
        "--seed",
        "3",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["held"] == ""  # no column describes the job: one search, of every column
    (data,) = document["contexts"]
    assert data["context"] == {}
    trials = data["trials"]
    assert 1 <= len(trials) <= 8
    assert set(trials[0]["params"]) == {"executors", "cores_per_executor", "binding", "partitions"}
    assert all(isinstance(t["value"], float) for t in trials)
    assert data["best"]["value"] == min(t["value"] for t in trials)
    again = json.loads(
        run_cli("tune", "--replay", str(table), "--budget", "8", "--seed", "3", "--json").stdout
    )
    assert again["contexts"][0]["trials"] == trials  # the seed fixes the sequence


def test_replay_never_repeats_and_never_tries_an_absent_row(tmp_path):
    holes = {(8, 8, b, p) for b in ("none", "node", "core") for p in (8, 16, 64)}
    space, lookup = read_table(_table(tmp_path, holes), "wall_s")
    tried = []

    def objective(params):
        key = tuple(params[n] for n in space.names)
        assert key in lookup, f"tried a configuration that cannot run: {key}"
        tried.append(key)
        return lookup[key]

    tune(space, objective, budget=60, seed=1, early_stop=False, proposals_per_trial=4)
    assert len(tried) == len(set(tried)) == 60


def test_early_stop_when_nothing_left_can_beat_the_best(tmp_path):
    space, lookup = read_table(_table(tmp_path), "wall_s")
    found = tune(
        space, replay_objective(lookup, space), budget=len(lookup), seed=0, proposals_per_trial=4
    )
    assert found.stopped.startswith("early")
    assert len(found.trials) < 0.75 * len(lookup)  # stopped well before trying everything
    assert found.best.value <= min(lookup.values()) * 1.05


def test_the_tuner_beats_random_search_on_an_additive_table(tmp_path):
    space, lookup = read_table(_table(tmp_path), "wall_s")
    best = min(lookup.values())
    tuner, rand = [], []
    for seed in range(5):
        trials = tune(
            space,
            replay_objective(lookup, space),
            budget=20,
            seed=seed,
            early_stop=False,
            proposals_per_trial=8,
        ).trials
        tuner.append(evaluations_to([t.value for t in trials], best * 1.05) or 21)
        rand.append(evaluations_to(random_search(lookup, seed), best * 1.05))
    assert sorted(tuner)[2] < sorted(rand)[2]  # medians (bench/tune_replay.py: 20 seeds)


def test_replay_table_errors_are_one_line(tmp_path):
    table = _table(tmp_path)
    proc = run_cli("tune", "--replay", str(table), "--minimize", "nope")
    assert proc.returncode != 0 and "no column 'nope'" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run_cli("tune")
    assert proc.returncode != 0 and "--replay" in proc.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("a,wall_s\nx,\n")
    proc = run_cli("tune", "--replay", str(bad))
    assert proc.returncode != 0 and "no numbers" in proc.stderr


def test_space_distance_orders_numbers_and_not_words():
    space = Space({"n": [1, 2, 4, 8], "b": ["none", "node"]}, [])
    assert space.distance((1, "none"), (2, "none")) < space.distance((1, "none"), (8, "none"))
    assert space.distance((1, "none"), (1, "node")) == 1.0
