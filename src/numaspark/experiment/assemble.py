"""Result assembly: what one application left behind -> one `RunResult` per iteration.

Two steps. `read_outputs` reads a run directory (I/O only): the answers the job
wrote, the event log, the collectors' samples, the affinity plugin's task records,
the streaming source's ledger, and ``app.json`` (what spark-submit did, written
by the run loop). `assemble` is pure: from those outputs and the run's `RunPlan`
it builds the records, so it is tested on recorded run directories without Spark.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from numaspark import records
from numaspark.collect import SAMPLES_FILE, Recording
from numaspark.errors import NumasparkError
from numaspark.experiment.result import (
    AppInfo,
    Artifacts,
    CheckVerdict,
    Environment,
    Measurements,
    RunResult,
    RunSpec,
    Status,
    YarnApplication,
)
from numaspark.jsonlines import read_json_lines
from numaspark.metrics.aggregate import (
    aggregate,
    aggregate_job_group,
    job_group_stages,
    job_time_ms,
)
from numaspark.metrics.eventlog import EventLog, parse_event_log
from numaspark.metrics.gc import gc_by_executor
from numaspark.metrics.memory import process_tree_memory, python_tasks
from numaspark.metrics.streaming import summarize_stream
from numaspark.placement.plugin import RECORD_DIR, TaskRecord
from numaspark.probe import bandwidth_region
from numaspark.spark.affinity import read_records
from numaspark.spark.affinity import summarize as summarize_affinity
from numaspark.spark.app import find_event_log
from numaspark.workloads import Workload, get_workload
from numaspark.workloads.catalog import register_application
from numaspark.workloads.harness import JOB_GROUP_PREFIX
from numaspark.workloads.streamsource import LEDGER_FILE

APP_FILE = "app.json"  # in the run directory: what spark-submit did
PLAN_FILE = "plan.json"  # in the run directory: the RunPlan, written before the app starts
STORED_FILE = "stored"  # in the run directory: its records are stored
ANSWERS_FILE = "answers.jsonl"
CHECK_FILE = "check.json"  # in the run directory: an application's --check, as it ended


@dataclass(frozen=True)
class AppRecord:
    """What one spark-submit did, as the run loop saw it (``app.json``)."""

    returncode: int | None = None
    wall_s: float = 0.0
    app_id: str | None = None
    failure: str | None = None
    effective: list[dict] = field(default_factory=list)  # one per JVM that ran tasks (/proc)
    placement_warnings: list[str] = field(default_factory=list)
    stopped: bool = False  # a streaming application stopped after its --duration
    ui_url: str | None = None  # a user's application's Spark UI, as its driver bound it

    def save(self, run_dir: Path) -> None:
        (run_dir / APP_FILE).write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def load(cls, run_dir: Path) -> AppRecord | None:
        path = run_dir / APP_FILE
        if not path.exists():
            return None  # the application was interrupted before it ended
        data = json.loads(path.read_text())
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class AppOutputs:
    """Everything one application wrote into its run directory, read back."""

    run_dir: Path
    app: AppRecord | None  # None: interrupted (Ctrl-C, SIGTERM) before spark-submit ended
    answers: list[dict]
    event_log: Path | None
    app_id: str | None
    log: EventLog | None
    log_problem: str | None
    samples: Recording
    affinity_records: list[TaskRecord]
    ledger: list[dict]
    artifacts: Artifacts


@dataclass(frozen=True)
class RunPlan:
    """What assembly needs to know about the run besides its outputs."""

    workload: Workload
    spec: RunSpec  # the configuration's spec; each iteration fills in which one it was
    environment: Environment
    iterations: int
    warmup: int
    facts: dict | None  # the generated input's facts the answers are checked against
    sustained_bandwidth_bps: float | None = None  # the probed maximum, when there is one
    first: int = 0  # an application's run directory holds one iteration: this one

    def save(self, run_dir: Path, params: dict[str, str]) -> None:
        """Written before the application starts, with the numaspark process that runs it: a
        numaspark killed by SIGKILL stores nothing, and the next one assembles it from here."""
        import os

        import psutil

        run_dir.mkdir(parents=True, exist_ok=True)
        data = {
            "owner": [os.getpid(), round(psutil.Process().create_time(), 2)],
            "workload": self.workload.name,
            "params": params,
            "spec": records.dump(self.spec),
            "environment": records.dump(self.environment),
            "iterations": self.iterations,
            "warmup": self.warmup,
            "facts": self.facts,
            "sustained_bandwidth_bps": self.sustained_bandwidth_bps,
            "first": self.first,
        }
        (run_dir / PLAN_FILE).write_text(json.dumps(data, default=str))

    @classmethod
    def orphaned(cls, run_dir: Path) -> RunPlan | None:
        """The plan of a run whose records were never stored and whose numaspark is gone."""
        import psutil

        if (run_dir / STORED_FILE).exists() or not (run_dir / PLAN_FILE).exists():
            return None
        try:
            data = json.loads((run_dir / PLAN_FILE).read_text())
            pid, started = data["owner"]
            with contextlib.suppress(psutil.NoSuchProcess):
                if abs(psutil.Process(pid).create_time() - started) < 0.05:
                    return None  # its numaspark still runs: it stores them itself
            spec = records.load(RunSpec, data["spec"])
            if spec.application is not None:
                register_application(spec.application)
            workload = get_workload(data["workload"]).with_params(data.get("params") or {})
            return cls(
                workload=workload,
                spec=spec,
                first=data.get("first", 0),
                environment=records.load(Environment, data["environment"]),
                iterations=data["iterations"],
                warmup=data["warmup"],
                facts=data.get("facts"),
                sustained_bandwidth_bps=data.get("sustained_bandwidth_bps"),
            )
        except (OSError, ValueError, KeyError, TypeError, NumasparkError):
            return None  # not ours to recover (an older numaspark's run, or damaged)


def mark_stored(run_dir: Path) -> None:
    """The run's records are in results.jsonl: nothing to recover from it."""
    with contextlib.suppress(OSError):
        (run_dir / STORED_FILE).touch()


