"""Bound against unbound from history: the runs of one application that a History Server
kept, node-bound or not, compared by their median duration.

Observational, not a controlled experiment: the runs differ in data, load and time, and
whoever bound some of them may have chosen which; the ratio says what history shows, never
what binding causes. The interval is a percentile bootstrap of the ratio of medians
(scipy.stats.bootstrap, the two groups resampled apart, 9,999 resamples, a fixed seed so that
a scan prints the same interval twice; BCa's jackknife acceleration is unstable for medians of
a few runs, many of them tied). A group of fewer than `MIN_RUNS` finished runs is not
compared: the median of two runs is their mean, and a bootstrap of two values can only
resample one, the other or their mean, so its interval would be their range.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from numaspark.records import Shape

MIN_RUNS = 3
CONFIDENCE = 0.95
RESAMPLES = 9999
SEED = 0
OBSERVATIONAL = "observational (not a controlled experiment: runs differ in data, load and time)"


@dataclass(frozen=True)
class BoundVsUnbound:
    """One application's bound and unbound runs: counts, median seconds, the ratio of the
    unbound median to the bound one (above 1: the bound runs were faster), its interval;
    ``why_not`` instead of figures when the groups are too small to compare."""

    name: str
    bound_runs: int
    unbound_runs: int
    bound_median_s: float | None = None
    unbound_median_s: float | None = None
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    why_not: str | None = None

    confidence: ClassVar[float] = CONFIDENCE  # of the interval [low, high]
    __json__: ClassVar[Shape] = Shape(computed=("confidence",))

    def line(self) -> str:
        counts = f"{self.name}: {self.bound_runs} runs node-bound, {self.unbound_runs} unbound"
        if self.why_not:
            return f"{counts}: not compared ({self.why_not})"
        return (
            f"{counts}; median {_seconds(self.bound_median_s)} against "
            f"{_seconds(self.unbound_median_s)}, "
            f"{self.ratio:.2f}x, {CONFIDENCE:.0%} interval {self.low:.2f}x-{self.high:.2f}x"
        )


def _seconds(value: float | None) -> str:
    return f"{value or 0:,.0f} s" if (value or 0) >= 100 else f"{value or 0:.1f} s"


def compare(name: str, bound: list[float], unbound: list[float]) -> BoundVsUnbound:
    """The runs' durations (seconds) of one application, bound and unbound, compared."""
    counts = (name, len(bound), len(unbound))
    if not bound or not unbound:
        missing = "node-bound" if not bound else "unbound"
        return BoundVsUnbound(*counts, why_not=f"no {missing} run to compare with")
    if min(len(bound), len(unbound)) < MIN_RUNS:
        return BoundVsUnbound(*counts, why_not=f"fewer than {MIN_RUNS} finished runs in a group")
    if min(bound) <= 0:
        return BoundVsUnbound(*counts, why_not="a bound run took no time")
    bound_median, unbound_median = statistics.median(bound), statistics.median(unbound)
    low, high = ratio_interval(bound, unbound)
    return BoundVsUnbound(
        *counts,
        bound_median_s=bound_median,
        unbound_median_s=unbound_median,
        ratio=unbound_median / bound_median,
        low=low,
        high=high,
    )


def _ratio_of_medians(bound: np.ndarray, unbound: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(unbound, axis=axis) / np.median(bound, axis=axis)


def ratio_interval(bound: list[float], unbound: list[float]) -> tuple[float, float]:
    """The percentile bootstrap interval of median(unbound) / median(bound)."""
    # lazy: scipy.stats takes ~2 s to import, which a scan without a comparison never pays
    from scipy.stats import bootstrap

    found = bootstrap(
        (np.asarray(bound, float), np.asarray(unbound, float)),
        _ratio_of_medians,
        n_resamples=RESAMPLES,
        vectorized=True,
        paired=False,
        confidence_level=CONFIDENCE,
        method="percentile",
        random_state=np.random.default_rng(SEED),
    )
    return float(found.confidence_interval.low), float(found.confidence_interval.high)
