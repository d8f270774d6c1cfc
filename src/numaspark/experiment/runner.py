"""The run loop: recover, then for each request place -> submit -> assemble -> store.

`Runner` owns the one supervised scope of processes (every JVM it starts is stopped
on success, failure, Ctrl-C and SIGTERM) and the targets a run may happen on; `run`
places a request (`RunRequest`, experiment/request.py) at its venue (experiment/placing.py),
has its target submit the application, assembles the records from what the application left behind
(experiment/assemble.py) and stores each as it is made. ``numaspark run``, sweeps and studies, characterize,
co-scheduling and the live tuner all run through it.

The warm-up and measured iterations run in one Spark application (see
workloads/harness.py): warm-ups then warm the JIT of the very JVMs that are
measured, and starting Spark is paid once. Each iteration is one `RunResult`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

from numaspark import records
from numaspark.collect import default_collectors
from numaspark.errors import NumasparkError
from numaspark.experiment.assemble import (
    ANSWERS_FILE,
    CHECK_FILE,
    AppRecord,
    RunPlan,
    assemble,
    mark_stored,
    read_outputs,
)
from numaspark.experiment.machine import environment
from numaspark.experiment.placing import Targets, after_run, place
from numaspark.experiment.request import RunRequest
from numaspark.experiment.result import CheckVerdict, RunResult, RunSpec
from numaspark.experiment.store import ResultStore
from numaspark.experiment.target import LocalTarget, StandaloneTarget, Target
from numaspark.placement import Binding, Mode, Placement
from numaspark.placement.plugin import RECORD_DIR, RECORD_DIR_KEY
from numaspark.probe import load_probe, sustained_bandwidth_bps
from numaspark.spark.affinity import require_jar
from numaspark.spark.app import AppRun
from numaspark.spark.home import check_java, spark_home, spark_version
from numaspark.spark.profiler import agent_library, agent_option, draw_flame_graphs
from numaspark.supervise.balancing import balancing
from numaspark.supervise.processes import ProcessTracker, supervised, wait_for
from numaspark.topology import Topology
from numaspark.workloads import Size, Workload
from numaspark.workloads.datagen import prepare_input
from numaspark.workloads.streamsource import PORT_FILE, source_argv

Progress = Callable[[str], None]
# another numaspark holding kernel.numa_balancing changed: wait this long for it, then refuse
BALANCING_WAIT_S = float(os.environ.get("NUMASPARK_BALANCING_WAIT", "60"))
TargetFactory = Callable[[ProcessTracker, Path, "Path | None"], dict]


def default_targets(
    tracker: ProcessTracker, clusters: Path, attached: Path | None
) -> dict[object, Target]:
    """Where runs happen on this machine: local mode, and a standalone cluster (started under
    ``clusters``, or the one left up in ``attached``)."""
    return {
        Mode.LOCAL: LocalTarget(tracker),
        Mode.STANDALONE: StandaloneTarget(tracker, clusters, attached=attached),
    }


class Runner:
    """The one run loop, and the supervised scope of every process a run starts.

    ``targets`` makes the targets a run may happen on (`default_targets`); the tests give
    one that replays recorded runs, so the loop is tested without Spark."""

    def __init__(
        self,
        topology: Topology,
        out: Path,
        progress: Progress | None = None,
        on_result: Callable[[RunResult], None] | None = None,
        cluster_dir: Path | None = None,
        targets: TargetFactory | None = None,
    ) -> None:
        self.make_targets = targets or default_targets
        self.topology = topology
        self.store = ResultStore(out)
        self.say = progress or (lambda message: None)
        self.on_result = on_result
        self.cluster_dir = cluster_dir
        self._scope = contextlib.ExitStack()
        self.tracker: ProcessTracker | None = None
        self.targets: Targets | None = None

    def __enter__(self) -> Runner:
        self.tracker = self._scope.enter_context(supervised())
        self.recover()
        root = self.store.directory / "clusters"
        self.targets = Targets(
            self.tracker, root, self.make_targets(self.tracker, root, self.cluster_dir)
        )
        self._scope.callback(self.targets.close)
        return self

    def __exit__(self, *exc: object) -> None:
        self._scope.close()

    def run(self, request: RunRequest) -> list[RunResult]:
        """Run ``request``; every run (warm-ups too) is stored in ``out`` as it ends. With
        ``numa_balancing`` set, the kernel's setting is switched for the run and put back."""
        if request.numa_balancing is None:
            return self._run(request)
        with balancing(request.numa_balancing, wait_s=BALANCING_WAIT_S, say=self.say):
            return self._run(request)

    def _run(self, request: RunRequest) -> list[RunResult]:
        workload, size = request.checked()
        check_java()  # the driver runs here whatever the target: one line, before any work
        target, placement = self.place(request)
        target.prepare(placement, self.say)
        if workload.application is not None:
            return self._run_application(target, request, workload, placement)
        facts = None
        if not workload.streaming:
            self.say(f"{workload.name}: preparing {size.label} input")
            input_dir, manifest = prepare_input(workload, size, request.seed, request.data_root)
            facts = manifest["facts"]
        else:
            input_dir, manifest = None, None
        run_plan = self._run_plan(
            request,
            workload,
            placement,
            target,
            base_spec(request, workload, size, manifest, placement, target.where),
            facts,
        )
        what = f"{request.warmup} warm-up + {request.repeat} measured iteration(s)"
        if workload.streaming:
            what += (
                f", each {request.stream_warmup_s:g} s warm-up + {request.duration_s:g} s "
                f"at {request.rate:g} events/s"
            )
        self.say(f"{request.label or workload.name}: {what} in one application")
        run_dir = self._new_run_dir()
        run_plan.save(run_dir, request.params)
        try:
            self._submit(target, request, workload, placement, input_dir, run_plan, run_dir)
        finally:
            # also on Ctrl-C or SIGTERM: the iterations that finished are kept
            results = self._store(run_dir, run_plan)
        return results

    def place(self, request: RunRequest) -> tuple[Target, Placement]:
        """The target ``request`` runs on and its placement there (experiment/placing.py);
        the machines it was planned on are saved beside the results."""
        placed = place(request, self.targets, self.topology, self.say, self._warn)
        for topology, host in placed.machines:
            self.store.save_topology(topology, *(host,) if host else ())
        return placed.target, placed.placement

    def _warn(self, message: str) -> None:
        self.say(f"warning: {message}")

    def _run_plan(
        self,
        request: RunRequest,
        workload: Workload,
        placement: Placement,
        target: Target,
        spec: RunSpec,
        facts: dict | None,
    ) -> RunPlan:
        return RunPlan(
            workload=workload,
            spec=spec,
            environment=environment(
                placement.topology_fingerprint or self.topology.fingerprint,
                spark_version(spark_home()),
            ),
            iterations=request.warmup + request.repeat,
            warmup=request.warmup,
            facts=facts,
            sustained_bandwidth_bps=_sustained_bandwidth(self.topology.fingerprint),
        )

    def _new_run_dir(self) -> Path:
        return (self.store.directory / "runs" / uuid.uuid4().hex[:12]).resolve()

    def _store(self, run_dir: Path, run_plan: RunPlan) -> list[RunResult]:
        """Assemble what ``run_dir`` holds and store each record as it is made."""
        results = assemble(read_outputs(run_dir), run_plan)
        for result in results:
            self.store.append(result)
            if self.on_result is not None:
                self.on_result(result)
        mark_stored(run_dir)
        return results

    def _run_application(
        self, target: Target, request: RunRequest, workload: Workload, placement: Placement
    ) -> list[RunResult]:
        """A user's application does its work once: each iteration is one application, on
        the same JVMs where the target keeps them (a standalone cluster)."""
        spec = base_spec(request, workload, None, None, placement, target.where)
        run_plan = self._run_plan(request, workload, placement, target, spec, None)
        self.say(
            f"{request.label or workload.name}: {request.warmup} warm-up + "
            f"{request.repeat} measured application(s)"
        )
        results: list[RunResult] = []
        for iteration in range(run_plan.iterations):
            plan_i = dataclasses.replace(run_plan, first=iteration)
            run_dir = self._new_run_dir()
            plan_i.save(run_dir, request.params)
            try:
                app = self._submit_application(
                    target, request, workload.application, placement, run_dir, plan_i
                )
                if iteration == 0:
                    for note in app.conf_notes:
                        self.say(f"warning: {note}")
            finally:
                results += self._store(run_dir, plan_i)
        return results

    def _submit_application(
        self,
        target: Target,
        request: RunRequest,
        application,
        placement: Placement,
        run_dir: Path,
        run_plan: RunPlan,
    ) -> AppRun:
        app = self._send(
            target,
            request,
            placement,
            (application.path, list(application.args)),
            run_dir,
            run_plan,
            app_conf=application.conf(),
            submit_options=application.passthrough(),
            stop_after_s=request.stop_after_s,
            say=self.say,
        )
        self._after(request, app, run_dir, own=True)
        if application.check:
            run_check(self.tracker, application.check, run_dir, request.timeout_s)
        return app

    def recover(self) -> list[RunResult]:
        """Store the finished iterations of applications whose numaspark was killed (SIGKILL)
        before it could store them: their answers and event logs are in ``runs/``."""
        runs = self.store.directory / "runs"
        recovered: list[RunResult] = []
        for run_dir in sorted(runs.iterdir()) if runs.is_dir() else ():
            plan = RunPlan.orphaned(run_dir)
            if plan is None:
                continue
            results = assemble(read_outputs(run_dir), plan)
            for result in results:
                self.store.append(result)
            mark_stored(run_dir)
            recovered += results
            if results and ResultStore.notify is not None:
                ResultStore.notify(
                    f"stored {len(results)} finished iteration(s) of {run_dir} "
                    "that a killed numaspark had not stored"
                )
        return recovered

    def _submit(
        self,
        target: Target,
        request: RunRequest,
        workload: Workload,
        placement: Placement,
        input_dir: Path | None,
        run_plan: RunPlan,
        run_dir: Path,
    ) -> None:
        if workload.streaming:
            input_dir = run_dir / "source"
            job_args = {
                **workload.params,
                "query": workload.name,
                "warmup_s": request.stream_warmup_s,
                "duration_s": request.duration_s,
            }
        else:
            job_args = workload.job_arguments(run_plan.facts)
        profiler = agent_library() if request.profile else None
        if profiler:
            (run_dir / "profiles").mkdir(parents=True, exist_ok=True)
        if workload.streaming:
            self._start_source(request, workload, input_dir, run_plan.iterations)
        job_args = [
            str(input_dir),
            str(run_dir / "output"),
            str(run_dir / ANSWERS_FILE),
            str(run_plan.iterations),
            json.dumps(job_args),
        ]
        app = self._send(
            target,
            request,
            placement,
            (workload.job_path, job_args),
            run_dir,
            run_plan,
            task_jvm_options=[agent_option(profiler, run_dir / "profiles")] if profiler else None,
        )
        self._after(request, app, run_dir, own=False)
        if profiler:
            draw_flame_graphs(run_dir / "profiles", {e.pid: e.jvm for e in app.effective})

    def _send(
        self,
        target: Target,
        request: RunRequest,
        placement: Placement,
        job: tuple[str | Path, list[str]],
        run_dir: Path,
        run_plan: RunPlan,
        **options,
    ) -> AppRun:
        """One application (``job``: its file and arguments) of ``request`` submitted to
        ``target`` with what every application gets (the spec's settings, the plugin's task
        records at core and PU level, the timeout, the collectors, the JVM options) and
        ``options``, its kind's own."""
        conf = dict(run_plan.spec.spark_conf)
        if placement.binding in (Binding.CORE, Binding.PU):  # the plugin records every task here
            require_jar()
            conf.setdefault(RECORD_DIR_KEY, str(run_dir / RECORD_DIR))
        return target.submit(
            placement,
            *job,
            run_dir,
            extra_conf=conf,
            timeout_s=request.timeout_s,
            collectors=default_collectors() if request.collect else None,
            interval_s=request.interval_s,
            java_options=_java_options(request, run_dir),
            **options,
        )

    def _after(self, request: RunRequest, app: AppRun, run_dir: Path, own: bool) -> None:
        """After an application: what its venue learned, and its record in ``run_dir`` (a
        user's application (``own``) also keeps Spark's notes on its settings, whether
        numaspark stopped it, and its UI's address)."""
        after_run(request.venue, run_dir, self.say, self._warn)
        notes = app.conf_notes if own else []
        AppRecord(
            returncode=app.returncode,
            wall_s=app.wall_s,
            app_id=app.app_id,
            failure=app.failure,
            effective=records.dump(app.effective),
            placement_warnings=[*app.placement_warnings, *notes],
            stopped=app.stopped if own else False,
            ui_url=app.ui_url if own else None,
        ).save(run_dir)

    def _start_source(
        self, request: RunRequest, workload: Workload, directory: Path, connections: int
    ) -> None:
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
        log = directory.parent / "event-source.log"
        source = self.tracker.start(argv, name="event-source", log=log)
        port = directory / PORT_FILE
        if not wait_for(lambda: port.exists() or not source.alive(), 30) or not port.exists():
            raise NumasparkError(f"the event source did not start: see {log}")


