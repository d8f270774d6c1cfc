"""The tuner: find a good configuration in few real runs, on a machine it has never seen.

The search space is a table of parameters with a few discrete values each (layout, binding,
parallelism, or any column of a recorded table); not every combination can run. The method
(docs/experiments.md, "How the tuner chooses", has the studies' numbers):

1. **An informed start.** The studies' rules (decide/prior.py), in the machine's terms
   (threads per core, executors per node, cores per executor against the node), cost every
   candidate in log-time; the cheapest is run first (told a machine, candidates it costs
   alike go in the order told nothing would take). Columns the rules do not know are said.
2. **Local moves.** From the best so far, and from every run within the noise of it: twice
   or half the executors or the cores per executor, or the same threads shaped otherwise;
   other columns one value either way (on a sparse table, the nearest configuration with
   that value) or twice or half a numeric one; then single steps of every column. The next run is
   the neighbour with the largest expected improvement under the rules *updated by every
   run* (`RuleModel`: Bayesian linear regression, the rules' weights as its prior), so
   directions that paid are followed; a neighbour the updated rules put above the best even
   2 sd optimistically is not run. Where the budget could run the whole table, every
   configuration left competes, not only the neighbours.
3. **From a local optimum,** every configuration left (up to 500) is scored by its expected
   improvement under the updated rules; on a larger space TPE (optuna) proposes over the
   whole space and an additive model of the results (`AdditiveModel`) picks the proposal
   with the lowest optimistic prediction. The tuner stops early when that model says nothing
   left can beat the best even 2 sd optimistic, and only once every value left has been run
   at least twice.
4. **Noise.** No configuration is run twice while searching; when the search stops with runs
   left and the runner-up is within the noise of the best, both are run once more and judged
   on medians.

`tune` takes any objective: `replay_objective` looks values up in a recorded table (to compare
strategies offline: bench/tune_replay.py), the CLI's live objective runs Spark and stores every
trial as a normal run.
"""

from __future__ import annotations

import collections
import itertools
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, TypeVar

import numpy as np

from numaspark.decide.prior import (
    MEMORY,
    MEMORY_PRESSURE,
    NO_ROLE,
    SYNONYMS,
    UNKNOWN_SD,
    Machine,
    canonical,
    features,
    guessed_roles,
    layout_of,
    penalties,
    roles,
    shape,
    start_threads_per_core,
    table_machine,
)
from numaspark.decide.steer import Observation, hint, opposite, pressure
from numaspark.errors import UsageError
from numaspark.records import Shape

Params = dict[str, object]
MIN_RUNS_TO_STOP = 6  # the model's leave-one-out error means little on fewer runs
TREND_SD = 0.3  # a column no rule knows: how much a doubling may cost either way (log-time)
MIN_RUNS_TO_MODEL = 3  # from here the model picks among several TPE proposals
# a space with at most this many configurations left is scored whole after the local moves:
# every one by its expected gain under the rules updated by the runs (a few milliseconds
# each); TPE's proposals sample near the region that paid and, on a small table, repeat it
ENUMERATE = 500
# a run's value (None: the configuration could not run), or its Observation: the value and
# the readings that name the next axis (decide/steer.py)
Objective = Callable[[Params], float | Observation | None]
T = TypeVar("T")


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


