"""Run a workload as placed, with warm-up and repetitions, storing each run as it ends.

The warm-up and measured iterations run in one Spark application (see
workloads/harness.py): warm-ups then warm the JIT of the very JVMs that are
measured, and starting Spark is paid once. Each iteration is one `RunResult`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from numaspark.collect import default_collectors
from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.result import RunResult, environment
from numaspark.experiment.store import ResultStore
from numaspark.metrics.aggregate import aggregate, aggregate_job_group, job_group_stages
from numaspark.metrics.eventlog import parse_event_log
from numaspark.metrics.gc import gc_by_executor
from numaspark.metrics.streaming import summarize_stream
from numaspark.placement import (
    Binding,
    Layout,
    MemPolicy,
    Mode,
    Placement,
    PuOrder,
    memory_on,
    placement_to_dict,
    plan,
)
from numaspark.report.flamegraph import write_flame_graph
from numaspark.report.readings import readings
from numaspark.spark.affinity import RECORD_DIR, read_records, require_jar
from numaspark.spark.affinity import summarize as summarize_affinity
from numaspark.spark.app import AppRun, find_event_log, run_app
from numaspark.spark.cluster import StandaloneCluster
from numaspark.spark.home import spark_home, spark_version
from numaspark.spark.processes import ProcessTracker, sigterm_raises, wait_for
from numaspark.spark.profiler import agent_library, agent_option
from numaspark.topology import CpuSet, Topology
from numaspark.workloads import Size, get_workload
from numaspark.workloads.datagen import DEFAULT_SEED, prepare_input
from numaspark.workloads.harness import JOB_GROUP_PREFIX, read_answers
from numaspark.workloads.streamsource import LEDGER_FILE, PORT_FILE, read_ledger, source_argv

Progress = Callable[[str], None]


@dataclass
class RunRequest:
    workload: str
    size: str = "tiny"
    layout: Layout = field(default_factory=Layout)
    binding: Binding = Binding.NONE
    mem_policy: MemPolicy | None = None
    pu_order: PuOrder = PuOrder.CORES_FIRST
    only_nodes: CpuSet | None = None  # executors only on these NUMA nodes
    mem_nodes: CpuSet | None = None  # memory bound here instead of the CPUs' own nodes (remote)
    repeat: int = 1
    warmup: int = 0
    out: Path = Path("numaspark-out")
    cluster_dir: Path | None = None  # a cluster left up by `numaspark cluster up`
    data_root: Path | None = None
    seed: int = DEFAULT_SEED
    timeout_s: float = 1800.0
    label: str | None = None  # a name for this configuration in tables
    config_key: str | None = None  # the experiment configuration it belongs to (--resume)
    spark_conf: dict[str, str] = field(default_factory=dict)  # extra settings, recorded in the spec
    params: dict[str, str] = field(default_factory=dict)  # workload parameter overrides (text)
    # streaming workloads: events a second, measured seconds, warm-up seconds before them
    rate: float = 1000.0
    duration_s: float = 60.0
    stream_warmup_s: float = 10.0
    # measurement: OS/NUMA/perf collectors and their interval; JVM GC logs per executor
    collect: bool = True
    interval_s: float = 1.0
    gc_log: bool = False
    profile: bool = False  # async-profiler flame graph per task-running JVM


TOPOLOGY_FILE = "topology.json"


def save_topology(topology: Topology, out: Path) -> None:
    """The machine the runs in ``out`` ran on, once (the report draws placements on it)."""
    path = Path(out) / TOPOLOGY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(topology.to_dict(), indent=1))


def run_workload(
    request: RunRequest,
    topology: Topology,
    progress: Progress | None = None,
    cluster: StandaloneCluster | None = None,
    on_result: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Run ``request``; every run (warm-ups too) is appended to ``out``/results.jsonl as it ends.

    ``cluster``: an already running cluster to use (the caller stops it).
    """
    say = progress or (lambda message: None)
    if request.repeat < 1 or request.warmup < 0:
        raise UsageError("--repeat must be at least 1 and --warmup at least 0")
    if request.interval_s <= 0:
        raise UsageError("--interval must be positive, e.g. --interval 1s")
    workload = get_workload(request.workload).with_params(request.params)
    if workload.streaming:
        _check_stream_request(request, workload)
        size = Size(f"{request.rate:g}/s", 0)  # a stream's size is its velocity
    else:
        size = workload.size(request.size)
    placement = plan(
        topology,
        request.layout,
        request.binding,
        request.mem_policy,
        request.pu_order,
        only_nodes=request.only_nodes,
    )
    if request.mem_nodes is not None:
        placement = memory_on(placement, request.mem_nodes)
    save_topology(topology, request.out)
    if cluster is None and request.cluster_dir is not None:
        cluster = StandaloneCluster.attach(request.cluster_dir)
    if cluster is not None:
        # checked before any input is generated: a mismatch is the user's to fix first
        _check_cluster_matches(cluster, placement, str(cluster.directory))
    if workload.streaming:
        input_dir, manifest = None, None
    else:
        say(f"{workload.name}: preparing {size.label} input")
        input_dir, manifest = prepare_input(workload, size, request.seed, request.data_root)
    store = ResultStore(request.out)
    env = environment(topology.fingerprint, spark_version(spark_home()))
    results: list[RunResult] = []

    def keep(result: RunResult) -> None:
        store.append(result)
        results.append(result)
        if on_result is not None:
            on_result(result)

    with ProcessTracker() as tracker, sigterm_raises():
        if request.layout.mode is Mode.STANDALONE and cluster is None:
            say(f"starting a standalone cluster: {len(placement.executors)} bound worker(s)")
            cluster = StandaloneCluster.start(
                placement, request.out / "cluster", tracker, on_progress=say
            )
        iterations = request.warmup + request.repeat
        what = f"{request.warmup} warm-up + {request.repeat} measured iteration(s)"
        if workload.streaming:
            what += (
                f", each {request.stream_warmup_s:g} s warm-up + {request.duration_s:g} s at "
                f"{request.rate:g} events/s"
            )
        say(f"{request.label or workload.name}: {what} in one application")
        _run_iterations(
            request,
            workload,
            size,
            manifest,
            input_dir,
            placement,
            env,
            tracker,
            cluster,
            iterations,
            keep,
        )
    return results


