"""Repetition statistics, and warnings that say what to do about noisy results."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

UNSTABLE_SPREAD = 0.10  # (max - min) / median above this is worth a warning


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    minimum: float
    maximum: float
    stdev: float | None
    mad: float = 0.0  # median absolute deviation from the median

    @property
    def spread(self) -> float:
        return (self.maximum - self.minimum) / self.median if self.median else 0.0

    def warning(self, what: str) -> str | None:
        if self.n >= 2 and self.spread > UNSTABLE_SPREAD:
            return (
                f"{what}: spread {self.spread:.0%} of the median over {self.n} runs; "
                "run more repetitions (--repeat) or quiet the machine (numaspark doctor)"
            )
        return None


def summarize(values: list[float]) -> Summary | None:
    if not values:
        return None
    return Summary(
        n=len(values),
        median=statistics.median(values),
        minimum=min(values),
        maximum=max(values),
        stdev=statistics.stdev(values) if len(values) > 1 else None,
        mad=statistics.median(abs(v - statistics.median(values)) for v in values),
    )


@dataclass(frozen=True)
class MedianRatio:
    """B against A: the ratio of medians and whether it stands out of the noise."""

    ratio: float  # median(b) / median(a): below 1 means b is faster
    low: float  # 95% bootstrap interval of the ratio
    high: float
    p_value: float | None  # Mann-Whitney U, two-sided; None with too few runs
    significant: bool

    def words(self) -> str:
        faster = 1 / self.ratio
        verdict = "beyond the noise" if self.significant else "within the noise"
        return f"{faster:.2f}x ({verdict}; 95% interval {1 / self.high:.2f}-{1 / self.low:.2f}x)"


def compare(a: list[float], b: list[float], seed: int = 0, resamples: int = 2000) -> MedianRatio:
    """Ratio of medians with a bootstrap interval, and a rank test (scipy) for significance.

    Significant when the interval excludes 1 and, with at least 3 runs a side,
    the Mann-Whitney test agrees (p < 0.05).
    """
    import numpy as np
    from scipy import stats as sps

    if not a or not b:
        raise ValueError("compare needs runs on both sides")
    rng = np.random.default_rng(seed)
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ratios = np.median(rng.choice(xb, (resamples, len(xb))), axis=1) / np.median(
        rng.choice(xa, (resamples, len(xa))), axis=1
    )
    low, high = (float(v) for v in np.percentile(ratios, [2.5, 97.5]))
    p_value = None
    if len(a) >= 3 and len(b) >= 3:
        p_value = float(sps.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    outside = low > 1.0 or high < 1.0
    significant = outside and (p_value is None or p_value < 0.05) and min(len(a), len(b)) >= 2
    return MedianRatio(float(np.median(xb) / np.median(xa)), low, high, p_value, significant)