class Prior:
    """The studies' rules (decide/prior.py) applied to a space: which columns they know, on
    which machine, and each candidate's penalty (log-time; the lowest is the start)."""

    def __init__(
        self, space: Space, machine: Machine | None = None, columns: dict[str, str] | None = None
    ) -> None:
        self.space = space
        self.declared = check_columns(space, columns or {})
        self.guessed = self._guessed()
        self.roles = roles(space.names, {**self.guessed, **self.declared})
        # the mean log2 of each positive numeric column of three or more values (its trend)
        self._centre = {
            n: float(np.mean(np.log2(space.values[n])))
            for n in space.names
            if space.ordered(n) and len(space.values[n]) > 2 and all(v > 0 for v in space.values[n])
        }
        # a table that gives the executors' number but not their width (nor task slots), with
        # no machine given: each executor counts as one unit of cores. The width is the same in
        # every row, so the rules that compare rows (cores idle: more executors, more cores)
        # hold whatever it is; without it the rules see no cores at all and every row ties
        named = set(self.roles.values())
        self.unit_width = (
            machine is None
            and bool(named & {"executors", "executors_per_node"})
            and not named & {"cores_per_executor", "slots"}
        )
        self.machine_given = machine is not None
        self.machine = machine if machine is not None else self._table_machine()
        # the rules as a linear model's features: a column per feature any candidate has,
        # with the prior mean and sd of its weight; columns no rule knows, one per value
        rows = {c: self._features(c) for c in space.candidates}
        self.feature_names, self.weight_mean, self.weight_sd = _weight_prior(rows)
        self.matrix = {
            c: np.array([rows[c].get(n, (0.0,))[0] for n in self.feature_names])
            for c in space.candidates
        }
        self.penalty = {
            c: float(self.matrix[c] @ self.weight_mean) + self._middle(c) for c in space.candidates
        }
        # told a machine, each candidate's penalty told none (every hardware thread a core of
        # one node): where the told rules cost two candidates alike (two-way SMT's second
        # thread is priced neither way), the search takes the one told nothing would, so that
        # telling the machine never costs a run where the rules cannot choose (issue 48)
        self.untold = (
            Prior(space, None, columns).penalty
            if machine is not None
            else dict.fromkeys(space.candidates, 0.0)
        )

    def _guessed(self) -> dict[str, str]:
        """The columns read as a role from their names (column -> numaspark name).

        A column whose name suggests a role (`guessed_roles`: nodes, instances, scaleout; CPUs
        per one; memory in a unit per one) is read as that role unless declared otherwise or
        the role is another column's by name: a performance engineer reads "nodes" and
        "vcpus_per_node" so too. The rule it brings is a prior like any other, which the runs
        can contradict (RuleModel.fit); `--column NAME=none` searches it without."""
        space = self.space
        known = {canonical(n) for n in space.names} | set(self.declared.values())
        return {
            c: name
            for c, role in guessed_roles(
                [
                    n
                    for n in space.names
                    if n not in self.declared
                    and space.ordered(n)
                    and all(v > 0 for v in space.values[n])
                ]  # counts and sizes: positive numbers
            ).items()
            if (name := canonical(role)) not in known
        }

    def _table_machine(self) -> Machine:
        """No machine given: one as large as the table's largest layout."""
        largest = max(
            (layout_of(self._named(c)).slots or 1.0 for c in self.space.candidates), default=1.0
        )
        return table_machine(largest)

    def _middle(self, candidate: tuple) -> float:
        """Columns without a prior: the middle value first (a tie-break, not a cost)."""
        total = 0.0
        for name, value in zip(self.space.names, candidate, strict=True):
            if name not in self.roles:
                values = self.space.values[name]
                total += 1e-3 * abs(values.index(value) - (len(values) - 1) / 2)
        return total

    def _named(self, candidate: tuple) -> dict[str, object]:
        params = self.space.params(candidate)
        named: dict[str, object] = {name: params[column] for column, name in self.roles.items()}
        if self.unit_width:
            named["cores_per_executor"] = 1
        return named

    def _features(self, candidate: tuple) -> dict[str, tuple[float, float, float]]:
        """The rules' features; a column no rule knows: a weight per value and, for a positive
        numeric one of three or more values, a trend per doubling (its centred log2), so
        that one run along it predicts the next value up or down."""
        found = features(self._named(candidate), self.machine)
        for column, value in zip(self.space.names, candidate, strict=True):
            if column not in self.roles:
                found[f"{column}={value}"] = (1.0, 0.0, UNKNOWN_SD)
                centre = self._centre.get(column)
                if centre is not None:
                    found[f"{column} per doubling"] = (math.log2(value) - centre, 0.0, TREND_SD)  # type: ignore[arg-type]
        return found

    def rank(self, candidate: tuple) -> tuple[float, float]:
        """The order the rules put candidates in: by penalty, ties by the penalty told no
        machine (rounded: sums of the same terms in another order tie)."""
        return round(self.penalty[candidate], 9), round(self.untold[candidate], 9)

    def rules(self, candidate: tuple) -> dict[str, float]:
        return penalties(self._named(candidate), self.machine)

    def units(self) -> str:
        """Which unit the layout's width column counts: hardware threads (Spark's task slots,
        spread one per core first) or physical cores (with a threads-per-core column)."""
        width = next(
            (c for c, n in self.roles.items() if n in ("cores_per_executor", "slots")), None
        )
        if width is None:
            return ""
        per_core = next((c for c, n in self.roles.items() if n == "threads_per_core"), None)
        if per_core is not None:
            return f"{width} counts physical cores, each running {per_core} threads"
        return (
            f"{width} counts hardware threads (task slots), spread one per core first: "
            "give a threads_per_core column to count cores"
        )

    def unknown(self) -> list[str]:
        return [n for n in self.space.names if n not in self.roles]

    def describe(self) -> str:
        """One line: the machine and which columns had a prior."""

        def read(column: str, name: str) -> str:
            if column in self.declared:
                return f"{column} (= {name}, declared)"
            if column in self.guessed:
                return f"{column} (= {name}, from its name: --column {column}=none if not)"
            return column if column == name else f"{column} (= {name})"

        known = ", ".join(read(c, n) for c, n in self.roles.items())
        if self.machine_given:
            where = self.machine.describe()
        elif self.unit_width:
            where = (
                f"no machine given: {self.machine.source}, each executor counted as one "
                f"core (the table gives no width), {self.machine.cores:g} in all"
            )
        elif self.roles:
            where = f"no machine given: {self.machine.source}, {self.machine.cores} threads"
        else:  # no rule to size
            where = "no machine given or needed"
        line = f"prior on {known or 'no column'}; {where}"
        if self.units():
            line += f"; {self.units()}"
        if self.unknown():
            line += f"; searched without a prior: {', '.join(self.unknown())}"
        return line