def _check_stream_request(request: RunRequest, workload) -> None:
    if request.rate <= 0 or request.duration_s <= 0 or request.stream_warmup_s < 0:
        raise UsageError(
            "--rate and --duration must be positive and --stream-warmup at least 0 "
            "(e.g. --rate 1000 --duration 60s)"
        )
    window, slide = workload.params.get("window_s"), workload.params.get("slide_s")
    if window is not None and slide is not None and (slide <= 0 or window % slide):
        raise UsageError(
            f"window_s={window} must be a whole multiple of slide_s={slide} "
            "(e.g. --param window_s=10 --param slide_s=5)"
        )


def _check_cluster_matches(cluster: StandaloneCluster, placement: Placement, name: str) -> None:
    def shape(jvms: list[dict]) -> list[tuple]:
        return [(j["cores"], j["cpus"], j["heap"]) for j in jvms if j["runs_tasks"]]

    running = shape(cluster.placement["jvms"])
    if shape(placement_to_dict(placement)["jvms"]) != running:
        raise UsageError(
            f"the cluster in {name} runs {len(running)} executor(s) placed differently from this "
            "run's options: give the options it was started with, or start a new cluster"
        )


def _spec(
    request, workload, size, manifest, placement, cluster, iteration: int, iterations: int
) -> dict:
    return {
        "workload": workload.name,
        "category": workload.category,
        "size": size.label,
        "rows": size.rows,
        "seed": request.seed,
        "params": dict(workload.params),
        "stream": (
            {
                "rate": request.rate,
                "duration_s": request.duration_s,
                "warmup_s": request.stream_warmup_s,
            }
            if workload.streaming
            else None
        ),
        "mode": request.layout.mode.value,
        "binding": request.binding.value,
        "mem_policy": placement.mem_policy.value if placement.mem_policy else None,
        "executors": len(placement.executors),
        "cores_per_executor": placement.executors[0].cores,
        "label": request.label,
        "config": request.config_key,
        "iteration": iteration,
        "iterations": iterations,
        "warmup": iteration < request.warmup,
        "repetition": iteration - request.warmup,
        "cluster": str(cluster.directory) if cluster else None,
        "spark_conf": _default_conf(request, workload, placement),
        "placement": placement_to_dict(placement),
        "dataset": (
            {k: manifest.get(k) for k in ("sha256", "bytes", "rows", "seed", "facts")}
            if manifest
            else None
        ),
    }


