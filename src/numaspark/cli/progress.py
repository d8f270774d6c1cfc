"""Long work under the terminal's progress bars, and what it leaves to show.

Experiments, co-scheduling, the tuner, the probe and the reading of many event logs run
under a rich progress bar that says what runs now and how many are left; an interrupted
command says what it kept. The step modules of cli/ parse options and call these with
the `Terminal`; the views themselves are in report/console.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from numaspark.cli.terminal import Terminal
from numaspark.errors import UsageError
from numaspark.experiment.store import ResultStore
from numaspark.probe import run_probe
from numaspark.report import console as views
from numaspark.report.study import study_table


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
    if streaming or table.row_count:  # no empty table: a run that failed says so below
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
    if table.row_count:
        term.print(table)
    elif not any(r.streaming for r in stored):  # no empty table: say why
        term.print(
            "Comparison: nothing to compare (no measured run ended ok: each failed, or was a "
            "warm-up)",
            highlight=False,
        )
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
