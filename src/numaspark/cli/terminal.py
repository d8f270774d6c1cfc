"""The terminal a command talks to, and long work shown while it runs.

Results go to stdout, progress and warnings to stderr (so ``--json`` output and
redirected tables stay clean). Long work (experiments, co-scheduling, the tuner,
the probe) runs under a rich progress bar that says what runs now and how many
are left; an interrupted command says what it kept. cli/commands.py parses options and
calls these; the views themselves are in report/console.py.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rich import progress as bars
from rich.console import Console
from rich.markup import escape

from numaspark.errors import NumasparkError, UsageError
from numaspark.experiment.store import ResultStore
from numaspark.probe import run_probe
from numaspark.report import console as views
from numaspark.report.study import study_table
from numaspark.supervise import ledger


class Interrupted(Exception):
    """Ctrl-C or SIGTERM after every started process was stopped: exit 130."""


class _Bars(bars.Progress):
    """A progress display that leaves no bar behind when a user error ends the work: the
    error is then the one line the user reads."""

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None or not issubclass(kind, NumasparkError):
            super().__exit__(kind, value, traceback)
            return
        self.live.transient, quiet = True, self.console.quiet
        self.console.quiet = not self.console.is_terminal  # not even an empty line in a log
        try:
            super().__exit__(kind, value, traceback)
        finally:
            self.console.quiet = quiet


#: in a log (stderr not a terminal), long work says where it is at most this often
LOG_PROGRESS_EVERY_S = 60.0


class _LogLines:
    """The progress display's calls, written to a log as lines: the first change, then what
    runs at most once a minute (`LOG_PROGRESS_EVERY_S`), then the last. A live display in a log
    file would be one frame at the end, or control characters."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.tasks: list[bars.Task] = []
        self.written, self.line = -LOG_PROGRESS_EVERY_S, ""

    def __enter__(self) -> _LogLines:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            for task in self.tasks:
                self._write(task, force=True)

    def add_task(self, description: str, total: float | None = None) -> int:
        task = bars.Task(len(self.tasks), description, total, completed=0, _get_time=time.monotonic)
        self.tasks.append(task)  # written at its first change: a user's error may come first
        return task.id

    def update(self, task_id: int, **changes) -> None:
        task = self.tasks[task_id]
        for name in ("description", "completed", "total"):
            if name in changes:
                setattr(task, name, changes[name])
        self._write(task)

    def advance(self, task_id: int, advance: float = 1) -> None:
        self.tasks[task_id].completed += advance
        self._write(self.tasks[task_id])

    def _write(self, task: bars.Task, force: bool = False) -> None:
        now = time.monotonic()
        done = f"{task.completed:g}" + (f"/{task.total:g}" if task.total else "")
        line = f"[{done}] {task.description}"
        if line == self.line or (not force and now - self.written < LOG_PROGRESS_EVERY_S):
            return
        self.written, self.line = now, line
        self.console.print(f"{time.strftime('%H:%M:%S')} {line}", highlight=False, markup=False)


