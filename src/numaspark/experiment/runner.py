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

from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.result import RunResult, environment
from numaspark.experiment.store import ResultStore
from numaspark.metrics.aggregate import aggregate, aggregate_job_group
from numaspark.metrics.eventlog import parse_event_log
from numaspark.placement import (
    Binding,
    Layout,
    MemPolicy,
    Mode,
    Placement,
    PuOrder,
    placement_to_dict,
    plan,
)
from numaspark.spark.app import AppRun, find_event_log, run_app
from numaspark.spark.cluster import StandaloneCluster
from numaspark.spark.home import spark_home, spark_version
from numaspark.spark.processes import ProcessTracker, sigterm_raises
from numaspark.topology import CpuSet, Topology
from numaspark.workloads import get_workload
from numaspark.workloads.datagen import DEFAULT_SEED, prepare_input
from numaspark.workloads.harness import JOB_GROUP_PREFIX, read_answers

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
    repeat: int = 1
    warmup: int = 0
    out: Path = Path("numaspark-out")
    cluster_dir: Path | None = None  # a cluster left up by `numaspark cluster up`
    data_root: Path | None = None
    seed: int = DEFAULT_SEED
    timeout_s: float = 1800.0
    label: str | None = None  # a name for this configuration in tables
    spark_conf: dict[str, str] = field(default_factory=dict)  # extra settings, recorded in the spec


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
    workload = get_workload(request.workload)
    size = workload.size(request.size)
    placement = plan(
        topology,
        request.layout,
        request.binding,
        request.mem_policy,
        request.pu_order,
        only_nodes=request.only_nodes,
    )
    if cluster is None and request.cluster_dir is not None:
        cluster = StandaloneCluster.attach(request.cluster_dir)
    if cluster is not None:
        # checked before any input is generated: a mismatch is the user's to fix first
        _check_cluster_matches(cluster, placement, str(cluster.directory))
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
        "mode": request.layout.mode.value,
        "binding": request.binding.value,
        "mem_policy": placement.mem_policy.value if placement.mem_policy else None,
        "executors": len(placement.executors),
        "cores_per_executor": placement.executors[0].cores,
        "label": request.label,
        "iteration": iteration,
        "iterations": iterations,
        "warmup": iteration < request.warmup,
        "repetition": iteration - request.warmup,
        "cluster": str(cluster.directory) if cluster else None,
        "spark_conf": dict(request.spark_conf),
        "placement": placement_to_dict(placement),
        "dataset": {k: manifest.get(k) for k in ("sha256", "bytes", "rows", "seed", "facts")},
    }


def _run_iterations(
    request, workload, size, manifest, input_dir, placement, env, tracker, cluster, iterations, keep
) -> None:
    """One application runs every iteration; each becomes a `RunResult`, stored even on Ctrl-C."""
    app_key = uuid.uuid4().hex[:12]
    run_dir = (request.out / "runs" / app_key).resolve()
    answers_path = run_dir / "answers.jsonl"
    app: AppRun | None = None
    try:
        app = run_app(
            placement,
            workload.job_path,
            [
                str(input_dir),
                str(run_dir / "output"),
                str(answers_path),
                str(iterations),
                json.dumps(workload.job_arguments(manifest["facts"])),
            ],
            run_dir,
            tracker,
            cluster=cluster,
            extra_conf=request.spark_conf,
            timeout_s=request.timeout_s,
        )
    finally:
        # also on Ctrl-C or SIGTERM: the iterations that finished are kept
        interrupted = app is None
        answers = read_answers(answers_path)
        event_log, app_id = find_event_log(run_dir / "eventlog")
        log, log_problem = _parse(event_log)
        spec_of = partial(
            _spec, request, workload, size, manifest, placement, cluster, iterations=iterations
        )
        for answer in answers:
            result = RunResult(spec=spec_of(answer["iteration"]), environment=env, status="failed")
            _fill(result, app, app_id, event_log, run_dir, log, log_problem)
            result.wall_time_s = round(answer["wall_s"], 3)
            if log is not None:
                result.metrics = (
                    aggregate_job_group(log, f"{JOB_GROUP_PREFIX}{answer['iteration']}") or {}
                )
            verdict = workload.check(manifest["facts"], answer["answer"])
            result.check = {
                "passed": verdict.passed,
                "details": verdict.details,
                "answer": answer["answer"],
            }
            result.status = "ok" if verdict.passed else "failed"
            result.failure_reason = None if verdict.passed else f"wrong answer: {verdict.details}"
            keep(result)
        if len(answers) < iterations and not interrupted and app is not None:
            result = RunResult(spec=spec_of(len(answers)), environment=env, status="failed")
            _fill(result, app, app_id, event_log, run_dir, log, log_problem)
            result.failure_reason = app.failure or "the application ended before all its iterations"
            keep(result)


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