def _weight_prior(
    rows: dict[tuple, dict[str, tuple[float, float, float]]],
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Every feature any candidate has (in order of first appearance) and the prior mean and
    sd of its weight, from each candidate's features (value, mean, sd)."""
    names: dict[str, tuple[float, float]] = {}
    for found in rows.values():
        for name, (_, mean, sd) in found.items():
            names.setdefault(name, (mean, sd))
    feature_names = list(names)
    weight_mean = np.array([names[n][0] for n in feature_names])
    weight_sd = np.array([names[n][1] for n in feature_names])
    return feature_names, weight_mean, weight_sd


def parse_columns(texts: list[str], option: str = "--column") -> dict[str, str]:
    """``NAME=ROLE`` texts (what a user declares a table's columns to mean) as column ->
    numaspark name; a role is any of `SYNONYMS` (``workers``, ``cores_per_worker``, ...) or
    ``none``. Raises UsageError (one line) for a malformed text or an unknown role."""
    found: dict[str, str] = {}
    for text in texts:
        column, _, role = text.partition("=")
        column, role = column.strip(), role.strip()
        if not column or not role:
            raise UsageError(f"{option} {text!r}: give COLUMN=ROLE, e.g. {option} scaleout=workers")
        name = NO_ROLE if role.lower() == NO_ROLE else canonical(role)
        if name is None:
            raise UsageError(
                f"{option} {text!r}: unknown role {role!r}; roles: "
                f"{', '.join(SYNONYMS)}, {NO_ROLE} (and their synonyms, e.g. "
                "workers, cores_per_worker)"
            )
        if name != NO_ROLE and name in (n for c, n in found.items() if c != column):
            raise UsageError(f"{option} {text!r}: {name} is already another column's role")
        found[column] = name
    return found


def check_columns(space: Space, columns: dict[str, str]) -> dict[str, str]:
    """``columns`` (column -> numaspark name, `parse_columns`) against the table's own
    columns: an unknown one is one line (UsageError)."""
    missing = [c for c in columns if c not in space.names]
    if missing:
        raise UsageError(
            f"--column {missing[0]}: the table has no such column; its columns: "
            f"{', '.join(space.names)}"
        )
    return dict(columns)


class RuleModel:
    """The rules, updated by the runs: log(time) = bias + features x weights, the weights'
    prior the rules' (mean, sd), the bias free; Bayesian linear regression with the noise as
    the runs' error. ``expected_gain`` is the expected improvement over the best so far."""

    def __init__(self, prior: Prior, noise: float, pressure: str = "") -> None:
        self.prior = prior
        self.noise = max(math.log1p(noise), 0.02)
        self.mean: np.ndarray | None = None
        self.cov: np.ndarray | None = None
        self.dropped: list[str] = []  # rules the runs contradicted: their mean set to 0
        self.pressure = pressure  # why a run's readings showed memory pressure ("": none)
        self.memory = ""  # why the memory rule counts (its mean MEMORY_PRESSURE), "": it does not

    def fit(self, measured: dict[tuple, float]) -> None:
        """The posterior of the weights. First, a rule the runs contradict loses its weight:
        while the runs are likelier (marginal likelihood) with some rule's prior mean at 0
        than at the studies' value, the likeliest such rule's mean goes to 0 (its sd stays,
        so the runs can still give it either sign). One or two runs that go against a rule
        are enough; a rule kept by the data is not touched."""
        prior = self.prior
        x = np.array([np.concatenate(([1.0], prior.matrix[c])) for c in measured])
        y = np.log(np.array(list(measured.values())))
        sd = np.concatenate(([1e3], prior.weight_sd))
        mean0 = np.concatenate(([0.0], prior.weight_mean))
        self.dropped, self.memory = [], ""
        # the memory rule (no way favoured before any run) counts once a run's readings show
        # pressure, or once the runs are likelier with it than without (below)
        memory = 1 + prior.feature_names.index(MEMORY) if MEMORY in prior.feature_names else 0
        if memory and self.pressure:
            mean0[memory], self.memory = MEMORY_PRESSURE, self.pressure

        def at(k: int, value: float) -> np.ndarray:
            return np.where(np.arange(len(mean0)) == k, value, mean0)

        if len(y) >= 2:
            evidence = self._evidence(x, y, mean0, sd)
            while True:
                tried = {
                    k: self._evidence(x, y, at(k, 0.0), sd)
                    for k in np.flatnonzero(mean0)
                    if x[:, k].std() > 0
                }
                if memory and mean0[memory] == 0 and x[:, memory].std() > 0:
                    tried[-memory] = self._evidence(x, y, at(memory, MEMORY_PRESSURE), sd)
                if not tried:
                    break
                k = max(tried, key=tried.__getitem__)
                if tried[k] <= evidence:
                    break
                if k < 0:  # the runs are likelier with less memory per task costing
                    evidence, mean0 = tried[k], at(memory, MEMORY_PRESSURE)
                    self.memory = "the runs are likelier with it"
                    continue
                evidence, mean0 = tried[k], at(k, 0.0)
                self.dropped.append(prior.feature_names[k - 1])
                if k == memory:
                    self.memory = ""
        # the posterior in the runs' space (Woodbury): a system of one row per run, not one
        # per feature; LOFTune's 22 knobs have ~500 features and 20 runs, and inverting the
        # features' matrix took most of a search
        spread = x * sd**2
        gram = spread @ x.T + self.noise**2 * np.eye(len(y))
        self.mean = mean0 + spread.T @ np.linalg.solve(gram, y - x @ mean0)
        self.cov = np.diag(sd**2) - spread.T @ np.linalg.solve(gram, spread)

    def _evidence(self, x: np.ndarray, y: np.ndarray, mean: np.ndarray, sd: np.ndarray) -> float:
        """log p(y) under weights ~ N(mean, sd^2) and the runs' noise (up to a constant)."""
        cov = (x * sd**2) @ x.T + self.noise**2 * np.eye(len(y))
        residual = y - x @ mean
        sign, logdet = np.linalg.slogdet(cov)
        return float(-0.5 * (residual @ np.linalg.solve(cov, residual) + logdet))

    def why(self, candidate: tuple, best: tuple) -> str:
        """The rule that most favours ``candidate`` over ``best`` under the updated weights."""
        assert self.mean is not None
        change = (self.prior.matrix[candidate] - self.prior.matrix[best]) * self.mean[1:]
        k = int(np.argmin(change))
        if change[k] >= 0:
            return "the updated rules' uncertainty (nothing measured near it)"
        return f"{self.prior.feature_names[k]} ({math.expm1(change[k]):+.0%})"

    def predict(self, candidate: tuple) -> tuple[float, float]:
        assert self.mean is not None and self.cov is not None
        row = np.concatenate(([1.0], self.prior.matrix[candidate]))
        return float(row @ self.mean), float(math.sqrt(max(row @ self.cov @ row, 1e-12)))

    def plausible(self, candidate: tuple, best: float) -> bool:
        """Could ``candidate`` beat ``best``: its prediction, 2 sd optimistic, below it."""
        mean, sd = self.predict(candidate)
        return mean - 2 * sd < math.log(best)

    def expected_gain(self, candidate: tuple, best: float) -> float:
        mean, sd = self.predict(candidate)
        z = (math.log(best) - mean) / sd
        return (math.log(best) - mean) * _cdf(z) + sd * _pdf(z)

    def choose(
        self,
        pool: list[T],
        best: float,
        incumbent: tuple,
        runs: int,
        rng: random.Random,
        key: Callable[[T], tuple] = tuple,
    ) -> tuple[T, str]:
        """The option of ``pool`` (its configuration: ``key(option)``) with the largest
        expected gain over ``best`` (ties: `Prior.untold`'s favourite, then the seed's draw),
        and why: the rule that most favours it over ``incumbent``, the rules the runs
        contradicted, and why memory counts (after ``runs`` runs)."""
        untold = self.prior.untold  # ties: what the search would take told no machine
        chosen = max(
            pool,
            key=lambda o: (self.expected_gain(key(o), best), -untold[key(o)], rng.random()),
        )
        why = f"expected gain under the rules updated by {runs} run(s): "
        why += self.why(key(chosen), incumbent)
        if self.dropped:
            why += f"; contradicted by the runs: {', '.join(self.dropped)}"
        if self.memory:
            why += f"; memory per task counts: {self.memory}"
        return chosen, why


def _cdf(z: float) -> float:
    """The standard normal's CDF and density, from math: scipy.stats takes ~2 s to import,
    more than a whole replayed search."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def _pdf(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


class AdditiveModel:
    """log(value) = bias + a weight per parameter value + a weight per numeric parameter's
    centred log2 (a trend: "more nodes was faster" carries to values not yet run) + a weight
    per product of two numeric parameters' centred log2 (layouts interact: executors x
    cores), fitted by ridge least squares; ``sigma`` is its leave-one-out prediction error,
    so it is honest with few runs."""

    def __init__(self, space: Space, ridge: float = 0.1) -> None:
        self.space = space
        self.columns = [(n, v) for n in space.names for v in space.values[n]]
        numeric = [
            n
            for n in space.names
            if space.ordered(n) and len(space.values[n]) > 1 and all(v > 0 for v in space.values[n])
        ]
        self.centre = {n: float(np.mean(np.log2(space.values[n]))) for n in numeric}
        self.pairs = list(itertools.combinations(numeric, 2))
        self.ridge = ridge
        self.weights: np.ndarray | None = None
        self.sigma = math.inf

    def _row(self, candidate: tuple) -> np.ndarray:
        params = self.space.params(candidate)
        logs = {n: math.log2(params[n]) - c for n, c in self.centre.items()}  # type: ignore[arg-type]
        return np.array(
            [1.0]
            + [1.0 if params[n] == v else 0.0 for n, v in self.columns]
            + list(logs.values())
            + [logs[a] * logs[b] for a, b in self.pairs]
        )

    def fit(self, measured: dict[tuple, float]) -> None:
        x = np.array([self._row(c) for c in measured])
        y = np.log(np.array(list(measured.values())))
        penalty = self.ridge * np.eye(x.shape[1])
        penalty[0, 0] = 0.0
        inverse = np.linalg.pinv(x.T @ x + penalty)
        self.weights = inverse @ x.T @ y
        residual = y - x @ self.weights
        leverage = np.einsum("ij,jk,ik->i", x, inverse, x)
        loo = residual / np.clip(1.0 - leverage, 1e-6, None)
        self.sigma = float(math.sqrt(float(np.mean(loo**2))))

    def predict(self, candidate: tuple) -> float:
        assert self.weights is not None
        return float(self._row(candidate) @ self.weights)


def check_search(budget: int, noise: float) -> None:
    """The search's own numbers, checked before any trial."""
    if budget < 1:
        raise UsageError("--budget must be at least 1 run")
    if not 0 <= noise < 1:
        raise UsageError(f"--noise {noise}: give a fraction like 0.05")


