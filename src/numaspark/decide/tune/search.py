"""The search and its phases: the informed start, the local moves from the best so far, then
the global steps from a local optimum, until the budget, the time or the model says stop."""

from __future__ import annotations

import collections
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from numaspark.decide.steer import hint, opposite
from numaspark.decide.tune.machine import Machine
from numaspark.decide.tune.measured import _Search
from numaspark.decide.tune.models import AdditiveModel, Prior, RuleModel
from numaspark.decide.tune.moves import Move, _as_move, _move_text, _shape_text, neighbours
from numaspark.decide.tune.rules import start_threads_per_core
from numaspark.decide.tune.space import Objective, Space, Trial, TuneResult
from numaspark.errors import UsageError

MIN_RUNS_TO_STOP = 6  # the model's leave-one-out error means little on fewer runs
# a space with at most this many configurations left is scored whole after the local moves:
# every one by its expected gain under the rules updated by the runs (a few milliseconds
# each); TPE's proposals sample near the region that paid and, on a small table, repeat it
ENUMERATE = 500


def check_search(budget: int, noise: float) -> None:
    """The search's own numbers, checked before any trial."""
    if budget < 1:
        raise UsageError("--budget must be at least 1 run")
    if not 0 <= noise < 1:
        raise UsageError(f"--noise {noise}: give a fraction like 0.05")


def tune(
    space: Space,
    objective: Objective,
    budget: int,
    seed: int = 0,
    noise: float = 0.05,
    early_stop: bool = True,
    time_budget_s: float | None = None,
    machine: Machine | None = None,
    proposals_per_trial: int = 32,
    on_trial: Callable[[Trial], None] | None = None,
    columns: dict[str, str] | None = None,
    resumed: Sequence[tuple] = (),
) -> TuneResult:
    """Search ``space`` for the smallest objective in at most ``budget`` runs (and, with
    ``time_budget_s``, start no run after that many seconds); ``columns`` declares what
    columns mean (column -> numaspark name, `parse_columns`); ``resumed``: candidates an
    earlier search measured, asked of ``objective`` first (which reads them back) and counted
    against the budget."""
    check_search(budget, noise)
    if not space.candidates:
        raise UsageError("the search space has no configuration that can run")
    rng = random.Random(seed)
    prior = Prior(space, machine, columns)
    result = TuneResult(prior=prior.describe())
    search = _Search(space, objective, result, on_trial, prior.roles)
    deadline = _Deadline(time_budget_s, time.monotonic())
    for candidate in resumed:  # an earlier tune's, where it stopped
        if len(result.trials) < budget and candidate in search.unseen:
            search.evaluate(candidate, "stored: measured by an earlier tune, read back")
    # 1. the informed start: the candidate the rules penalise least (ties: as told nothing
    # would order them, then by the seed)
    start = min(space.candidates, key=lambda c: (*prior.rank(c), rng.random()))
    if not result.trials:
        search.evaluate(start, "prior: " + _rules_line(prior, start))
    _local_moves(search, prior, budget, noise, rng, deadline)
    _global_steps(
        search, prior, budget, noise, rng, deadline, early_stop, seed, proposals_per_trial
    )
    if not result.stopped:
        result.stopped = f"budget: {budget} run(s)"
    elif not deadline.passed():  # stopped early, with time left: a tie for the best is re-measured
        search.remeasure_ties(budget, noise)
    return result


@dataclass(frozen=True)
class _Deadline:
    """A search's time budget: no run starts ``seconds`` after ``started`` (time.monotonic);
    ``seconds`` None: none."""

    seconds: float | None
    started: float

    def passed(self) -> bool:
        return self.seconds is not None and time.monotonic() - self.started > self.seconds

    def reason(self) -> str:
        """Why the search stopped, once it has passed."""
        return f"time budget: {self.seconds:.0f} s"