def read_outputs(run_dir: Path) -> AppOutputs:
    """Read what an application left in ``run_dir`` (any part may be missing)."""
    event_log, app_id = find_event_log(run_dir / "eventlog")
    log, log_problem = _parse(event_log)
    samples_path = run_dir / SAMPLES_FILE
    artifacts = Artifacts(
        run_dir=str(run_dir),
        event_log=str(event_log) if event_log else None,
        spark_submit_log=str(run_dir / "spark-submit.log"),
        collector_samples=str(samples_path) if samples_path.exists() else None,
        flame_graphs=tuple(sorted(str(p) for p in (run_dir / "profiles").glob("profile-*.svg"))),
        gc_logs=tuple(sorted(str(p) for p in run_dir.glob("gc-*.log"))),
    )
    return AppOutputs(
        run_dir=run_dir,
        app=AppRecord.load(run_dir),
        answers=read_json_lines(run_dir / ANSWERS_FILE),
        event_log=event_log,
        app_id=app_id,
        log=log,
        log_problem=log_problem,
        samples=Recording(read_json_lines(samples_path)),
        affinity_records=read_records(run_dir) if (run_dir / RECORD_DIR).is_dir() else [],
        ledger=read_json_lines(run_dir / "source" / LEDGER_FILE),
        artifacts=artifacts,
    )


def _parse(event_log: Path | None) -> tuple[EventLog | None, str | None]:
    if event_log is None:
        return None, "no event log was written"
    try:
        return parse_event_log(event_log), None
    except NumasparkError as exc:  # an app stopped before it logged anything
        return None, f"no metrics: {exc}"


