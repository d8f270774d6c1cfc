"""The tuner: find a good configuration in few real runs.

The search space is a table of parameters with a few discrete values each
(layout, binding, parallelism); not every combination can run. The method:

1. **Priors first.** The first trials are the candidates the studies favour
   (`prior_score`): bound over unbound, moderate cores per executor, one or
   two executors per node, parallelism of 2-3 tasks per slot, not every
   hardware thread. They are spread out: each differs from the ones before it
   in at least two parameters.
2. **Then TPE** (optuna's Tree-structured Parzen Estimator), told every result
   so far. Ordered numeric parameters are searched by their index, so TPE sees
   their order; others are categorical. A suggestion that cannot run, or that
   was already measured, is replaced by the nearest candidate not yet
   measured (and TPE is told what was measured instead): a real run is never
   spent on a repeat or on a configuration the planner rejects. From the third
   run on, TPE makes 32 proposals per trial and the model below picks the one
   with the lowest optimistic prediction (prediction less its error). On the
   recorded wordcount table (bench/tables) the median run count to within 5% of
   the best was 12 with 4 proposals, 7 with 8 or 16, 6 with 32; on the
   synthetic table of tests/test_decide.py 11.5, 14.5, 14 and 15 (random
   search: 29.5 and 45.5).
3. **Early stop.** After each trial an additive model of log(time) over the
   parameters (ridge least squares, one weight per value) predicts every
   candidate not yet measured; when even its optimistic bound (prediction less
   twice its leave-one-out error) cannot beat the best by more than the noise, the
   tuner stops and says so.

`tune` takes any objective: `replay` looks values up in a recorded table (to
compare strategies offline), the CLI's live objective runs Spark and stores
every trial as a normal run.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from numaspark.errors import UsageError

Params = dict[str, object]
MIN_RUNS_TO_STOP = 6  # the model's leave-one-out error means little on fewer runs
MIN_RUNS_TO_MODEL = 3  # from here the model picks among several TPE proposals
Objective = Callable[[Params], float | None]  # None: the configuration could not run


@dataclass
class Space:
    """Parameters and their values (in order); ``candidates``: the combinations that can run."""

    values: dict[str, list]
    candidates: list[tuple]

    @property
    def names(self) -> list[str]:
        return list(self.values)

    def params(self, candidate: tuple) -> Params:
        return dict(zip(self.names, candidate, strict=True))

    def ordered(self, name: str) -> bool:
        """Numeric parameters are searched in order; text ones as categories."""
        return all(isinstance(v, (int, float)) and not isinstance(v, bool)
                   for v in self.values[name])  # fmt: skip

    def distance(self, a: tuple, b: tuple) -> float:
        total = 0.0
        for name, x, y in zip(self.names, a, b, strict=True):
            if x == y:
                continue
            values = self.values[name]
            if self.ordered(name) and len(values) > 1:
                total += abs(values.index(x) - values.index(y)) / (len(values) - 1)
            else:
                total += 1.0
        return total


@dataclass
class Trial:
    number: int
    params: Params
    value: float | None
    source: str  # "prior", "tpe", "tpe (nearest)" - how it was chosen

    def to_dict(self) -> dict:
        return {"number": self.number, "params": self.params, "value": self.value,
                "source": self.source}  # fmt: skip


@dataclass
class TuneResult:
    trials: list[Trial] = field(default_factory=list)
    stopped: str = ""

    @property
    def best(self) -> Trial | None:
        done = [t for t in self.trials if t.value is not None]
        return min(done, key=lambda t: t.value) if done else None  # type: ignore[arg-type, return-value]

    def to_dict(self) -> dict:
        best = self.best
        return {"trials": [t.to_dict() for t in self.trials],
                "best": best.to_dict() if best else None, "stopped": self.stopped}  # fmt: skip


def _number(value: object) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def prior_score(params: Params, space: Space) -> float:
    """How much the studies favour a configuration (higher first); 0 for what they say nothing of.

    Column names are numaspark's (`numaspark results --table` writes them):
    binding, executors, executors_per_node, cores_per_executor, mode,
    partitions_per_slot / partitions, mem_policy.
    """
    score = 0.0
    binding = str(params.get("binding", "")).lower()
    score += {"node": 1.0, "core": 1.0, "pu": 0.5, "none": 0.0}.get(binding, 0.0)
    if str(params.get("mem_policy", "")).lower() in ("bind", "local"):
        score += 0.5
    cores = _number(params.get("cores_per_executor"))
    if cores:
        largest = max(_number(v) or 1.0 for v in space.values.get("cores_per_executor", [cores]))
        target = min(5.0, max(2.0, largest / 2))  # moderate: 4-5 on big nodes
        score -= 0.5 * abs(math.log2(cores) - math.log2(min(target, largest)))
    per_node = _number(params.get("executors_per_node"))
    if per_node:
        score -= 0.5 * abs(math.log2(per_node) - 0.5)  # one or two per node
    slots = _slots(params)
    if slots and "partitions" in params and _number(params["partitions"]):
        per_slot = _number(params["partitions"]) / slots  # type: ignore[operator]
        score -= 0.5 * abs(math.log2(per_slot) - math.log2(2.5))
    if _number(params.get("partitions_per_slot")):
        score -= 0.5 * abs(math.log2(_number(params["partitions_per_slot"])) - math.log2(2.5))  # type: ignore[arg-type]
    return score


def _slots(params: Params) -> float | None:
    cores = _number(params.get("cores_per_executor"))
    executors = _number(params.get("executors")) or 1.0
    if str(params.get("mode", "")).lower() == "local":
        executors = 1.0
    return cores * executors if cores else None


def _prior_picks(space: Space, count: int, rng: random.Random) -> list[tuple]:
    """The ``count`` best-scored candidates, each two or more parameters from the ones before."""
    scored = sorted(space.candidates,
                    key=lambda c: (-prior_score(space.params(c), space), rng.random()))  # fmt: skip
    picks: list[tuple] = []
    for candidate in scored:
        if all(sum(a != b for a, b in zip(candidate, p, strict=True)) >= 2 for p in picks):
            picks.append(candidate)
        if len(picks) == count:
            break
    return picks


class AdditiveModel:
    """log(value) = bias + a weight per parameter value + a weight per product of two numeric
    parameters' centred log2 (layouts interact: executors x cores), fitted by ridge least
    squares; ``sigma`` is its leave-one-out prediction error, so it is honest with few runs."""

    def __init__(self, space: Space, ridge: float = 0.1) -> None:
        self.space = space
        self.columns = [(n, v) for n in space.names for v in space.values[n]]
        numeric = [n for n in space.names if space.ordered(n) and len(space.values[n]) > 1
                   and all(v > 0 for v in space.values[n])]  # fmt: skip
        self.centre = {n: float(np.mean(np.log2(space.values[n]))) for n in numeric}
        self.pairs = list(itertools.combinations(numeric, 2))
        self.ridge = ridge
        self.weights: np.ndarray | None = None
        self.sigma = math.inf

    def _row(self, candidate: tuple) -> np.ndarray:
        params = self.space.params(candidate)
        logs = {n: math.log2(params[n]) - c for n, c in self.centre.items()}  # type: ignore[arg-type]
        return np.array([1.0] + [1.0 if params[n] == v else 0.0 for n, v in self.columns]
                        + [logs[a] * logs[b] for a, b in self.pairs])  # fmt: skip

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


def tune(space: Space, objective: Objective, budget: int, seed: int = 0, noise: float = 0.05,
         priors: int = 2, early_stop: bool = True, time_budget_s: float | None = None,
         proposals_per_trial: int = 32,
         on_trial: Callable[[Trial], None] | None = None) -> TuneResult:  # fmt: skip
    """Search ``space`` for the smallest objective in at most ``budget`` runs (and, with
    ``time_budget_s``, start no run after that many seconds)."""
    import time

    import optuna

    check_search(budget, noise)
    if not space.candidates:
        raise UsageError("the search space has no configuration that can run")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    rng = random.Random(seed)
    distributions = {
        name: optuna.distributions.IntDistribution(0, len(values) - 1)
        if space.ordered(name) and len(values) > 1
        else optuna.distributions.CategoricalDistribution(list(range(len(values))))
        for name, values in space.values.items()
    }
    history: list = []  # what was measured, as optuna trials (failures included)

    def proposer(round_number: int):
        """A study that knows every measured trial and nothing else: its asks are proposals,
        and the proposals of earlier rounds do not pile up in it (asks cost O(trials))."""
        sampler = optuna.samplers.TPESampler(seed=seed * 100_003 + round_number,
                                             n_startup_trials=0, multivariate=True)  # fmt: skip
        scratch = optuna.create_study(direction="minimize", sampler=sampler)
        scratch.add_trials(history)
        return scratch

    result = TuneResult()
    measured: dict[tuple, float] = {}
    failed: set[tuple] = set()
    feasible = set(space.candidates)

    def index_params(candidate: tuple) -> dict:
        return {n: space.values[n].index(v) for n, v in zip(space.names, candidate, strict=True)}

    def evaluate(candidate: tuple, source: str) -> None:
        value = objective(space.params(candidate))
        trial = Trial(len(result.trials) + 1, space.params(candidate), value, source)
        result.trials.append(trial)
        if value is None or not math.isfinite(value) or value <= 0:
            failed.add(candidate)
            state = optuna.trial.TrialState.FAIL
            history.append(optuna.trial.create_trial(params=index_params(candidate),
                                                     distributions=distributions, state=state))  # fmt: skip
        else:
            measured[candidate] = value
            history.append(optuna.trial.create_trial(params=index_params(candidate),
                                                     distributions=distributions, value=value))  # fmt: skip
        if on_trial:
            on_trial(trial)

    def remaining() -> list[tuple]:
        return [c for c in space.candidates if c not in measured and c not in failed]

    started = time.monotonic()

    def out_of_time() -> bool:
        return time_budget_s is not None and time.monotonic() - started > time_budget_s

    for candidate in _prior_picks(space, min(priors, budget), rng):
        if out_of_time():
            break
        evaluate(candidate, "prior")
    while len(result.trials) < budget:
        if out_of_time():
            result.stopped = f"time budget: {time_budget_s:.0f} s"
            break
        left = remaining()
        if not left:
            result.stopped = "every configuration that can run was measured"
            break
        if early_stop and _cannot_improve(space, measured, left, noise):
            best = min(measured.values())
            result.stopped = (f"early: no configuration left is predicted to beat the best "
                              f"({best:.4g}) by more than the noise ({noise:.0%})")  # fmt: skip
            break
        # TPE proposes; with enough runs the model picks the most promising of its proposals
        proposals: list[tuple[tuple, str]] = []
        study = proposer(len(result.trials))
        for _ in range(proposals_per_trial if len(measured) >= MIN_RUNS_TO_MODEL else 1):
            asked = study.ask(distributions)
            wanted = tuple(space.values[n][asked.params[n]] for n in space.names)
            # a suggestion, closed as FAIL (which TPE ignores; PRUNED would count it among
            # the bad trials); what is measured is added as its own complete trial
            study.tell(asked, state=optuna.trial.TrialState.FAIL)
            if wanted in feasible and wanted in left:
                proposals.append((wanted, "tpe"))
            else:
                nearest = min(left, key=lambda c, w=wanted: (space.distance(c, w),
                                                             -prior_score(space.params(c), space)))  # fmt: skip
                proposals.append((nearest, "tpe (nearest)"))
        if len(proposals) == 1:
            evaluate(*proposals[0])
            continue
        model = AdditiveModel(space)
        model.fit(measured)
        sigma = model.sigma if math.isfinite(model.sigma) else 1.0
        chosen = min(proposals, key=lambda p: model.predict(p[0]) - sigma)  # optimistic pick
        evaluate(chosen[0], chosen[1] + " + model")
    if not result.stopped:
        result.stopped = f"budget: {budget} run(s)"
    return result


def _cannot_improve(space: Space, measured: dict[tuple, float], left: list[tuple],
                    noise: float) -> bool:  # fmt: skip
    """True when the additive model, fitted to enough runs, puts every candidate left, even
    optimistically, no better than the best less the noise."""
    model = AdditiveModel(space)
    if len(measured) < MIN_RUNS_TO_STOP:
        return False
    model.fit(measured)
    sigma = max(model.sigma, math.log1p(noise))
    threshold = math.log(min(measured.values()) * (1 - noise))
    return all(model.predict(c) - 2 * sigma >= threshold for c in left)


# -- replay: a recorded table instead of Spark ---------------------------------------------


def _native(value: object) -> object:
    """numpy/pandas scalars as Python's, so they print as JSON and compare as keys."""
    if hasattr(value, "item"):
        value = value.item()  # type: ignore[union-attr]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def read_table(path: Path, minimize: str,
               skipped: list[str] | None = None) -> tuple[Space, dict[tuple, float]]:  # fmt: skip
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
        raise UsageError(f"{path} has no column {minimize!r}; its columns: "
                         f"{', '.join(map(str, frame.columns))}")  # fmt: skip
    names = [c for c in frame.columns if c != minimize]
    if not names:
        raise UsageError(f"{path}: no parameter columns beside {minimize!r}")
    values = pd.to_numeric(frame[minimize], errors="coerce")
    usable = values.notna() & np.isfinite(values.fillna(0)) & (values.fillna(0) > 0)
    if not usable.all() and usable.any() and skipped is not None:
        rows = [str(i + 2) for i in np.flatnonzero(~usable.to_numpy())]  # + header, 1-based
        skipped.append(f"{path}: {len(rows)} row(s) without a positive finite {minimize} left "
                       f"out (line {', '.join(rows[:5])}{' ...' if len(rows) > 5 else ''})")  # fmt: skip
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
        raise UsageError(f"{path}: one configuration only: nothing to choose between (give a "
                         "table of two or more)")  # fmt: skip
    return Space(space_values, sorted(lookup, key=str)), lookup


def replay_objective(lookup: dict[tuple, float], space: Space) -> Objective:
    def objective(params: Params) -> float | None:
        return lookup.get(tuple(params[n] for n in space.names))

    return objective


def random_search(lookup: dict[tuple, float], seed: int) -> list[float]:
    """Random search over the runnable rows, without repeats: the values in the order tried."""
    order = sorted(lookup, key=str)
    random.Random(seed).shuffle(order)
    return [lookup[c] for c in order]


def evaluations_to(values: list[float | None], target: float) -> int | None:
    """1-based number of the first evaluation at or below ``target`` (None if never)."""
    for number, value in enumerate(values, 1):
        if value is not None and value <= target:
            return number
    return None