def _run_iterations(
    request, workload, size, manifest, input_dir, placement, env, tracker, cluster, iterations, keep
) -> None:
    """One application runs every iteration; each becomes a `RunResult`, stored even on Ctrl-C."""
    app_key = uuid.uuid4().hex[:12]
    run_dir = (request.out / "runs" / app_key).resolve()
    answers_path = run_dir / "answers.jsonl"
    if workload.streaming:
        input_dir = run_dir / "source"
        job_args = {
            **workload.params,
            "query": workload.name,
            "warmup_s": request.stream_warmup_s,
            "duration_s": request.duration_s,
        }
    else:
        job_args = workload.job_arguments(manifest["facts"])
    app: AppRun | None = None
    extra_conf = _default_conf(request, workload, placement)
    if placement.binding in (Binding.CORE, Binding.PU):  # the plugin records every task here
        require_jar()
        extra_conf.setdefault("spark.numaspark.affinity.recordDir", str(run_dir / RECORD_DIR))
    profiler = agent_library() if request.profile else None
    if profiler:
        (run_dir / "profiles").mkdir(parents=True, exist_ok=True)
    try:
        if workload.streaming:
            _start_source(request, workload, input_dir, tracker, iterations)
        app = run_app(
            placement,
            workload.job_path,
            [str(input_dir), str(run_dir / "output"), str(answers_path), str(iterations),
             json.dumps(job_args)],
            run_dir,
            tracker,
            cluster=cluster,
            extra_conf=extra_conf,
            timeout_s=request.timeout_s,
            collectors=default_collectors() if request.collect else None,
            interval_s=request.interval_s,
            java_options=_java_options(request, run_dir),
            task_jvm_options=[agent_option(profiler, run_dir / "profiles")] if profiler else None,
        )  # fmt: skip
    finally:
        # also on Ctrl-C or SIGTERM: the iterations that finished are kept
        interrupted = app is None
        answers = read_answers(answers_path)
        ledger = read_ledger(input_dir / LEDGER_FILE) if workload.streaming else []
        event_log, app_id = find_event_log(run_dir / "eventlog")
        log, log_problem = _parse(event_log)
        affinity_records = read_records(run_dir)
        if profiler:
            _draw_flame_graphs(run_dir / "profiles", app)
        spec_of = partial(
            _spec, request, workload, size, manifest, placement, cluster, iterations=iterations
        )
        for answer in answers:
            iteration = answer["iteration"]
            result = RunResult(spec=spec_of(iteration), environment=env, status="failed")
            _fill(result, app, app_id, event_log, run_dir, log, log_problem)
            result.wall_time_s = round(answer["wall_s"], 3)
            if workload.streaming:
                facts = _stream_facts(ledger, iteration, workload)
                group = answer["answer"].get("run_id")  # a query runs its batches as its run id
            else:
                facts, group = manifest["facts"], f"{JOB_GROUP_PREFIX}{iteration}"
            if log is not None:
                result.metrics = aggregate_job_group(log, group) or {}
                if workload.streaming and facts is not None:
                    result.streaming = _stream_metrics(log, group, facts, workload)
            result.measurements = _measurements(app, log, group, answer, result.metrics)
            if result.measurements is not None:
                result.measurements["memory_bandwidth"] = _bandwidth_use(
                    result.measurements, env["topology_fingerprint"]
                )
            if affinity_records and log is not None:
                result.affinity = summarize_affinity(affinity_records, job_group_stages(log, group))
            result.readings = readings(result)
            if facts is None:
                verdict_ok, details = False, "the event source wrote no ledger entry for this run"
            else:
                verdict = workload.check(facts, answer["answer"])
                verdict_ok, details = verdict.passed, verdict.details
            result.check = {"passed": verdict_ok, "details": details, "answer": answer["answer"]}
            result.status = "ok" if verdict_ok else "failed"
            result.failure_reason = None if verdict_ok else f"wrong answer: {details}"
            keep(result)
        if len(answers) < iterations and not interrupted and app is not None:
            result = RunResult(spec=spec_of(len(answers)), environment=env, status="failed")
            _fill(result, app, app_id, event_log, run_dir, log, log_problem)
            result.failure_reason = app.failure or "the application ended before all its iterations"
            keep(result)