def _local_moves(
    search: _Search,
    prior: Prior,
    budget: int,
    noise: float,
    rng: random.Random,
    deadline: _Deadline,
) -> None:
    """2. Local moves from the best so far (coarse, then fine), until a local optimum: what
    the best run's readings favour, else along the axis the last move paid on (or back, if it
    cost), else the largest expected improvement under the rules updated by the runs so far."""
    space, result = search.space, search.result
    fine = False
    while len(result.trials) < budget:
        if deadline.passed():
            result.stopped = deadline.reason()
            break
        incumbent = search.incumbent()
        if incumbent is None:  # the start failed: the next best by the rules
            left = search.remaining()
            if not left:
                break
            search.evaluate(min(left, key=prior.rank), "prior (start failed)")
            continue
        model = RuleModel(prior, noise, search.pressure())
        model.fit(search.measured)
        options = _plausible_moves(search, prior, model, incumbent, noise, fine)
        if not options:
            if fine:
                break  # a local optimum: no neighbour left that could beat the best
            fine = True
            continue
        chosen = _steered(space, prior, search, incumbent, noise, fine, model)
        if chosen is None:
            chosen = _chosen_by_rules(search, model, options, incumbent, budget, rng)
        candidate, move, why = chosen
        if move is None:
            search.evaluate(candidate, f"every configuration left scored ({why})")
            continue
        search.evaluate(
            candidate,
            f"move: {_move_text(space, move, prior, candidate)} ({why})",
            origin=(incumbent, move),
        )


def _plausible_moves(
    search: _Search, prior: Prior, model: RuleModel, incumbent: tuple, noise: float, fine: bool
) -> list[tuple[tuple, Move]]:
    """The moves not yet run from the best and from every run within the noise of it (a tie
    is no evidence against its direction: the best of a few noisy runs is partly luck); a
    neighbour the updated rules are sure is worse (even 2 sd optimistic) is not run."""
    best = search.measured[incumbent]
    centres = sorted(
        (c for c, v in search.measured.items() if v <= best * (1 + noise)),
        key=search.measured.__getitem__,
    )
    return list(
        {
            c: (c, m)
            for centre in reversed(centres)
            for c, m in neighbours(search.space, centre, prior, fine)
            if c in search.unseen and model.plausible(c, best)
        }.values()
    )


def _chosen_by_rules(
    search: _Search,
    model: RuleModel,
    options: list[tuple[tuple, Move]],
    incumbent: tuple,
    budget: int,
    rng: random.Random,
) -> tuple[tuple, Move | None, str]:
    """The move (None: a configuration left, not a move) with the largest expected gain under
    the updated rules, and why.

    Where the budget could run every configuration there is no region to keep the search in:
    every one left competes, not only the neighbours (a sparse table's one-column moves land
    on arbitrary shapes). On a larger space, scored whole from one or two runs, the rules'
    uncertainty sends the search to the extremes."""
    best = search.measured[incumbent]
    pool: list[tuple[tuple, Move | None]] = list(options)
    if len(search.space.candidates) <= budget:
        moves = dict(options)
        pool = [
            (c, moves.get(c)) for c in search.remaining() if c in moves or model.plausible(c, best)
        ]
    (candidate, move), why = model.choose(
        pool, best, incumbent, len(search.measured), rng, key=lambda o: o[0]
    )
    return candidate, move, why


def _global_steps(
    search: _Search,
    prior: Prior,
    budget: int,
    noise: float,
    rng: random.Random,
    deadline: _Deadline,
    early_stop: bool,
    seed: int,
    proposals_per_trial: int,
) -> None:
    """3. From a local optimum: every configuration left scored where few are left, else TPE
    proposals that the additive model picks from; with ``early_stop``, stop when that model
    says nothing left can beat the best, 2 sd optimistic."""
    result = search.result
    while len(result.trials) < budget and not result.stopped:
        if deadline.passed():
            result.stopped = deadline.reason()
            break
        left = search.remaining()
        if not left:
            result.stopped = "every configuration that can run was measured"
            break
        if early_stop and _cannot_improve(search.space, search.measured, left, noise):
            best = min(search.measured.values())
            result.stopped = (
                f"early: no configuration left is predicted to beat the best "
                f"({best:.4g}), even 2 sd optimistic (sd at least the noise, "
                f"{noise:.0%})"
            )
            break
        if len(left) <= ENUMERATE:
            search.scored_step(left, prior, noise, rng)
        else:
            search.global_step(left, seed, proposals_per_trial, prior)