def run_workload(
    request: RunRequest,
    topology: Topology,
    progress: Progress | None = None,
    on_result: Callable[[RunResult], None] | None = None,
    targets: TargetFactory | None = None,
) -> list[RunResult]:
    """Run one request in a run loop of its own (``numaspark run``)."""
    with Runner(topology, request.out, progress, on_result, request.cluster_dir, targets) as runner:
        return runner.run(request)


def base_spec(
    request: RunRequest,
    workload: Workload,
    size: Size | None,
    manifest: dict | None,
    placement: Placement,
    where: str | None,
) -> RunSpec:
    """The spec every iteration of the request shares (assembly fills in which one it is)."""
    stream = None
    if workload.streaming:
        stream = {
            "rate": request.rate,
            "duration_s": request.duration_s,
            "warmup_s": request.stream_warmup_s,
        }
    elif workload.application is not None and request.stop_after_s is not None:
        stream = {"duration_s": request.stop_after_s}  # stopped after it, never by itself
    return RunSpec(
        workload=workload.name,
        category=workload.category,
        size=size.label if size else None,
        rows=size.rows if size else None,
        application=workload.application,
        timed=request.time if workload.application is not None else "iteration",
        seed=request.seed if workload.application is None else None,
        params=dict(workload.params),
        stream=stream,
        mode=request.layout.mode.value,
        binding=request.binding.value,
        mem_policy=placement.mem_policy.value if placement.mem_policy else None,
        numa_balancing=(
            None if request.numa_balancing is None else "on" if request.numa_balancing else "off"
        ),
        executors=len(placement.executors),
        cores_per_executor=placement.executors[0].cores,
        label=request.label,
        config=request.config_key,
        cluster=where,
        spark_conf=default_conf(request, workload, placement),
        placement=placement,
        dataset=(
            {k: manifest.get(k) for k in ("sha256", "bytes", "rows", "seed", "facts")}
            if manifest
            else None
        ),
    )


