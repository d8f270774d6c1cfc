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
    )