Move = tuple  # how a neighbour differs: (kind, column(s), direction), for its name and σ


def neighbours(
    space: Space, candidate: tuple, prior: Prior, fine: bool
) -> list[tuple[tuple, Move]]:
    """The runnable candidates one move from ``candidate``, with their moves.

    Coarse moves (``fine`` False) change the layout in the machine's terms: twice or half the
    executors, twice or half the cores per executor, or the same threads shaped otherwise
    (twice the executors of half the cores, and the reverse), each landing on the table's
    nearest values; every other column moves one value (an ordered column's next either way,
    any other value of a category). Fine moves step every column one value either way (and
    the two diagonals of each pair of layout columns), once coarse moves found no better."""
    feasible = set(space.candidates)
    layout = {
        prior.roles.get(n): i
        for i, n in enumerate(space.names)
        if prior.roles.get(n) in LAYOUT_NAMES and space.ordered(n)
    }
    count = layout.get("executors", layout.get("executors_per_node"))
    width = layout.get("cores_per_executor")
    coarse_layout = not fine and count is not None and width is not None
    moves: list[tuple[tuple, Move]] = []
    if coarse_layout:
        assert count is not None and width is not None
        moves += _layout_moves(space, candidate, count, width)
    for index in range(len(space.names)):
        if not (coarse_layout and index in (count, width)):
            moves += _column_moves(space, prior, feasible, candidate, index)
    if fine:
        moves += _diagonal_moves(space, feasible, candidate, sorted(layout.values()))
    found: dict[tuple, Move] = {}
    for other, move in moves:
        found.setdefault(other, move)  # a candidate two moves reach: the first move's
    found.pop(candidate, None)
    return list(found.items())


