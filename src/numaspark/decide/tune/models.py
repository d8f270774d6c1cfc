"""The tuner's models: `Prior` (the studies' rules applied to a space, before any run),
`RuleModel` (the rules updated by the runs) and `AdditiveModel` (a model of the results alone,
for the global phase)."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from numaspark.decide.tune.columns import canonical, check_columns, guessed_roles, roles
from numaspark.decide.tune.machine import Machine, layout_of, table_machine
from numaspark.decide.tune.rules import MEMORY, MEMORY_PRESSURE, UNKNOWN_SD, features, penalties
from numaspark.decide.tune.space import Space

TREND_SD = 0.3  # a column no rule knows: how much a doubling may cost either way (log-time)
T = TypeVar("T")


class Prior:
    """The studies' rules (rules.py) applied to a space: which columns they know, on
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
        can contradict (RuleModel.fit); `--column NAME=knob` searches it without."""
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
                return f"{column} (= {name}, from its name: --column {column}=knob if not)"
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
