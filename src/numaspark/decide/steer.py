"""What the tuner takes from a run beyond its time: the run's own measurements (CPU
utilisation, GC share, spill, memory bandwidth) name the axis to move along next, as the
studies did by hand (docs/experiments.md, "How the tuner chooses"):

- GC takes a large share of executor time: more, smaller executors (a smaller heap each
  collects faster: several small executors beat one large one by up to 36%);
- the CPUs are mostly idle and tasks spill: more memory per task (more per executor, or
  fewer, larger executors); spill or a moderate GC share also makes the prior's memory rule
  count (`pressure`);
- the CPUs are mostly idle without spill: more parallelism (more tasks per slot, wider
  executors);
- memory bandwidth saturated: fewer threads per core, or fewer cores per node.

A figure the machine cannot give (memory bandwidth needs hardware counters) is said to be
unavailable and is not used; nothing is guessed in its place.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass

from numaspark.decide.thresholds import GC_SHARE, IDLE_CPU
from numaspark.experiment.result import Measurements
from numaspark.metrics.registry import Metrics

Move = tuple  # ("layout", executors factor, cores factor) or ("axis", name, +1/-1)


@dataclass(frozen=True)
class Observation:
    """One trial's value and the readings that explain it (None: not measured)."""

    value: float | None
    cpu_utilisation: float | None = None  # machine-wide busy share while it ran
    gc_share: float | None = None  # jvmGCTime / executorRunTime
    spilled_bytes: float | None = None  # memory + disk bytes spilled
    bandwidth_region: str | None = None  # constant, linear, exponential (saturated)
    bandwidth_unavailable: str | None = None  # why there is no bandwidth figure
    failure: str | None = None  # why it failed, one line (value None)
    # what the cluster could not give it: resources (refused), memory (killed), None (other)
    refused: str | None = None

    def figures(self) -> str:
        """The readings, one phrase each (what was not measured is left out)."""
        parts = []
        if self.cpu_utilisation is not None:
            parts.append(f"CPU {self.cpu_utilisation:.0%} busy")
        if self.gc_share is not None:
            parts.append(f"GC {self.gc_share:.0%} of executor time")
        if self.spilled_bytes is not None:
            parts.append(f"{self.spilled_bytes / 2**20:,.0f} MiB spilled")
        if self.bandwidth_region is not None:
            parts.append(f"memory bandwidth {self.bandwidth_region}")
        elif self.bandwidth_unavailable:
            parts.append(f"memory bandwidth unavailable ({self.bandwidth_unavailable})")
        return ", ".join(parts)


# What a cluster says when it refuses a configuration or kills it for what it asks: a
# configuration asking at least as much is refused too (`Refusal`). The phrases are the
# runner's own (spark/first_executor.py, placement/cluster_capacity.py, spark/kube.py: a pod
# the scheduler cannot place or a kubelet refused) and Spark's and YARN's (YarnAllocator's
# "exceeding physical memory limits", an executor's OutOfMemoryError).
_REFUSED = re.compile(
    r"no executor started within|cannot hold|grants at most|above the max threshold|"
    r"has not accepted any resources|cannot be scheduled|refused by node \S+ kubelet"
)
_KILLED = re.compile(
    r"exceeding (?:physical |virtual )?memory limits|OutOfMemoryError|OOMKilled|"
    r"Container killed|ExecutorLostFailure|executors? (?:were |was )?lost|"
    r"Max number of executor failures"
)


def refusal(failure: str | None) -> str | None:
    """What a failure says the cluster could not give: ``resources`` (it refused the
    executors: not granted, more than it holds) or ``memory`` (it killed executors for their
    memory, or lost them); None for any other failure (the application's own error)."""
    if not failure:
        return None
    if _REFUSED.search(failure):
        return "resources"
    if _KILLED.search(failure):
        return "memory"
    return None