def _layout_moves(
    space: Space, candidate: tuple, count: int, width: int
) -> list[tuple[tuple, Move]]:
    """Twice or half the executors (column ``count``) or the cores per executor (``width``),
    or the same threads shaped otherwise: each the candidate equal elsewhere nearest the aim,
    within 0.6 of a doubling of it."""
    e, c = float(candidate[count]), float(candidate[width])  # type: ignore[arg-type]
    same = space.same_except(candidate, (count, width))
    found: list[tuple[tuple, Move]] = []
    for fe, fc in ((2, 1), (0.5, 1), (1, 2), (1, 0.5), (2, 0.5), (0.5, 2)):
        best, error = None, 0.6  # within 0.6 of a doubling of the aim
        for other in same:
            miss = abs(math.log2(float(other[count]) / (e * fe))) + abs(
                math.log2(float(other[width]) / (c * fc))
            )
            if miss < error and other != candidate:
                best, error = other, miss
        if best is not None:
            found.append((best, ("layout", fe, fc)))
    return found


def _column_moves(
    space: Space, prior: Prior, feasible: set[tuple], candidate: tuple, index: int
) -> list[tuple[tuple, Move]]:
    """One column's moves: an ordered column's next value either way (`_stepped`) and twice or
    half its value (`scaled`); a category's every other value that can run."""
    name = space.names[index]
    found: list[tuple[tuple, Move]] = []
    if space.ordered(name):
        for step in (-1, 1):
            landed = _stepped(space, prior, feasible, candidate, index, step)
            if landed is not None:
                found.append(landed)
        for factor, other in scaled(space, candidate, index):
            found.append((other, ("scale", index, factor)))
    else:
        for value in space.values[name]:
            if value != candidate[index]:
                other = (*candidate[:index], value, *candidate[index + 1 :])
                if other in feasible:
                    found.append((other, ("set", index, value)))
    return found


