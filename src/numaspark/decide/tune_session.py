"""A tune session: the search ``numaspark tune`` asks for, built from its options, over a
recorded table (--replay) or by real runs of a workload at a venue.

It builds the search space, the objective each trial calls and the tuner's settings, and holds
one run loop for all the trials of real runs (a cluster numaspark started serves every trial
whose placement has its shape; it is restarted only when the shape changes); the CLI runs the
trials under its progress bar (cli/progress.py's ``run_tuner``) while the session is open. It prints nothing:
what it has to say goes through the ``note`` (a labelled line) and ``warn`` (warnings) the
CLI gives it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from numaspark.errors import UsageError
from numaspark.experiment.placing import balancing_refused
from numaspark.experiment.venue import Venue
from numaspark.topology import Topology
from numaspark.units import parse_duration

#: one labelled line for the user: a label ("not compared:") and its text
Note = Callable[[str, str], None]
#: warnings for the user, each said as one
Warn = Callable[[list[str]], None]


class TuneAsks(Protocol):
    """What a tune is asked for (the CLI's ``TuneOptions``): a replayed table's options, the
    search's, and its trials' (real runs); its workload's parameters and Spark settings, read,
    and its repetitions, checked, as the CLI reads and checks its options."""

    replay: Path | None
    minimize: str
    column: list[str] | None
    budget_time: str | None
    seed: int
    noise: float
    early_stop: bool
    size: str
    repeat: int
    warmup: int
    out: Path
    resume: bool
    data: Path | None
    time: str

    def check_repeat(self) -> None: ...

    def workload_params(self) -> dict[str, str]: ...

    def spark_conf(self) -> dict[str, str]: ...


@contextlib.contextmanager
def tune_search(
    options: TuneAsks,
    workload: str | None,
    venue: Venue,
    given: Topology | None,
    planned: Topology | None,
    topology_of: Callable[..., Topology],
    note: Note,
    warn: Warn,
) -> Iterator[tuple]:
    """The searches ``options`` ask for, over a --replay table or by real runs of
    ``workload`` at ``venue``, whose machine is ``planned`` (None with --replay): its
    contexts (`numaspark.decide.tune.Contexts`: a replayed table's columns that describe the
    job or its input are held fixed, one search per combination of their values; live runs
    are one search), each with its space and the objective a trial calls, and the tuner's
    settings (``tune``'s keywords), valid while the session is open (its run loop stops every
    JVM it started as it closes). ``given``: --xml's or --synthetic's machine, where it is not
    the cluster's (the venue holds that); ``topology_of`` reads the machine the options
    name."""
    # lazy: they bring pandas, which a command that does not need it never loads
    from numaspark.decide.tune import (
        CONTEXT,
        check_columns,
        context_columns,
        parse_columns,
        read_table,
        replay_objective,
        split,
    )
    from numaspark.decide.tune_runs import tune_machine
    from numaspark.experiment.runner import Runner

    replay = options.replay
    machine = tune_machine(workload, replay, given, topology_of, planned)
    budget_time = options.budget_time
    declared = parse_columns(options.column or [])
    search = dict(
        seed=options.seed,
        noise=options.noise,
        early_stop=options.early_stop,
        machine=machine,
        # the knobs' roles: a context column is no knob of any search
        columns={c: n for c, n in declared.items() if n != CONTEXT},
        time_budget_s=parse_duration(budget_time, "--budget-time") if budget_time else None,
    )
    if replay is not None:
        if options.resume:
            raise UsageError("--resume continues real runs stored in --out, not a --replay table")
        space, lookup = read_table(replay, options.minimize, skipped := [])
        warn(skipped)
        held = context_columns(space.names, check_columns(space, declared))
        yield split(space, replay_objective(lookup, space), held), search
        return
    with Runner(planned, options.out) as runner:
        space, objective, search["resumed"] = live_search(
            options, workload, planned, venue, note, runner
        )
        yield split(space, objective, {}), search


def live_search(
    options: TuneAsks, workload: str, planned: Topology, venue: Venue, note: Note, runner
) -> tuple:
    """Real runs of ``workload`` on ``planned`` (the machine of ``venue``) in ``runner``, the
    session's run loop: the space, the objective that runs a candidate, and an earlier tune's
    candidates (--resume)."""
    # lazy, as tune_search's: the tuner brings numpy and pandas, which other commands never load
    from numaspark.decide.tune_runs import (
        cluster_refusals,
        live_objective,
        live_space,
        resumed_trials,
    )

    options.check_repeat()
    # autonuma is one more binding where kernel.numa_balancing switches: here only
    cannot = balancing_refused(venue)
    if cannot is not None:
        note("not compared:", f"autonuma (the kernel's NUMA balancing): {cannot}")
    space, configs = live_space(
        planned,
        workload,
        options.size,
        options.workload_params(),
        options.spark_conf(),
        autonuma=cannot is None,
        local=venue.here,
        refuses=cluster_refusals(venue),
        refused=(refused := []),
    )
    if refused:  # bounded by what the cluster holds now, as each run is checked before it starts
        note(
            "not proposed:",
            f"{len(refused)} configuration(s) the cluster cannot hold now, e.g. {refused[0]}",
        )
    resumed = resumed_trials(configs, options.out, options.resume)
    objective = live_objective(
        configs,
        planned,
        options.out,
        options.repeat,
        options.warmup,
        options.data,
        time=options.time,
        venue=venue,
        runner=runner,
    )
    return space, objective, resumed