def observe(results: list, failed: list | None = None) -> Observation:
    """A trial's observation from its measured runs (`RunResult`s, ok ones): the median wall
    time and the median of each reading over the runs that have it. With none, the value is
    None and ``failed`` (its failed runs) says why, in the first one's words."""
    if not results:
        reasons = [r.failure_reason for r in failed or () if r.failure_reason]
        if not reasons:
            return Observation(None)
        return Observation(None, failure=_one_line(reasons[0]), refused=refusal(reasons[0]))

    def median(values: list) -> float | None:
        present = [float(v) for v in values if v is not None]
        return statistics.median(present) if present else None

    metrics = [Metrics.of(r.metrics) for r in results]
    found = [Measurements.of(r.measurements) for r in results]
    spilled = [
        None
        if m.memoryBytesSpilled is None and m.diskBytesSpilled is None
        else (m.memoryBytesSpilled or 0.0) + (m.diskBytesSpilled or 0.0)
        for m in metrics
    ]
    regions = [f.bandwidth.get("region") for f in found if f.bandwidth.get("region")]
    missing = [f.bandwidth.get("unavailable") for f in found if f.bandwidth.get("unavailable")]
    return Observation(
        value=median([r.wall_time_s for r in results]),
        cpu_utilisation=median([f.cpu_utilisation for f in found]),
        gc_share=median([m.gcShare for m in metrics]),
        spilled_bytes=median(spilled),
        bandwidth_region=max(set(regions), key=regions.count) if regions else None,
        bandwidth_unavailable=None if regions or not missing else str(missing[0]),
    )


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


@dataclass(frozen=True)
class Hint:
    """The moves a run's readings favour (the first that can run is taken), and why."""

    moves: tuple[Move, ...]
    reason: str


def hint(observation: Observation | None) -> Hint | None:
    """What the readings of a run say to try next; None when they say nothing (or were not
    measured: a replayed table has times only)."""
    if observation is None:
        return None
    said = observation.figures()
    if observation.bandwidth_region == "exponential":
        return Hint(
            (("axis", "threads_per_core", -1), ("layout", 1, 0.5), ("layout", 0.5, 1)),
            f"{said}: memory bandwidth is saturated, so fewer threads per core "
            "or fewer cores per node",
        )
    if observation.gc_share is not None and observation.gc_share >= GC_SHARE.moderate:
        return Hint(
            (("layout", 2, 0.5), ("layout", 1, 0.5)),
            f"{said}: GC at {GC_SHARE.moderate:.0%} or more, so more, smaller "
            "executors (a smaller heap each)",
        )
    idle = observation.cpu_utilisation is not None and observation.cpu_utilisation < IDLE_CPU
    if idle and (observation.spilled_bytes or 0) > 0:
        return Hint(
            (("axis", "memory", 1), ("layout", 0.5, 2), ("layout", 0.5, 1)),
            f"{said}: the CPUs were mostly idle while tasks spilled, so more memory "
            "for each task (more per executor, or fewer, larger executors)",
        )
    if idle:
        return Hint(
            (
                ("axis", "partitions_per_slot", 1),
                ("axis", "partitions", 1),
                ("layout", 1, 2),
                ("layout", 2, 1),
            ),
            f"{said}: the CPUs were mostly idle, so more parallelism (more tasks, wider executors)",
        )
    return None


def pressure(observation: Observation | None) -> str:
    """Why a run's readings say its tasks were short of memory (tasks spilled, or GC took
    a moderate share of executor time); "" when they do not, or were not measured."""
    if observation is None:
        return ""
    if (observation.spilled_bytes or 0) > 0:
        return f"{observation.spilled_bytes / 2**20:,.0f} MiB spilled"
    if observation.gc_share is not None and observation.gc_share >= GC_SHARE.moderate:
        return f"GC {observation.gc_share:.0%} of executor time"
    return ""


def opposite(move: Move) -> Move | None:
    """The move back along the same axis (None for a category's jump)."""
    if move[0] == "layout":
        return ("layout", 1 / move[1], 1 / move[2])
    if move[0] in ("step", "near"):
        return (move[0], move[1], -move[2])
    if move[0] == "scale":
        return ("scale", move[1], 1 / move[2])
    if move[0] == "diagonal":
        return ("diagonal", move[1], -move[2], move[3])
    return None