def _stepped(
    space: Space, prior: Prior, feasible: set[tuple], base: tuple, index: int, step: int
) -> tuple[tuple, Move] | None:
    """The next value of column ``index`` that can run with the others as they are; on a
    sparse table where none can, the runnable candidate of the column's next value that is
    nearest in the other columns (a node shape: more nodes of other memory)."""
    values = space.values[space.names[index]]
    position = values.index(base[index]) + step
    while 0 <= position < len(values):
        other = (*base[:index], values[position], *base[index + 1 :])
        if other in feasible:
            return other, ("step", index, step)
        position += step
    position = values.index(base[index]) + step
    while 0 <= position < len(values):
        there = [c for c in space.candidates if c[index] == values[position]]
        if there:
            nearest = min(there, key=lambda c: (space.distance(c, base), prior.penalty[c]))
            return nearest, ("near", index, step)
        position += step
    return None


def _diagonal_moves(
    space: Space, feasible: set[tuple], candidate: tuple, columns: list[int]
) -> list[tuple[tuple, Move]]:
    """Fine moves of the layout: of each pair of ``columns``, one a value up and the other a
    value down."""
    found: list[tuple[tuple, Move]] = []
    for a, b in itertools.combinations(columns, 2):
        for step in (-1, 1):
            values_a, values_b = space.values[space.names[a]], space.values[space.names[b]]
            ia, ib = values_a.index(candidate[a]) + step, values_b.index(candidate[b]) - step
            if 0 <= ia < len(values_a) and 0 <= ib < len(values_b):
                other = list(candidate)
                other[a], other[b] = values_a[ia], values_b[ib]
                if tuple(other) in feasible:
                    found.append((tuple(other), ("diagonal", a, step, b)))
    return found