def assemble(outputs: AppOutputs, plan: RunPlan) -> list[RunResult]:
    """One record per iteration that finished, and one failed record when the application
    ended (not interrupted) before all its iterations did."""
    if plan.workload.application is not None:
        return assemble_application(outputs, plan)
    shared = _shared(outputs)
    results = [_iteration(outputs, plan, answer, shared) for answer in outputs.answers]
    app = outputs.app
    if len(outputs.answers) < plan.iterations and app is not None:
        results.append(
            RunResult(
                spec=_spec_of(plan, len(outputs.answers)),
                environment=plan.environment,
                status=Status.FAILED,
                failure_reason=app.failure or "the application ended before all its iterations",
                **shared,
            )
        )
    return results


def _spec_of(plan: RunPlan, iteration: int) -> RunSpec:
    return replace(
        plan.spec,
        iteration=iteration,
        iterations=plan.iterations,
        warmup=iteration < plan.warmup,
        repetition=iteration - plan.warmup,
    )


def _shared(outputs: AppOutputs) -> dict:
    """What every iteration of one application shares."""
    app, log = outputs.app, outputs.log
    warnings = list(app.placement_warnings) if app else []
    if log is not None:
        warnings += log.warnings + _python_missed(app.effective if app else [], log)
    elif outputs.log_problem:
        warnings.append(outputs.log_problem)
    return {
        "app_id": outputs.app_id,
        "app": AppInfo(
            wall_time_s=round(app.wall_s, 3) if app else None,
            elapsed_ms=aggregate(log)["elapsedTime"] if log is not None else None,
            job_time_ms=job_time_ms(log) if log is not None else None,
            returncode=app.returncode if app else None,
            spark_conf=(dict(log.spark_properties) or None) if log is not None else None,
            ui_url=app.ui_url if app else None,
        ),
        "effective_placement": list(app.effective) if app else [],
        "warnings": warnings,
        "artifacts": outputs.artifacts,
        "yarn": YarnApplication.of(outputs.app_id, log.executors) if log is not None else None,
    }


def _python_missed(effective: list, log: EventLog) -> list[str]:
    """Python workers that came and went unseen: with ``spark.python.worker.reuse=false``
    each Python task has a worker of its own, so fewer seen than such tasks means some lived
    between two readings."""
    reuse = log.spark_properties.get("spark.python.worker.reuse", "true").strip().lower()
    tasks = python_tasks(log)
    if reuse != "false" or not tasks or not effective:
        return []
    entries = [e if isinstance(e, dict) else records.dump(e) for e in effective]
    seen = sum(1 for e in entries for p in e.get("python") or () if p.get("role") == "worker")
    if seen >= tasks:
        return []
    return [
        f"Python workers: {seen} seen of the {tasks} that ran Python tasks "
        "(spark.python.worker.reuse=false starts one a task): the others lived between "
        "two readings, 0.5 s apart, so their placement and CPU time are not in the record"
    ]


