"""The search space (parameters and their values, the combinations that can run), the
objective a search asks, and what a search returns: its trials and the best of them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from numaspark.decide.steer import Observation
from numaspark.records import Shape

Params = dict[str, object]
# a run's value (None: the configuration could not run), or its Observation: the value and
# the readings that name the next axis (decide/steer.py)
Objective = Callable[[Params], float | Observation | None]


@dataclass
class Space:
    """Parameters and their values (in order); ``candidates``: the combinations that can run."""

    values: dict[str, list]
    candidates: list[tuple]
    _groups: dict = field(default_factory=dict, repr=False, compare=False)  # same_except's
    _ordered: dict = field(default_factory=dict, repr=False, compare=False)
    _positions: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def names(self) -> list[str]:
        return list(self.values)

    def params(self, candidate: tuple) -> Params:
        return dict(zip(self.names, candidate, strict=True))

    def ordered(self, name: str) -> bool:
        """Numeric parameters are searched in order; text ones as categories."""
        found = self._ordered.get(name)
        if found is None:
            found = self._ordered[name] = all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in self.values[name]
            )
        return found

    def same_except(self, candidate: tuple, columns: tuple[int, ...]) -> list[tuple]:
        """The candidates equal to ``candidate`` outside ``columns`` (indexes), in order."""
        groups = self._groups.get(columns)
        if groups is None:
            groups = {}
            for other in self.candidates:
                key = tuple(v for i, v in enumerate(other) if i not in columns)
                groups.setdefault(key, []).append(other)
            self._groups[columns] = groups
        return groups.get(tuple(v for i, v in enumerate(candidate) if i not in columns), [])

    def distance(self, a: tuple, b: tuple) -> float:
        # each value's position, once: list.index on every call was a third of a 22-knob search
        if not self._positions:
            self._positions.update(
                {n: {v: i for i, v in enumerate(vs)} for n, vs in self.values.items()}
            )
        total = 0.0
        for name, x, y in zip(self.names, a, b, strict=True):
            if x == y:
                continue
            values = self.values[name]
            if self.ordered(name) and len(values) > 1:
                where = self._positions[name]
                total += abs(where[x] - where[y]) / (len(values) - 1)
            else:
                total += 1.0
        return total


@dataclass
class Trial:
    number: int
    params: Params
    value: float | None
    source: str  # "prior", "tpe", "tpe (nearest)" - how it was chosen
    failure: str | None = None  # why it failed, one line (value None; None: not said)

    __json__: ClassVar[Shape] = Shape(omit_none=("failure",))


@dataclass
class TuneResult:
    trials: list[Trial] = field(default_factory=list)
    stopped: str = ""
    prior: str = ""  # which columns had a prior, on which machine
    # what the failures taught: a line per trial whose cluster refused or killed it
    learned: list[str] = field(default_factory=list)

    # ``tune --json`` (docs/schemas.md): the best configuration after the trials
    __json__: ClassVar[Shape] = Shape(
        computed=("best",), order=("trials", "best", "stopped", "prior", "learned")
    )

    @property
    def best(self) -> Trial | None:
        """The configuration with the lowest median over its trials (re-measured ones have
        several), as its first trial with that median."""
        runs: dict[tuple, list[Trial]] = {}
        for trial in self.trials:
            if trial.value is not None:
                runs.setdefault(tuple(sorted(trial.params.items(), key=str)), []).append(trial)
        if not runs:
            return None
        median = {k: float(np.median([t.value for t in v])) for k, v in runs.items()}  # type: ignore[misc]
        key = min(median, key=median.__getitem__)
        first = runs[key][0]
        return Trial(first.number, first.params, median[key], first.source)
