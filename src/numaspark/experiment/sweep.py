"""Run an experiment: every configuration with its warm-ups and repetitions, resumable.

Each configuration is one application (see runner.py); its runs are stored as
they end, labelled with the configuration. ``resume`` skips configurations
whose measured runs are all stored and ok; one cut short runs again whole
(its application's warm-up is part of what it measures). Standalone
configurations with the same placement share one cluster (the run loop's
standalone target reuses it while the shape matches).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from numaspark.experiment.result import RunResult, measured
from numaspark.experiment.runner import Runner, TargetFactory
from numaspark.experiment.spec import Config, Experiment
from numaspark.experiment.store import ResultStore
from numaspark.topology import Topology


@dataclass
class SweepReport:
    ran: list[Config] = field(default_factory=list)
    resumed: list[Config] = field(default_factory=list)  # already stored, not run again
    over_budget: list[Config] = field(default_factory=list)
    results: list[RunResult] = field(default_factory=list)


def stored_configs(out: Path, repeat: int) -> set[str]:
    """Configuration keys with at least ``repeat`` measured ok runs stored in ``out``."""
    store = ResultStore(out)
    if not store.path.exists():  # nothing stored yet: --resume runs everything
        return set()
    counts: dict[str, int] = {}
    for r in measured(store.load()):
        if r.spec.config:
            counts[r.spec.config] = counts.get(r.spec.config, 0) + 1
    return {k for k, n in counts.items() if n >= repeat}


def run_sweep(
    experiment: Experiment,
    topology: Topology,
    out: Path,
    resume: bool = False,
    data_root: Path | None = None,
    on_start: Callable[[int, int, Config], None] | None = None,
    on_end: Callable[[Config, list[RunResult]], None] | None = None,
    say: Callable[[str], None] | None = None,
    on_result: Callable[[RunResult], None] | None = None,
    targets: TargetFactory | None = None,
    runner: Runner | None = None,
) -> SweepReport:
    """Every configuration of ``experiment`` not stored yet (``resume``), in a run loop of its
    own, or in ``runner``, one the caller keeps open across sweeps (a tune session: the
    cluster numaspark started serves every trial whose placement has its shape)."""
    if runner is not None:
        return _sweep(runner, experiment, out, resume, data_root, on_start, on_end)
    with Runner(topology, out, say, on_result, targets=targets) as runner:
        return _sweep(runner, experiment, out, resume, data_root, on_start, on_end)


def _sweep(
    runner: Runner,
    experiment: Experiment,
    out: Path,
    resume: bool,
    data_root: Path | None,
    on_start: Callable[[int, int, Config], None] | None,
    on_end: Callable[[Config, list[RunResult]], None] | None,
) -> SweepReport:
    report = SweepReport()
    started = time.monotonic()
    # after the runner stored what a killed numaspark left unstored: those count as done
    done = stored_configs(out, experiment.repeat) if resume else set()
    todo = [c for c in experiment.configs if c.key not in done]
    report.resumed = [c for c in experiment.configs if c.key in done]
    for index, config in enumerate(todo):
        if experiment.budget_s is not None and time.monotonic() - started > experiment.budget_s:
            report.over_budget = todo[index:]
            break
        if on_start:
            on_start(index, len(todo), config)
        results = runner.run(experiment.request(config, out, data_root))
        report.ran.append(config)
        report.results.extend(results)
        if on_end:
            on_end(config, results)
    return report