class Terminal:
    def __init__(self) -> None:
        self.out = Console()
        # stderr lines (progress, warnings, errors) are never wrapped: a log keeps each whole
        self.err = Console(stderr=True, soft_wrap=True)
        self._progress_said = -LOG_PROGRESS_EVERY_S

    def print(self, *renderables, **options) -> None:
        self.out.print(*renderables, **options)

    def json(self, data: object) -> None:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")

    def lines(self, lines: list[str]) -> None:
        for line in lines:
            self.out.print(line, highlight=False, soft_wrap=True)

    def note(self, label: str, text: str, colour: str = "yellow") -> None:
        """One labelled line on stderr: a warning, a skipped configuration, a failure."""
        self.err.print(f"[{colour}]{label}[/] {escape(text)}", highlight=False, soft_wrap=True)

    def warn(self, warnings: list[str]) -> None:
        for warning in views.warning_lines(warnings):
            self.note("warning:", warning)

    def failed(self, results: list, name: Callable = lambda r: f"run {r.run_id}") -> list:
        """Say why each failed run failed; the failed runs."""
        failed = [r for r in results if not r.ok and r.status != "disturbed"]
        for r in results:
            if r.status == "disturbed":  # a right answer, timed while Spark replaced an executor
                self.note(f"{name(r)} not counted:", str(r.failure_reason))
        for r in failed:
            self.note(f"{name(r)} failed:", str(r.failure_reason), "red")
        return failed

    def say(self, message: str) -> None:
        """One timestamped line on stderr; a running application's progress (``progress:``)
        at most once a minute in a log (stderr not a terminal)."""
        if message.startswith("progress:") and not self.err.is_terminal:
            if time.monotonic() - self._progress_said < LOG_PROGRESS_EVERY_S:
                return
            self._progress_said = time.monotonic()
        self.err.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {escape(message)}", highlight=False)

    def progress(self, remaining: bool = False, thread: bool = True) -> bars.Progress | _LogLines:
        """What runs now, how many of how many, the time so far (and the time left): a live
        display on a terminal, one line a minute in a log. ``thread`` False: no thread redraws
        it (work that forks worker processes), each update given ``refresh=True`` does."""
        if not self.err.is_terminal:
            return _LogLines(self.err)
        columns = [
            bars.TextColumn("{task.description}"),
            bars.BarColumn(),
            bars.MofNCompleteColumn(),
            bars.TimeElapsedColumn(),
        ]
        if remaining:
            columns.append(bars.TimeRemainingColumn())
        return _Bars(*columns, console=self.err, transient=False, auto_refresh=thread)

    def main(self, app) -> int:
        """Run the typer ``app``; its exit code. Usage errors keep typer's form (usage, a hint)
        and end with one line that says what was wrong (exit 2); ours are one line on stderr,
        never a traceback; a path that cannot be read or written is one line (exit 2); Ctrl-C
        and SIGTERM exit 130."""
        import typer

        # click's base of usage errors; typer exports its subclasses, not the base itself
        ClickException = next(
            c
            for c in typer.BadParameter.__mro__  # noqa: N806
            if c.__name__ == "ClickException"
        )

        ResultStore.notify = lambda note: self.note("warning:", note)
        ledger.notify = lambda note: self.note("cleaned up:", note)
        try:
            code = app(standalone_mode=False)
        except ClickException as exc:
            exc.show()  # "Usage: ...", "Try ... --help", then "Error: <what was wrong>"
            return exc.exit_code
        except NumasparkError as exc:
            self.error(str(exc))
            return exc.exit_code
        except OSError as exc:  # an output path not writable, a directory where a file goes
            where = f"{exc.filename}: " if exc.filename else ""
            self.error(f"{where}{exc.strerror or exc}: give a path this user can read or write")
            return 2
        except Interrupted:  # what was stopped and kept is said already
            return 130
        except (KeyboardInterrupt, typer.Abort):
            self.err.print("Interrupted.")
            return 130
        return code if isinstance(code, int) else 0

    def error(self, message: str) -> None:
        # escaped: a message that names "[cluster]" or "[[workloads]]" is not rich's markup
        self.err.print(f"[bold red]Error:[/] {escape(message)}", highlight=False, soft_wrap=True)

    @contextlib.contextmanager
    def interruptible(self, out: Path | None) -> Iterator[None]:
        """Ctrl-C or SIGTERM: every started JVM is already stopped (the run loop's scope);
        say what was kept. ``out`` is where runs are stored; None when a command stores none."""

        try:
            yield
        except KeyboardInterrupt:
            if out is None:
                self.err.print("Interrupted: every launched process stopped")
            else:
                store = ResultStore(out)
                self.err.print(
                    f"Interrupted: every Spark JVM stopped; {store.count()} finished "
                    f"run(s) kept in {store.path}"
                )
            raise Interrupted from None


# --- long work ------------------------------------------------------------------------------


def run_experiment(
    term: Terminal, experiment, topology, out: Path, resume: bool, data: Path | None
) -> list:
    """Every configuration of ``experiment`` under a progress bar that says which one runs and
    what it does now; configurations that cannot run here are said first. The runs of this
    invocation, and the stored runs of the configurations ``resume`` skipped."""
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.experiment.sweep import run_sweep

    for config, reason in experiment.skipped:
        term.note("skipped", f"{config.label}: {reason}")
    if not experiment.configs:
        where = experiment.venue.name
        raise UsageError(f"no configuration of this experiment can run on {where} (see above)")
    with term.interruptible(out), term.progress(remaining=True) as bar:
        task = bar.add_task("starting", total=len(experiment.configs))
        now = {"label": "", "config": ""}

        def on_start(index: int, total: int, config) -> None:
            now["label"] = f"{config.workload} {config.label}"
            now["config"] = f"{config.label}: "
            bar.update(task, description=now["label"])

        def say(message: str) -> None:
            # the run loop names the configuration itself in some lines: said once, not twice
            said = message.removeprefix(now["config"])
            bar.update(task, description=f"{now['label']}: {said}")

        report = run_sweep(
            experiment,
            topology,
            out,
            resume=resume,
            data_root=data,
            on_start=on_start,
            on_end=lambda config, results: bar.advance(task),
            say=say,
        )
        bar.update(task, completed=len(experiment.configs), description="done")
    if report.resumed:
        term.print(f"{len(report.resumed)} configuration(s) already stored in {out}: not run again")
    for config in report.over_budget:
        term.note("over budget, not run:", config.label)
    kept = {c.key for c in report.resumed}
    earlier = [r for r in ResultStore(out).load() if r.spec.config in kept] if kept else []
    return earlier + report.results


def show_study(
    term: Terminal, experiment, out: Path, results: list, title: str, baseline: str | None = None
) -> dict[str, float]:
    """The table of every stored run of ``experiment`` in ``out``; the median per label."""

    store = ResultStore(out)
    table, warnings, medians = study_table(experiment, store.load(), title, baseline)
    term.print(table)
    term.warn(warnings)
    term.failed(results, lambda r: r.spec.label)
    term.print(f"results: {store.path.resolve()}")
    return medians


