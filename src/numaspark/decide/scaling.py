"""Scaling models: Amdahl's law and Gunther's Universal Scalability Law, fitted with scipy.

From (concurrency p, elapsed time T(p)) the speedup is S(p) = T(1)/T(p)
(T(1) measured, or the fitted one when the table has no p = 1).

    Amdahl:  S(p) = p / (1 + sigma (p - 1))                   sigma: serial fraction
    USL:     S(p) = p / (1 + sigma (p - 1) + kappa p (p - 1))  kappa: coherency (crosstalk)

USL's peak is at p* = sqrt((1 - sigma) / kappa) (no peak when kappa is 0). The
knee is the highest measured p whose parallel efficiency S(p)/p is still at
least 80%: past it, added tasks buy less and less.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from numaspark import records
from numaspark.errors import UsageError
from numaspark.records import Shape

KNEE_EFFICIENCY = 0.8


@dataclass(frozen=True)
class Fit:
    model: str
    sigma: float
    kappa: float
    t1: float  # time at p = 1 (measured, or fitted)
    rmse: float  # of the fitted times, seconds
    peak: float | None  # concurrency of the highest predicted speedup (USL), None if unbounded

    __json__: ClassVar[Shape] = Shape(keys={"rmse": "rmse_s", "peak": "peak_concurrency"})

    def speedup(self, p: float) -> float:
        return p / (1 + self.sigma * (p - 1) + self.kappa * p * (p - 1))

    def time(self, p: float) -> float:
        return self.t1 / self.speedup(p)


def _check(points: list[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    if len(points) < 2:
        raise UsageError("a scaling fit needs at least two (concurrency, time) points")
    p = np.array([x for x, _ in points], dtype=float)
    t = np.array([y for _, y in points], dtype=float)
    if (p < 1).any() or (t <= 0).any():
        raise UsageError("concurrency must be at least 1 and times positive")
    return p, t


def fit(points: list[tuple[float, float]], model: str = "usl") -> Fit:
    """Least-squares fit of the times (not the speedups: every point weighs by its seconds)."""
    from scipy.optimize import least_squares

    p, t = _check(points)
    measured_t1 = t[p == 1].mean() if (p == 1).any() else None

    def residuals(x):
        t1, sigma, kappa = x if model == "usl" else (*x, 0.0)
        return t1 * (1 + sigma * (p - 1) + kappa * p * (p - 1)) / p - t

    start = [measured_t1 or t[0] * p[0], 0.05, 0.001][: 3 if model == "usl" else 2]
    bounds = ([0, 0, 0][: len(start)], [np.inf, 1, 1][: len(start)])
    solution = least_squares(residuals, start, bounds=bounds)
    t1, sigma, kappa = (*solution.x, 0.0)[:3] if model == "usl" else (*solution.x, 0.0)
    rmse = float(np.sqrt(np.mean(residuals(solution.x) ** 2)))
    peak = math.sqrt((1 - sigma) / kappa) if kappa > 1e-12 else None
    return Fit(model, float(sigma), float(kappa), float(t1), rmse, peak)


def efficiency_table(points: list[tuple[float, float]]) -> list[dict]:
    """Per measured concurrency: time, speedup T(1)/T(p), parallel efficiency S(p)/p."""
    p, t = _check(points)
    order = np.argsort(p)
    t1 = t[p == 1].mean() if (p == 1).any() else fit(points).t1
    return [
        {
            "p": float(p[i]),
            "time_s": float(t[i]),
            "speedup": float(t1 / t[i]),
            "efficiency": float(t1 / t[i] / p[i]),
        }
        for i in order
    ]


def knee(points: list[tuple[float, float]]) -> float | None:
    """The highest concurrency still at >= 80% parallel efficiency (None if even p=1 is not)."""
    good = [row["p"] for row in efficiency_table(points) if row["efficiency"] >= KNEE_EFFICIENCY]
    return max(good) if good else None


def read_points(path) -> list[tuple[float, float]]:
    """A CSV (or whitespace) table of concurrency and elapsed time; a header line is skipped."""
    import csv
    from pathlib import Path

    if not Path(path).is_file():
        what = "is a directory" if Path(path).is_dir() else "does not exist"
        raise UsageError(f"{path} {what}: give a CSV of concurrency,seconds rows")
    try:
        text = Path(path).read_text()
    except UnicodeDecodeError:
        raise UsageError(
            f"{path} is not a text table: give a CSV of concurrency,seconds rows"
        ) from None
    points = []
    for number, row in enumerate(csv.reader(text.replace("\t", ",").splitlines()), 1):
        cells = [c.strip() for c in (row if len(row) > 1 else (row[0].split() if row else []))]
        if not cells or cells[0].startswith("#"):
            continue
        if len(cells) != 2 and not (number == 1 and not points):
            raise UsageError(
                f"{path}:{number}: {len(cells)} columns; give two: concurrency,"
                "time (one row per run)"
            )
        try:
            point = (float(cells[0]), float(cells[1]))
        except (ValueError, IndexError):
            if points or number > 1:
                raise UsageError(
                    f"{path}:{number}: expected 'concurrency,time', got {','.join(cells)!r}"
                ) from None
            continue  # a header line
        if not all(math.isfinite(v) and v > 0 for v in point) or point[0] < 1:
            raise UsageError(
                f"{path}:{number}: concurrency must be at least 1 and time a "
                f"positive number, got {','.join(cells)!r}"
            )
        points.append(point)
    if not points:
        raise UsageError(f"{path} has no (concurrency, time) rows")
    if len({p for p, _ in points}) < 2:
        raise UsageError(
            f"{path}: every row has concurrency {points[0][0]:g}: a scaling fit "
            "needs runs at two or more concurrencies"
        )
    return points


def duplicate_rows(points: list[tuple[float, float]]) -> int:
    """Rows that repeat an earlier row exactly (a copy, or repetitions that timed alike)."""
    return len(points) - len(set(points))


def fit_report(points: list[tuple[float, float]], predict: list[float] | None = None) -> dict:
    """``numaspark fit``: efficiency per point, both models, the knee, predictions."""
    if any(p < 1 for p in predict or []):
        raise UsageError("--predict needs a concurrency of at least 1")
    models = {name: fit(points, name) for name in ("usl", "amdahl")}
    repeated = duplicate_rows(points)
    return {
        "warnings": [
            f"{repeated} row(s) repeat an earlier row exactly: fitted as repetitions "
            "(remove them if they are copies)"
        ]
        if repeated
        else [],
        "points": efficiency_table(points),
        "models": records.dump(models),
        "knee": knee(points),
        "predictions": [
            {"p": p, **{f"{name}_time_s": m.time(p) for name, m in models.items()}}
            for p in predict or []
        ],
    }