def _steered(
    space: Space,
    prior: Prior,
    search: _Search,
    incumbent: tuple,
    noise: float,
    fine: bool,
    model: RuleModel,
) -> tuple[tuple, Move, str] | None:
    """A move from the best that the runs themselves ask for: what the best run's readings
    favour (decide/steer.py); else, when the last run was a move, the same move again if it
    paid (doubling or halving along the axis that paid) or the way back from where it
    started if it cost. Each only where the rules as updated by the runs find it plausible
    (2 sd optimistic, better than the best); a move made again also only where they do not
    expect it to be worse than the best by more than the noise (a second halving of the
    threads can leave cores idle, which the rules price). None: nothing asks; the updated
    rules choose."""
    best = search.measured[incumbent]
    moves = {
        m: c
        for c, m in neighbours(space, incumbent, prior, fine)
        if c in search.unseen and model.plausible(c, best)
    }
    found = hint(search.observed.get(incumbent))
    if found is not None:
        for wanted in found.moves:
            move = _as_move(space, prior, wanted)
            if move in moves:
                return moves[move], move, f"the best run's readings: {found.reason}"
    last = search.result.trials[-1]
    origin = search.origin.get(tuple(last.params[n] for n in space.names))
    if origin is None or last.value is None or origin[0] not in search.measured:
        return None
    base, move = origin
    change = last.value / search.measured[base] - 1
    text = _move_text(space, move, prior, None)
    # a jump to the nearest shape (a sparse table) changed other columns too: not an axis
    again = (
        move[0] != "near"
        and move in moves
        and model.predict(moves[move])[0] < math.log(best) + math.log1p(noise)
    )
    if change < -noise and again:
        return moves[move], move, f"the last runs showed: {text} paid ({change:+.0%}): again"
    back = opposite(move)
    if change > noise and back is not None and base == incumbent and back in moves:
        why = f"the last runs showed: {text} cost ({change:+.0%}): the other way"
        return moves[back], back, why
    return None


def _rules_line(prior: Prior, candidate: tuple) -> str:
    rules = prior.rules(candidate)
    where = _shape_text(prior, candidate)
    if not rules:
        return "no rule applies (middle values)"
    line = "closest to the rules" + (
        f" (off: {', '.join(k for k, v in rules.items() if v > 0)})"
        if any(v > 0 for v in rules.values())
        else ""
    )
    if prior.machine.smt > 2:
        line += (
            f"; {start_threads_per_core(prior.machine):g} of {prior.machine.smt} threads "
            "per core: the middle of a wide SMT axis"
        )
    elif prior.machine.smt == 2 and prior.machine_given:
        line += "; two-way SMT: a second thread per core priced neither way before a run"
    return f"{where}, {line}" if where else line


def _cannot_improve(
    space: Space, measured: dict[tuple, float], left: list[tuple], noise: float
) -> bool:
    """True when the additive model, fitted to enough runs, puts every candidate left, even
    optimistically, no better than the best. Never while a candidate left has a value that
    fewer than two runs had: the model has no weight for a value never run, and the weight of
    a value run once is that run's alone, not told apart from its other values' (on a sparse
    table of node shapes, the one run of 64 GB was also the one run of 2 nodes)."""
    model = AdditiveModel(space)
    if len(measured) < MIN_RUNS_TO_STOP:
        return False
    runs = [collections.Counter(c[i] for c in measured) for i in range(len(space.names))]
    if any(runs[i][c[i]] < 2 for c in left for i in range(len(runs))):
        return False
    model.fit(measured)
    sigma = max(model.sigma, math.log1p(noise))
    threshold = math.log(min(measured.values()))
    return all(model.predict(c) - 2 * sigma >= threshold for c in left)
