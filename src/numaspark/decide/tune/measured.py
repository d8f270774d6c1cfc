"""What a search has measured, and the two ways it picks the next run from a local optimum
(every configuration left scored, or TPE's proposals); what a refused or killed run implies
about the configurations left."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np

from numaspark.decide.steer import Observation, pressure
from numaspark.decide.tune.models import AdditiveModel, Prior, RuleModel
from numaspark.decide.tune.moves import Move
from numaspark.decide.tune.space import Objective, Space, Trial, TuneResult

MIN_RUNS_TO_MODEL = 3  # from here the model picks among several TPE proposals


class _Search:
    """What has been measured, and the two ways to pick the next run."""

    def __init__(
        self,
        space: Space,
        objective: Objective,
        result: TuneResult,
        on_trial: Callable[[Trial], None] | None,
        roles: dict[str, str] | None = None,
    ) -> None:
        self.space, self.objective, self.result, self.on_trial = space, objective, result, on_trial
        self.roles = roles or {}  # column -> numaspark name (what a refusal's rule reads)
        self.measured: dict[tuple, float] = {}  # the median of each measured candidate
        self.values: dict[tuple, list[float]] = {}
        self.failed: set[tuple] = set()
        self.unseen = set(space.candidates)
        self.observed: dict[tuple, Observation] = {}  # the last readings of each candidate
        self.origin: dict[tuple, tuple[tuple, Move]] = {}  # a moved-to candidate: from, how
        self.history: list[tuple[dict, float | None]] = []  # value indexes and value (or None)

    def remeasure_ties(self, budget: int, noise: float) -> None:
        """Runs left when the search stopped: if the runner-up is within the noise of the best,
        both are measured once more (the best first) and judged by their medians, so the
        answer is not one lucky run."""
        ranked = sorted(self.measured, key=self.measured.__getitem__)
        if len(ranked) < 2 or self.measured[ranked[1]] > self.measured[ranked[0]] * (1 + noise):
            return
        tie = f"re-measure: within the noise ({noise:.0%}) of the other"
        for candidate in ranked[:2]:
            if len(self.result.trials) < budget and len(self.values[candidate]) == 1:
                self.evaluate(candidate, tie)
        self.result.stopped += "; the best two were within the noise: re-measured"

    def pressure(self) -> str:
        """Why a measured run's readings show memory pressure ("": none did)."""
        return next((found for c in self.measured if (found := pressure(self.observed.get(c)))), "")

    def incumbent(self) -> tuple | None:
        return min(self.measured, key=self.measured.__getitem__) if self.measured else None

    def remaining(self) -> list[tuple]:
        return [c for c in self.space.candidates if c in self.unseen]

    def evaluate(
        self, candidate: tuple, source: str, origin: tuple[tuple, Move] | None = None
    ) -> None:
        space = self.space
        found = self.objective(space.params(candidate))
        failure = refused = None
        if isinstance(found, Observation):
            self.observed[candidate] = found
            value, failure, refused = found.value, found.failure, found.refused
        else:
            value = found
        trial = Trial(len(self.result.trials) + 1, space.params(candidate), value, source, failure)
        self.result.trials.append(trial)
        self.unseen.discard(candidate)
        if origin is not None:
            self.origin[candidate] = origin
        index = self._index(candidate)
        if value is None or not math.isfinite(value) or value <= 0:
            self.failed.add(candidate)
            self.history.append((index, None))
            self._refused(trial, candidate, refused)
        else:
            self.values.setdefault(candidate, []).append(value)
            self.measured[candidate] = float(np.median(self.values[candidate]))
            self.history.append((index, value))
        if self.on_trial:
            self.on_trial(trial)

    def _index(self, candidate: tuple) -> dict[str, int]:
        """Each value's position among its column's values (how TPE is told a candidate)."""
        return {
            n: self.space.values[n].index(v)
            for n, v in zip(self.space.names, candidate, strict=True)
        }

    def _refused(self, trial: Trial, candidate: tuple, kind: str | None) -> None:
        """A configuration the cluster refused (``resources``) or killed for its memory
        (``memory``): every configuration left that asks it at least as much is left out too
        and told to TPE as failed, never proposed; said in ``result.learned``."""
        if kind is None:
            return
        implied = [c for c in self.remaining() if asks_as_much(self, c, candidate, kind)]
        if not implied:
            return
        for other in implied:
            self.unseen.discard(other)
            self.failed.add(other)
            self.history.append((self._index(other), None))
        what = "refused its executors" if kind == "resources" else "killed or lost its executors"
        self.result.learned.append(
            f"trial {trial.number}: the cluster {what}; left out {len(implied)} configuration(s) "
            f"that ask as much ({_demand_text(self, kind)})"
        )

    def scored_step(
        self, left: list[tuple], prior: Prior, noise: float, rng: random.Random
    ) -> None:
        """Every configuration left, scored: the one with the largest expected improvement
        over the best under the rules updated by every run (their uncertainty included, so a
        value never run, far along a trend or an axis nothing has moved, still scores)."""
        model = RuleModel(prior, noise, self.pressure())
        model.fit(self.measured)
        best = min(self.measured.values())
        chosen, why = model.choose(left, best, self.incumbent(), len(self.measured), rng)
        self.evaluate(chosen, f"every configuration left ({len(left)}) scored: {why}")

    def global_step(
        self, left: list[tuple], seed: int, proposals_per_trial: int, prior: Prior
    ) -> None:
        """TPE (optuna), told every result, proposes; the additive model picks the proposal
        with the lowest optimistic prediction. A proposal that cannot run or was measured is
        replaced by the nearest candidate left (the rules' favourite among equals)."""
        import optuna  # lazy: a search that ends in its local phase never needs it

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        space = self.space
        distributions = {
            name: optuna.distributions.IntDistribution(0, len(values) - 1)
            if space.ordered(name) and len(values) > 1
            else optuna.distributions.CategoricalDistribution(list(range(len(values))))
            for name, values in space.values.items()
        }
        sampler = optuna.samplers.TPESampler(
            seed=seed * 100_003 + len(self.result.trials), n_startup_trials=0, multivariate=True
        )
        study = optuna.create_study(direction="minimize", sampler=sampler)
        fail = optuna.trial.TrialState.FAIL
        study.add_trials(
            [
                optuna.trial.create_trial(
                    params=index,
                    distributions=distributions,
                    **({"value": value} if value is not None else {"state": fail}),
                )
                for index, value in self.history
            ]
        )
        proposals: list[tuple[tuple, str]] = []
        count = proposals_per_trial if len(self.measured) >= MIN_RUNS_TO_MODEL else 1
        for _ in range(count):
            asked = study.ask(distributions)
            wanted = tuple(space.values[n][asked.params[n]] for n in space.names)
            # closed as FAIL (which TPE ignores; PRUNED would count it among the bad trials)
            study.tell(asked, state=fail)
            if wanted in self.unseen:
                proposals.append((wanted, "tpe"))
            else:
                nearest = min(
                    left, key=lambda c, w=wanted: (space.distance(c, w), prior.penalty[c])
                )
                proposals.append((nearest, "tpe (nearest)"))
        if len(proposals) == 1 or len(self.measured) < MIN_RUNS_TO_MODEL:
            self.evaluate(*proposals[0])
            return
        model = AdditiveModel(space)
        model.fit(self.measured)
        sigma = model.sigma if math.isfinite(model.sigma) else 1.0
        chosen = min(proposals, key=lambda p: model.predict(p[0]) - sigma)  # optimistic pick
        self.evaluate(chosen[0], chosen[1] + " + model")