def _default_conf(request, workload, placement) -> dict[str, str]:
    """The user's settings, and for streaming one shuffle partition per task slot unless set.

    Spark's default of 200 shuffle partitions means 200 state stores per batch: on
    a small machine that alone makes every batch take seconds, whatever the rate.
    """
    conf = dict(request.spark_conf)
    if workload.streaming:
        slots = sum(e.cores for e in placement.executors)
        conf.setdefault("spark.sql.shuffle.partitions", str(max(1, slots)))
    return conf


def _start_source(request, workload, directory: Path, tracker, connections: int) -> None:
    """The tracked event source, listening before the application starts."""
    argv = source_argv(
        directory,
        workload.stream,
        request.rate,
        request.stream_warmup_s,
        request.duration_s,
        request.seed,
        workload.params,
        connections,
    )
    source = tracker.start(argv, name="event-source", log=directory.parent / "event-source.log")
    port = directory / PORT_FILE
    if not wait_for(lambda: port.exists() or not source.alive(), timeout_s=30) or not port.exists():
        raise NumasparkError(
            f"the event source did not start: see {directory.parent / 'event-source.log'}"
        )


def _draw_flame_graphs(directory: Path, app: AppRun | None) -> None:
    names = {e["pid"]: e["jvm"] for e in (app.effective if app else [])}
    for collapsed in sorted(directory.glob("profile-*.collapsed")):
        pid = int(collapsed.stem.split("-")[1])
        name = names.get(pid, f"JVM {pid}")
        try:
            write_flame_graph(
                collapsed, collapsed.with_suffix(".svg"), f"{name} (pid {pid}), on-CPU"
            )
        except (OSError, ValueError, RecursionError) as exc:  # a drawing must not lose the run
            (collapsed.with_suffix(".error")).write_text(f"no flame graph: {exc}\n")


def _java_options(request: RunRequest, run_dir: Path) -> list[str]:
    options = []
    if request.gc_log:  # one file per JVM (%p: its pid), unified logging (Java 9+)
        options.append(f"-Xlog:gc*:file={run_dir / 'gc-%p.log'}:time,uptime,level,tags")
    return options


def _measurements(app, log, group: str, answer: dict, metrics: dict) -> dict | None:
    """The collectors' figures for one iteration's window, GC per executor, the CPU gap."""
    found: dict = {}
    if app is not None and app.collectors is not None and "started" in answer:
        found = app.collectors.summarize(answer["started"], answer["ended"])
    if log is not None:
        found["gc"] = gc_by_executor(log, job_group_stages(log, group))
    jvms = (found.get("os") or {}).get("jvms") or []
    spark_cpu_ms = metrics.get("executorCpuTime")
    if jvms and spark_cpu_ms:
        os_cpu_s = sum(j["cpu_user_s"] + j["cpu_system_s"] for j in jvms)
        found["executor_cpu_gap"] = {
            "os_cpu_s": round(os_cpu_s, 2),
            "spark_executor_cpu_s": round(spark_cpu_ms / 1000, 2),
            "ratio": round(os_cpu_s / (spark_cpu_ms / 1000), 2),
            "note": "OS CPU time of the task-running JVMs (JIT, GC, Spark's own threads, and "
            "in local mode the driver) over Spark's executorCpuTime of their tasks",
        }
    return found or None