LAYOUT_NAMES = ("executors", "executors_per_node", "cores_per_executor", "slots")


def scaled(space: Space, candidate: tuple, index: int) -> list[tuple[float, tuple]]:
    """Twice and half a positive numeric column's value (the runnable candidate equal
    elsewhere whose value is nearest, within 0.6 of a doubling): along any ordered column,
    6 to 12 nodes is one move, not three steps."""
    value = candidate[index]
    if not isinstance(value, (int, float)) or value <= 0:
        return []
    found = []
    for factor in (2.0, 0.5):
        best, error = None, 0.6
        for other in space.same_except(candidate, (index,)):
            there = other[index]
            if other == candidate or not isinstance(there, (int, float)) or there <= 0:
                continue
            miss = abs(math.log2(there / (value * factor)))
            if miss < error:
                best, error = other, miss
        if best is not None:
            found.append((factor, best))
    return found


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


def _as_move(space: Space, prior: Prior, wanted: Move) -> Move | None:
    """A hint's move in `neighbours`' terms: a layout move as is, an axis as a step of the
    column that plays that role."""
    if wanted[0] == "layout":
        return wanted
    column = next((c for c, n in prior.roles.items() if n == wanted[1]), None)
    if column is None or not space.ordered(column):
        return None
    return ("step", space.names.index(column), wanted[2])


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


def _shape_text(prior: Prior, candidate: tuple) -> str:
    """The candidate in the machine's units (executors x cores x threads per core)."""
    found = shape(prior._named(candidate), prior.machine)
    if not (found.threads_per_core and found.cores_per_executor):
        return ""
    return found.describe(smt=prior.machine.smt > 1)


def _move_text(
    space: Space, move: Move, prior: Prior | None = None, candidate: tuple | None = None
) -> str:
    """The move in words; with ``candidate``, where it lands in the machine's units."""
    text = _move_words(space, move)
    where = _shape_text(prior, candidate) if prior is not None and candidate is not None else ""
    return f"{text}, to {where}" if where else text


