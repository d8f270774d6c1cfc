"""A recorded target: it replays the run directories recorded under tests/fixtures/runs
instead of starting Spark, so the run loop's own logic (iterations, warm-ups, sweeps,
resume, budget, cluster reuse, interruption, recovery) is tested with no JVM.

It answers the calls a real target answers (experiment/target.py): ``prepare`` "starts" a
cluster when the placement's shape changes (counted, so reuse is tested), ``submit``
copies what a recorded application left (app.json, answers, event log, samples) into the
run directory and says what spark-submit did, as a real one does.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from numaspark import records
from numaspark.experiment.assemble import ANSWERS_FILE, APP_FILE
from numaspark.readback.proc import EffectiveJvm
from numaspark.spark.app import AppRun, find_event_log

RUNS = Path(__file__).resolve().parent / "fixtures" / "runs"
SUITE = RUNS / "wordcount-core"  # wordcount, tiny, 1 warm-up + 2 measured, core-bound
APP_OK = RUNS / "app-squares"  # tests/apps/squares.py with N=1000
APP_FAILS = RUNS / "app-fails"  # the same with N=-5: a ValueError in the driver
JAR_OK = RUNS / "jar-squares"  # tests/apps/Squares.java as a JAR (Main-Class Squares), N=1000
JAR_FAILS = RUNS / "jar-fails"  # the same with N=-5: an IllegalArgumentException in the driver
# what is recorded, by the kind of application: its run that succeeds and its run with a
# negative N, which fails; any other kind is refused (a replay of another kind's recording
# would check only the argv)
RECORDINGS = {"squares.py": (APP_OK, APP_FAILS), ".jar": (JAR_OK, JAR_FAILS)}
JAR_CLASS = "Squares"  # the class the JAR recordings ran


class RecordedTarget:
    """Replays recordings; ``interrupt_after`` raises KeyboardInterrupt (a Ctrl-C) once that
    many applications were submitted, after the next one wrote its first answer."""

    def __init__(
        self, standalone: bool = False, interrupt_after: int | None = None, pace_s: float = 0.0
    ) -> None:
        self.standalone = standalone
        self.pace_s = pace_s  # each application "takes" this long (a loop of them is paced)
        self.interrupt_after = interrupt_after
        self.clusters_started = 0
        self.submitted: list[tuple[str, list[str]]] = []
        self.options: list[dict] = []
        self._shape: tuple | None = None
        self.closed = False

    def prepare(self, placement, say) -> None:
        if self.standalone and self._shape != placement.shape:
            self.clusters_started += 1
            self._shape = placement.shape

    def submit(self, placement, job, job_args, run_dir: Path, **options) -> AppRun:
        self.submitted.append((str(job), list(job_args)))
        time.sleep(self.pace_s)
        self.options.append(options)
        source = recording_for(str(job), list(job_args), options.get("submit_options", []))
        run_dir.mkdir(parents=True, exist_ok=True)
        if (source / "eventlog").is_dir():
            shutil.copytree(source / "eventlog", run_dir / "eventlog", dirs_exist_ok=True)
        else:
            (run_dir / "eventlog").mkdir(exist_ok=True)
        for name in ("collectors.jsonl", "spark-submit.log"):
            if (source / name).exists():
                shutil.copy(source / name, run_dir / name)
        if (source / ANSWERS_FILE).exists():
            self._answers(source, run_dir, int(job_args[3]))
        elif self._interrupted():  # a user's application: Ctrl-C before spark-submit ended
            raise KeyboardInterrupt
        app = json.loads((source / APP_FILE).read_text())
        event_log, app_id = find_event_log(run_dir / "eventlog")
        return AppRun(
            run_dir=run_dir,
            returncode=app["returncode"],
            wall_s=app["wall_s"],
            app_id=app_id,
            event_log=event_log,
            log=run_dir / "spark-submit.log",
            failure=app["failure"],
            effective=[records.load(EffectiveJvm, e) for e in app["effective"]],
        )

    def _answers(self, source: Path, run_dir: Path, iterations: int) -> None:
        lines = (source / ANSWERS_FILE).read_text().splitlines()[:iterations]
        if self._interrupted():
            (run_dir / ANSWERS_FILE).write_text(lines[0] + "\n")
            raise KeyboardInterrupt
        (run_dir / ANSWERS_FILE).write_text("".join(line + "\n" for line in lines))

    def _interrupted(self) -> bool:
        return self.interrupt_after is not None and len(self.submitted) > self.interrupt_after

    @property
    def where(self) -> str | None:
        return "recorded-cluster" if self.standalone else None

    def close(self) -> None:
        self.closed = True


def recording_for(job: str, job_args: list[str], submit_options: list[str] = ()) -> Path:
    """The recording that plays ``job``: the suite's wordcount, the user's squares.py or
    Squares JAR, each failing when its N is negative, as the real ones do."""
    if job.endswith("wordcount.py"):
        return SUITE
    kind = next((k for k in RECORDINGS if job.endswith(k)), None)
    if kind is None:
        raise AssertionError(f"nothing recorded plays {job}")
    if kind == ".jar" and submit_options != ["--class", JAR_CLASS]:
        raise AssertionError(f"the JAR recordings ran --class {JAR_CLASS}, not {submit_options}")
    ok, fails = RECORDINGS[kind]
    return fails if int(job_args[1]) < 0 else ok


def targets(local: RecordedTarget, standalone: RecordedTarget):
    """A `Runner` target factory that hands out these two."""
    from numaspark.placement import Mode

    return lambda tracker, clusters, attached: {Mode.LOCAL: local, Mode.STANDALONE: standalone}