def _iteration(outputs: AppOutputs, plan: RunPlan, answer: dict, shared: dict) -> RunResult:
    iteration, log, workload = answer["iteration"], outputs.log, plan.workload
    if workload.streaming:
        facts = _stream_facts(outputs.ledger, iteration, workload)
        group = answer["answer"].get("run_id")  # a query runs its batches as its run id
    else:
        facts, group = plan.facts, f"{JOB_GROUP_PREFIX}{iteration}"
    metrics: dict = {}
    streaming = None
    if log is not None:
        metrics = aggregate_job_group(log, group) or {}
        if workload.streaming and facts is not None:
            streaming = _stream_metrics(log, group, facts, workload)
    stages = job_group_stages(log, group) if log is not None else set()
    found = _measurements(outputs, stages, answer, metrics, plan.sustained_bandwidth_bps)
    affinity = None
    if outputs.affinity_records and log is not None:
        affinity = summarize_affinity(outputs.affinity_records, job_group_stages(log, group))
    if facts is None:
        passed, details = False, "the event source wrote no ledger entry for this run"
    else:
        verdict = workload.check(facts, answer["answer"])
        passed, details = verdict.passed, verdict.details
    status, reason = (Status.OK, None) if passed else (Status.FAILED, f"wrong answer: {details}")
    if passed and (lost := _lost_during(log, answer)):
        status, reason = (
            Status.DISTURBED,
            (
                f"executor {', '.join(lost)} was lost during this iteration ({lost[next(iter(lost))]}): "
                "Spark relaunched it, so its time is not a measurement of the configuration"
            ),
        )
    return RunResult(
        spec=_spec_of(plan, iteration),
        environment=plan.environment,
        status=status,
        failure_reason=reason,
        wall_time_s=round(answer["wall_s"], 3),
        metrics=metrics,
        streaming=streaming,
        measurements=found,
        affinity=affinity,
        check=CheckVerdict(passed=passed, details=details, answer=answer["answer"]),
        **shared,
    )


def _lost_during(log: EventLog | None, answer: dict) -> dict[str, str]:
    """Executors Spark removed for a failure while this iteration ran (ExecutorRemoved)."""
    if log is None or "started" not in answer:
        return {}
    start, end = answer["started"] * 1000, answer["ended"] * 1000
    return {
        executor: reason
        for executor, reason in log.executors_lost.items()
        if start <= (log.executors[executor].get("removed") or 0) <= end
    }


def _measurements(
    outputs: AppOutputs,
    stages: set[int] | None,
    answer: dict,
    metrics: dict,
    sustained_bps: float | None,
) -> Measurements | None:
    """The collectors' figures for one iteration's window, GC per executor, the CPU gap and
    the bandwidth estimate."""
    found: dict = {}
    if outputs.samples and "started" in answer:
        found = outputs.samples.summarize(answer["started"], answer["ended"])
    if outputs.log is not None:
        found["gc"] = gc_by_executor(outputs.log, stages)
        if _process_tree_asked(outputs.log):
            found["process_tree"] = process_tree_memory(outputs.log, stages)
    if not found:
        return None
    jvm_use = Measurements(found).jvm_use
    spark_cpu_ms = metrics.get("executorCpuTime")
    if jvm_use and spark_cpu_ms:
        os_cpu_s = sum(j.cpu_s for j in jvm_use)
        found["executor_cpu_gap"] = {
            "os_cpu_s": round(os_cpu_s, 2),
            "spark_executor_cpu_s": round(spark_cpu_ms / 1000, 2),
            "ratio": round(os_cpu_s / (spark_cpu_ms / 1000), 2),
            "note": "OS CPU time of the task-running JVMs (JIT, GC, Spark's own threads, and "
            "in local mode the driver) over Spark's executorCpuTime of their tasks",
        }
        python = [j.python_cpu_s for j in jvm_use if j.python_cpu_s is not None]
        if python:  # PySpark: the tasks' own work is in the workers, not executorCpuTime
            found["executor_cpu_gap"]["python_cpu_s"] = round(sum(python), 2)
            found["executor_cpu_gap"]["note"] += (
                "; python_cpu_s: the CPU time of their Python workers and daemons (other "
                "processes: in neither figure)"
            )
    found["memory_bandwidth"] = bandwidth_use(Measurements(found), sustained_bps)
    return Measurements(found)


def _process_tree_asked(log: EventLog) -> bool:
    """Spark's process-tree metrics were on (numaspark turns them on for PySpark)."""
    asked = log.spark_properties.get("spark.executor.processTreeMetrics.enabled", "")
    return asked.strip().lower() == "true"


