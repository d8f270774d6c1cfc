"""Where a figure turns from fine to worth acting on: the one set of thresholds that both the
readings (decide/readings.py, one line per figure under a run) and the advice rules
(the decide/advise/ package) judge with, so the two never disagree about the same run.

The numbers are the published studies' of Spark on scale-up NUMA servers, as README.md's
"Why" summarises them (each with its source in docs/experiments.md, "How the tuner
chooses"): GC above ~10% of executor time is worth a layout change (several small
executors beat one large one by up to 36% through less GC, Awan et al.); memory off the
bound node costs ~10% on average (Awan et al.); past the bandwidth knee more threads per
node only queue for memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Severity(IntEnum):
    NONE = 0
    LOW = 1
    MODERATE = 2
    SEVERE = 3
    CRITICAL = 4

    @property
    def word(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class Grades:
    """Rising thresholds: a value at or above one has that severity."""

    low: float
    moderate: float
    severe: float
    critical: float | None = None

    def grade(self, value: float) -> Severity:
        if self.critical is not None and value >= self.critical:
            return Severity.CRITICAL
        if value >= self.severe:
            return Severity.SEVERE
        if value >= self.moderate:
            return Severity.MODERATE
        if value >= self.low:
            return Severity.LOW
        return Severity.NONE


def grade(
    value: float, low: float, moderate: float, severe: float, critical: float | None = None
) -> Severity:
    """The severity of ``value`` against rising thresholds."""
    return Grades(low, moderate, severe, critical).grade(value)


GC_SHARE = Grades(0.05, 0.10, 0.20, 0.40)  # GC time over executor run time
GC_WORTH_A_CHANGE = Severity.MODERATE  # from here on a reading says what to change
REMOTE_PAGES = Grades(0.05, 0.10, 0.30)  # resident pages off the bound node(s)
TASK_SKEW = Grades(2.0, 4.0, 10.0)  # longest task over the stage's median
NARROW_STAGES = Grades(0.2, 0.5, 0.8)  # stage time with fewer tasks than task slots
DRIVER_ONLY = Grades(0.2, 0.4, 0.7)  # application time in which no job ran
BANDWIDTH_REGION = {
    "constant": Severity.NONE,
    "linear": Severity.LOW,
    "exponential": Severity.SEVERE,
}
LOW_IPC = 1.0  # under one instruction per cycle the cores mostly wait on memory
IDLE_CPU = 0.5  # machine CPU utilisation under which more parallelism may help
MIGRATIONS = 1000  # CPU migrations of the JVMs' threads in a window worth binding against
CPU_GAP = 1.5  # JVM CPU over Spark's executorCpuTime above which the JVM works outside tasks
SMT_SLOWER = 0.97  # ST time over SMT time on the same cores: below, SMT hurts
SMT_FASTER = 1.10  # above, SMT helps enough to use both threads
