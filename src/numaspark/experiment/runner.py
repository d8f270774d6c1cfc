"""Run a workload as placed, with warm-up and repetitions, storing each run as it ends."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.result import RunResult, environment
from numaspark.experiment.store import ResultStore
from numaspark.metrics.aggregate import aggregate
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
from numaspark.spark.app import run_app
from numaspark.spark.cluster import StandaloneCluster
from numaspark.spark.home import spark_home, spark_version
from numaspark.spark.processes import ProcessTracker, sigterm_raises
from numaspark.topology import Topology
from numaspark.workloads import get_workload
from numaspark.workloads.datagen import DEFAULT_SEED, prepare_input

Progress = Callable[[str], None]


@dataclass
class RunRequest:
    workload: str
    size: str = "tiny"
    layout: Layout = field(default_factory=Layout)
    binding: Binding = Binding.NONE
    mem_policy: MemPolicy | None = None
    pu_order: PuOrder = PuOrder.CORES_FIRST
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
        topology, request.layout, request.binding, request.mem_policy, request.pu_order
    )
    say(f"{workload.name}: preparing {size.label} input")
    input_dir, manifest = prepare_input(workload, size, request.seed, request.data_root)
    store = ResultStore(request.out)
    env = environment(topology.fingerprint, spark_version(spark_home()))
    results: list[RunResult] = []
    with ProcessTracker() as tracker, sigterm_raises():
        if request.layout.mode is Mode.STANDALONE and cluster is None:
            cluster = _cluster_for(request, placement, tracker, say)
        elif cluster is not None:
            _check_cluster_matches(cluster, placement, str(cluster.directory))
        total = request.warmup + request.repeat
        for number in range(total):
            warmup = number < request.warmup
            what = (
                f"warm-up {number + 1}"
                if warmup
                else f"run {number - request.warmup + 1}/{request.repeat}"
            )
            say(f"{request.label or workload.name}: {what}")
            result = _one_run(
                request,
                workload,
                size,
                manifest,
                input_dir,
                placement,
                env,
                tracker,
                cluster,
                warmup,
                number,
            )
            store.append(result)
            results.append(result)
            if on_result is not None:
                on_result(result)
            if result.status == "failed" and result.check is None:
                say(f"{workload.name}: failed: {result.failure_reason}")
                break  # the app itself failed: repeating it would fail the same way
    return results


def _cluster_for(request: RunRequest, placement: Placement, tracker: ProcessTracker, say: Progress):
    if request.cluster_dir is not None:
        cluster = StandaloneCluster.attach(request.cluster_dir)
        planned = [
            (j["cores"], j["cpus"], j["heap"])
            for j in placement_to_dict(placement)["jvms"]
            if j["runs_tasks"]
        ]
        running = [
            (j["cores"], j["cpus"], j["heap"]) for j in cluster.placement["jvms"] if j["runs_tasks"]
        ]
        if planned != running:
            raise UsageError(
                f"the cluster in {request.cluster_dir} runs {len(running)} executor(s) placed differently "
                "from this run's options: give the options it was started with, or start a new cluster"
            )
        return cluster
    say(f"starting a standalone cluster: {len(placement.executors)} bound worker(s)")
    return StandaloneCluster.start(placement, request.out / "cluster", tracker, on_progress=say)


def _check_cluster_matches(cluster: StandaloneCluster, placement: Placement, name: str) -> None:
    def shape(jvms: list[dict]) -> list[tuple]:
        return [(j["cores"], j["cpus"], j["heap"]) for j in jvms if j["runs_tasks"]]

    running = shape(cluster.placement["jvms"])
    if shape(placement_to_dict(placement)["jvms"]) != running:
        raise UsageError(
            f"the cluster in {name} runs {len(running)} executor(s) placed differently from this "
            "run's options: give the options it was started with, or start a new cluster"
        )


def _one_run(
    request, workload, size, manifest, input_dir, placement, env, tracker, cluster, warmup, number
) -> RunResult:
    spec = {
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
        "warmup": warmup,
        "repetition": number - request.warmup,
        "cluster": str(cluster.directory) if cluster else None,
        "spark_conf": dict(request.spark_conf),
        "placement": placement_to_dict(placement),
        "dataset": {k: manifest.get(k) for k in ("sha256", "bytes", "rows", "seed", "facts")},
    }
    result = RunResult(spec=spec, environment=env, status="failed")
    run_dir = (request.out / "runs" / result.run_id).resolve()
    output_dir = run_dir / "output"
    answer_path = run_dir / "answer.json"
    app = run_app(
        placement,
        workload.job_path,
        [str(input_dir), str(output_dir), str(answer_path)],
        run_dir,
        tracker,
        cluster=cluster,
        extra_conf=request.spark_conf,
        timeout_s=request.timeout_s,
    )
    result.app_id = app.app_id
    result.wall_time_s = round(app.wall_s, 3)
    result.effective_placement = app.effective
    result.warnings.extend(app.placement_warnings)
    result.artifacts = {
        "run_dir": str(run_dir),
        "event_log": str(app.event_log) if app.event_log else None,
        "spark_submit_log": str(app.log),
    }
    if app.event_log is not None:
        try:
            log = parse_event_log(app.event_log)
        except NumasparkError as exc:  # an app killed before it logged anything
            result.warnings.append(f"no metrics: {exc}")
        else:
            result.metrics = aggregate(log)
            result.warnings.extend(log.warnings)
    if not app.ok:
        result.failure_reason = app.failure
        return result
    try:
        answer = json.loads(answer_path.read_text())
    except (OSError, ValueError):
        result.failure_reason = "the job wrote no answer file"
        return result
    verdict = workload.check(manifest["facts"], answer)
    result.check = {"passed": verdict.passed, "details": verdict.details, "answer": answer}
    shutil.rmtree(output_dir, ignore_errors=True)  # the answer is checked; the output is big
    if verdict.passed:
        result.status = "ok"
    else:
        result.failure_reason = f"wrong answer: {verdict.details}"
    return result