# what a configuration asks of the cluster, by the columns' roles: more executors, wider
# ones, more task threads. A refusal (``resources``) also holds for more memory each; a kill
# for memory (``memory``) for less memory each and fewer tasks (more data per task)
_ASKS_MORE = ("executors", "executors_per_node", "cores_per_executor", "threads_per_core", "slots")
_MORE = {"resources": ("memory",), "memory": ()}
_LESS = {"resources": (), "memory": ("partitions_per_slot", "partitions", "memory")}


def asks_as_much(search: _Search, other: tuple, failed: tuple, kind: str) -> bool:
    """Whether ``other`` asks the cluster at least what ``failed`` asked, refused or killed
    for ``kind``: as many executors or more, each as wide or wider, in the same mode (and the
    memory and tasks `_MORE` and `_LESS` say). Columns without such a role (binding, a table's
    own) do not matter; a space without executors or cores implies nothing."""
    roles = {r: search.space.names.index(c) for c, r in search.roles.items()}
    if not any(r in roles for r in _ASKS_MORE):
        return False
    if "mode" in roles and other[roles["mode"]] != failed[roles["mode"]]:
        return False
    more = [roles[r] for r in (*_ASKS_MORE, *_MORE[kind]) if r in roles]
    less = [roles[r] for r in _LESS[kind] if r in roles]
    return all(_at_least(other[i], failed[i]) for i in more) and all(
        _at_least(failed[i], other[i]) for i in less
    )


def _at_least(a: object, b: object) -> bool:
    """a >= b for numbers; other values (a table's "4g") only when equal."""
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return a >= b if numbers else a == b  # type: ignore[operator]


def _demand_text(search: _Search, kind: str) -> str:
    """The columns `asks_as_much` read, in words."""
    roles = {r: c for c, r in search.roles.items()}
    more = [roles[r] for r in (*_ASKS_MORE, *_MORE[kind]) if r in roles]
    less = [roles[r] for r in _LESS[kind] if r in roles]
    return f"as many {', '.join(more)} or more" + (
        f", as many {', '.join(less)} or fewer" if less else ""
    )