def default_conf(request: RunRequest, workload: Workload, placement: Placement) -> dict[str, str]:
    """The user's settings, and for streaming one shuffle partition per task slot unless set.

    Spark's default of 200 shuffle partitions means 200 state stores per batch: on
    a small machine that alone makes every batch take seconds, whatever the rate.
    """
    conf = dict(request.spark_conf)
    if workload.streaming:
        slots = sum(e.cores for e in placement.executors)
        conf.setdefault("spark.sql.shuffle.partitions", str(max(1, slots)))
    return conf


def _sustained_bandwidth(fingerprint: str) -> float | None:
    """The probed sustained memory bandwidth of this machine, when ``numaspark probe`` ran."""

    probe = load_probe(fingerprint)
    return sustained_bandwidth_bps(probe) if probe else None


def run_check(
    tracker: ProcessTracker, argv: tuple[str, ...], run_dir: Path, timeout_s: float
) -> CheckVerdict:
    """An application's ``--check``: ``argv`` (never a shell) with the run's directory in
    ``NUMASPARK_RUN_DIR``; its exit status is the verdict, kept in ``check.json``."""
    log = run_dir / "check.log"
    env = {**os.environ, "NUMASPARK_RUN_DIR": str(run_dir)}
    try:
        process = tracker.start(list(argv), name="check", log=log, env=env, cwd=Path.cwd())
    except OSError as exc:
        verdict = CheckVerdict(
            passed=False, details=f"--check could not start: {exc.strerror}", command=list(argv)
        )
    else:
        try:
            code = process.popen.wait(timeout=timeout_s)
            tracker.forget(process)
        except subprocess.TimeoutExpired:
            tracker.stop(process)
            code = None
        last = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        said = f": {last[-1].strip()[:300]}" if last else ""
        details = (
            f"timed out after {timeout_s:.0f} s" if code is None else f"exited with {code}{said}"
        )
        verdict = CheckVerdict(passed=code == 0, details=details, command=list(argv))
    (run_dir / CHECK_FILE).write_text(json.dumps(records.dump(verdict)))
    return verdict


def _java_options(request: RunRequest, run_dir: Path) -> list[str]:
    options = []
    if request.gc_log:  # one file per JVM (%p: its pid), unified logging (Java 9+)
        options.append(f"-Xlog:gc*:file={run_dir / 'gc-%p.log'}:time,uptime,level,tags")
    return options