def show_runs(
    term: Terminal,
    results: list,
    title: str,
    streaming: bool = False,
    name: Callable = lambda r: f"run {r.run_id}",
) -> list:
    """The comparison (or streaming) table of ``results``, their warnings, flame graphs and
    failures; the failed runs."""
    # lazy: it brings numpy, which a command that does not need it never loads
    from numaspark.report.metrics import comparison_table, stream_table

    table, warnings = comparison_table(results, title=title)
    term.print(stream_table(results, title=title) if streaming else table)
    term.warn(warnings + sorted({w for r in results for w in r.warnings}))
    term.lines(
        [
            f"flame graph: {g}"
            for g in sorted({g for r in results for g in r.artifacts.flame_graphs})
        ]
    )
    return term.failed(results, name)


def show_launch(term: Terminal, record: dict, out: Path, as_json: bool) -> list[dict]:
    """Where each launched process ran (or the record as JSON); why any failed. The failed."""
    if as_json:
        term.json(record)
    else:
        term.print(views.launch_view(record))
        term.print(f"record: {(out / 'launch.json').resolve()}", highlight=False)
    failed = [p for p in record["processes"] if not p["ok"]]
    for entry in failed:
        term.note(
            f"{entry['name']} {entry['status']}:",
            f"{entry.get('error', '')} (log {entry['log']})",
            "red",
        )
    return failed


def show_stored(term: Terminal, stored: list) -> None:
    """Every stored run, then the configurations compared (streaming runs by their windows)."""
    # lazy: it brings numpy, which a command that does not need it never loads
    from numaspark.report.metrics import comparison_table, runs_table, stream_table

    if not stored:
        raise UsageError("no runs are stored there yet (its results.jsonl is empty)")
    term.print(runs_table(stored))
    table, warnings = comparison_table([r for r in stored if not r.streaming])
    term.print(table)
    if any(r.streaming for r in stored):
        term.print(stream_table(stored, title="Streaming runs: their measured windows"))
    term.warn(warnings)


def run_cosched(
    term: Terminal,
    topology,
    workloads: list[str],
    size: str,
    window: tuple[float, float, float],
    out: Path,
    data: Path | None,
    by: str,
    hosts=None,
) -> list[dict]:
    """Co-scheduling rounds under a progress bar (each round lasts ``window``: warm-up, window,
    cool-down), here or on ``hosts`` (experiment/cosched.py's `OnHosts`); the rows stored in
    ``out``/cosched.jsonl."""
    # lazy: it brings pandas, which a command that does not need it never loads
    from numaspark.experiment.cosched import cosched

    with term.interruptible(out), term.progress() as bar:
        task = bar.add_task("starting", total=None)
        lasts = f"{sum(window):.0f} s"

        def on_round(number: int, total: int, label: str) -> None:
            bar.update(task, total=total, completed=number, description=f"{label}: {lasts}")

        def say(message: str) -> None:  # a cluster of a round starting on the hosts
            bar.update(task, description=message)

        rows = cosched(
            topology,
            workloads,
            size,
            window,
            out,
            data,
            by,
            on_round=on_round,
            hosts=hosts,
            say=say,
        )
        bar.update(task, completed=bar.tasks[0].total, description="done")
    return rows


def run_tuner(
    term: Terminal, space, objective, budget: int, label: str, out: Path | None, **search
) -> object:
    """The tuner's trials under a progress bar (``out``: where live trials store their runs;
    None when replaying a table)."""
    # lazy: it brings numpy, which a command that does not need it never loads
    from numaspark.decide.tune import check_search, tune

    check_search(budget, search.get("noise", 0.05))
    with term.interruptible(out), term.progress() as bar:
        task = bar.add_task(f"tuning {label} ({len(space.candidates)} candidates)", total=budget)

        def on_trial(trial) -> None:
            bar.advance(task)
            bar.update(task, description=f"trial {trial.number}: {trial.value or 'failed'}")

        return tune(space, objective, budget, on_trial=on_trial, **search)


def run_probes(term: Terminal, commands: list) -> dict:
    """Each (CPU node, memory node) probe under a progress bar; what they found."""

    with term.progress() as bar:
        task = bar.add_task("probing", total=len(commands))
        found = run_probe(
            commands,
            on_progress=lambda i, total, c: bar.update(
                task,
                completed=i - 1,
                description=f"{c.kind} CPUs node {c.cpu_node} -> memory node {c.mem_node}",
            ),
        )
        bar.update(task, completed=len(commands))
    return found


def counted(term: Terminal, description: str, work: Callable) -> object:
    """``work(progress)`` under a progress bar that appears at its first ``progress(done,
    total)`` (none when there is nothing to count) and is redrawn by those calls: no thread
    runs beside work that forks worker processes."""
    with term.progress(remaining=True, thread=False) as bar:
        task: list[int] = []

        def progress(done: int, total: int) -> None:
            if not task:
                task.append(bar.add_task(description, total=total))
            bar.update(task[0], completed=done, total=total, refresh=True)

        return work(progress)