def _bandwidth_use(found: dict, fingerprint: str) -> dict:
    """The run's memory bandwidth against the probed maximum, where counters allow an estimate.

    The estimate is LLC load misses x 64-byte lines per second (reads only, and
    prefetches not counted): a lower bound, enough to tell the regions apart.
    """
    from numaspark.probe import bandwidth_region, load_probe, sustained_bandwidth_bps

    perf = found.get("perf") or {}
    misses = ((perf.get("events") or {}).get("LLC-load-misses") or {}).get("value")
    seconds = (found.get("os") or {}).get("seconds")
    if misses is None or not seconds:
        return {
            "unavailable": "no LLC-load-misses counter on this machine: bandwidth not estimated"
        }
    probe = load_probe(fingerprint)
    sustained = sustained_bandwidth_bps(probe) if probe else None
    used = misses * 64 / seconds
    if sustained is None:
        return {
            "estimate_bps": used,
            "unavailable": "run 'numaspark probe' to place it in a region",
        }
    return {"estimate_bps": used, "sustained_bps": sustained, "share": round(used / sustained, 4),
            "region": bandwidth_region(used, sustained)}  # fmt: skip


def _stream_facts(ledger: list[dict], iteration: int, workload) -> dict | None:
    entry = next((e for e in ledger if e.get("connection") == iteration), None)
    return {**entry, "params": dict(workload.params)} if entry else None


def _stream_metrics(log, run_id: str | None, facts: dict, workload) -> dict:
    summary = summarize_stream(
        log.stream_progress,
        run_id or "",
        facts.get("measure_from_ms"),
        facts.get("last_ms"),
        trigger_ms=float(workload.params.get("trigger_s", 0)) * 1000 or None,
    )
    summary["rateAsked"] = facts.get("rate")
    summary["sendRate"] = facts.get("send_rate")
    summary["eventsSent"] = facts.get("events")
    return summary


def _parse(event_log: Path | None):
    if event_log is None:
        return None, "no event log was written"
    try:
        return parse_event_log(event_log), None
    except NumasparkError as exc:  # an app stopped before it logged anything
        return None, f"no metrics: {exc}"


def _fill(
    result: RunResult, app: AppRun | None, app_id, event_log, run_dir: Path, log, log_problem
) -> None:
    """What every iteration of one application shares."""
    result.app_id = app_id
    result.app = {
        "wall_time_s": round(app.wall_s, 3) if app else None,
        "elapsed_ms": aggregate(log)["elapsedTime"] if log is not None else None,
        "returncode": app.returncode if app else None,
    }
    if app is not None:
        result.effective_placement = app.effective
        result.warnings.extend(app.placement_warnings)
    if log is not None:
        result.warnings.extend(log.warnings)
    elif log_problem:
        result.warnings.append(log_problem)
    result.artifacts = {
        "run_dir": str(run_dir),
        "event_log": str(event_log) if event_log else None,
        "spark_submit_log": str(run_dir / "spark-submit.log"),
    }
    if (run_dir / "collectors.jsonl").exists():
        result.artifacts["collector_samples"] = str(run_dir / "collectors.jsonl")
    graphs = sorted(str(p) for p in (run_dir / "profiles").glob("profile-*.svg"))
    if graphs:
        result.artifacts["flame_graphs"] = graphs
    gc_logs = sorted(str(p) for p in run_dir.glob("gc-*.log"))
    if gc_logs:
        result.artifacts["gc_logs"] = gc_logs