def bandwidth_use(found: Measurements, sustained_bps: float | None) -> dict:
    """The run's memory bandwidth against the probed maximum, where counters allow an estimate.

    The estimate is LLC load misses x 64-byte lines per second (reads only, and
    prefetches not counted): a lower bound, enough to tell the regions apart.
    """

    misses, seconds = found.llc_load_misses, found.seconds
    if misses is None or not seconds:
        return {
            "unavailable": "no LLC-load-misses counter on this machine: bandwidth not estimated"
        }
    used = misses * 64 / seconds
    if sustained_bps is None:
        return {
            "estimate_bps": used,
            "unavailable": "run 'numaspark probe' to place it in a region",
        }
    return {
        "estimate_bps": used,
        "sustained_bps": sustained_bps,
        "share": round(used / sustained_bps, 4),
        "region": bandwidth_region(used, sustained_bps),
    }


def _stream_facts(ledger: list[dict], iteration: int, workload: Workload) -> dict | None:
    entry = next((e for e in ledger if e.get("connection") == iteration), None)
    return {**entry, "params": dict(workload.params)} if entry else None


def _stream_metrics(log: EventLog, run_id: str | None, facts: dict, workload: Workload) -> dict:
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


def assemble_application(outputs: AppOutputs, plan: RunPlan) -> list[RunResult]:
    """A user's application: its run directory holds one iteration, ``plan.first``. Its exit
    status (and its ``--check``) decide ok or failed; its time is ``plan.spec.timed``'s."""
    app, log = outputs.app, outputs.log
    if app is None:
        return []  # interrupted before spark-submit ended: nothing was measured
    shared = _shared(outputs)
    times: AppInfo = shared["app"]
    check = _read_check(outputs.run_dir)
    status, reason = Status.OK, None
    if app.failure is not None or (app.returncode != 0 and not app.stopped):
        status, reason = Status.FAILED, app.failure or f"exited with {app.returncode}"
    elif check is not None and not check.passed:
        status, reason = Status.FAILED, f"--check failed: {check.details}"
    window = {}
    if log is not None and log.start_time is not None:
        window = {
            "started": log.start_time / 1000,
            "ended": (log.end_time or log.start_time) / 1000,
        }
    metrics = aggregate(log) if log is not None else {}
    streaming = _application_stream(log, plan, shared["warnings"])
    affinity = summarize_affinity(outputs.affinity_records) if outputs.affinity_records else None
    return [
        RunResult(
            spec=_spec_of(plan, plan.first),
            environment=plan.environment,
            status=status,
            failure_reason=reason,
            wall_time_s=times.seconds(plan.spec.timed or "app"),
            metrics=metrics,
            streaming=streaming,
            affinity=affinity,
            measurements=_measurements(
                outputs, None, window, metrics, plan.sustained_bandwidth_bps
            ),
            check=check,
            **shared,
        )
    ]


def _read_check(run_dir: Path) -> CheckVerdict | None:
    path = run_dir / CHECK_FILE
    if not path.exists():
        return None
    with contextlib.suppress(OSError, ValueError, TypeError):
        return records.load(CheckVerdict, json.loads(path.read_text()))
    return CheckVerdict(passed=False, details=f"{path} is damaged")


def _application_stream(log: EventLog | None, plan: RunPlan, warnings: list[str]) -> dict | None:
    """A streaming application's rates and batch durations, from Structured Streaming's
    progress events (the query with the most batches). Its end-to-end latency needs the
    event times of a source numaspark controls, so it is not measured here."""
    if plan.spec.stream is None:
        return None
    progress = log.stream_progress if log is not None else []
    if not progress:
        warnings.append(
            "no Structured Streaming progress in the event log (a DStream "
            "application, or no batch ran): input rate, processing rate and batch "
            "durations cannot be measured"
        )
        return None
    runs = [p.get("runId") for p in progress]
    busiest = max(set(runs), key=runs.count)
    summary = summarize_stream(progress, busiest or "")
    for key in ("latencyMean", "latencyP95", "latencyMax", "drainMs", "behindBatches"):
        summary.pop(key, None)
    return summary