def _move_words(space: Space, move: Move) -> str:
    kind = move[0]
    if kind == "layout":
        _, fe, fc = move
        words = {2: "twice", 0.5: "half"}
        parts = [
            f"{words[fe]} the executors" if fe != 1 else "",
            f"{words[fc]} the cores per executor" if fc != 1 else "",
        ]
        return ", ".join(p for p in parts if p)
    if kind == "diagonal":
        _, a, step, b = move
        more, fewer = (
            (space.names[a], space.names[b]) if step > 0 else (space.names[b], space.names[a])
        )
        return f"more {more}, fewer {fewer}"
    if kind == "step":
        return f"{'more' if move[2] > 0 else 'fewer'} {space.names[move[1]]}"
    if kind == "near":
        return (
            f"{'more' if move[2] > 0 else 'fewer'} {space.names[move[1]]} (the nearest "
            "configuration that can run)"
        )
    if kind == "scale":
        return f"{'twice' if move[2] > 1 else 'half'} the {space.names[move[1]]}"
    return f"{space.names[move[1]]} {move[2]}"


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


# -- replay: a recorded table instead of Spark ---------------------------------------------


def _native(value: object) -> object:
    """numpy/pandas scalars as Python's, so they print as JSON and compare as keys."""
    if hasattr(value, "item"):
        value = value.item()  # type: ignore[union-attr]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def read_table(
    path: Path, minimize: str, skipped: list[str] | None = None
) -> tuple[Space, dict[tuple, float]]:
    """A recorded table: one row per configuration, ``minimize`` is the value, every other
    column a parameter (its distinct values form the space; absent rows cannot run). Rows
    whose value is not a finite number are left out and said in ``skipped``."""
    import pandas as pd

    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise UsageError(f"{path} {what}: give a CSV with one row per configuration")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not a CSV table: {' '.join(str(exc).split())}") from None
    if minimize not in frame.columns:
        raise UsageError(
            f"{path} has no column {minimize!r}; its columns: {', '.join(map(str, frame.columns))}"
        )
    names = [c for c in frame.columns if c != minimize]
    if not names:
        raise UsageError(f"{path}: no parameter columns beside {minimize!r}")
    values = pd.to_numeric(frame[minimize], errors="coerce")
    usable = values.notna() & np.isfinite(values.fillna(0)) & (values.fillna(0) > 0)
    if not usable.all() and usable.any() and skipped is not None:
        rows = [str(i + 2) for i in np.flatnonzero(~usable.to_numpy())]  # + header, 1-based
        skipped.append(
            f"{path}: {len(rows)} row(s) without a positive finite {minimize} left "
            f"out (line {', '.join(rows[:5])}{' ...' if len(rows) > 5 else ''})"
        )
    frame = frame[usable].assign(**{minimize: values[usable]})
    if frame.empty:
        raise UsageError(f"{path}: column {minimize!r} has no numbers (positive and finite)")
    if frame[names].isna().any().any():
        raise UsageError(f"{path}: a parameter cell is empty; every row needs every parameter")
    space_values = {}
    for name in names:
        distinct = [_native(v) for v in frame[name].unique()]
        try:
            distinct.sort()
        except TypeError:
            distinct = sorted(distinct, key=str)
        space_values[name] = distinct
    table: dict[tuple, list[float]] = {}
    for record in frame.to_dict("records"):
        key = tuple(_native(record[n]) for n in names)
        table.setdefault(key, []).append(float(record[minimize]))  # repeats: their median
    lookup = {k: float(np.median(v)) for k, v in table.items()}
    if len(lookup) < 2:
        raise UsageError(
            f"{path}: one configuration only: nothing to choose between (give a "
            "table of two or more)"
        )
    return Space(space_values, sorted(lookup, key=str)), lookup


def replay_objective(lookup: dict[tuple, float], space: Space) -> Objective:
    def objective(params: Params) -> float | None:
        return lookup.get(tuple(params[n] for n in space.names))

    return objective
