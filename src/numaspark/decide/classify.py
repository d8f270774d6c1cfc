"""Sort the configurations of a sweep into the groups that explain their time (Baig et al.).

Baig et al. grouped every layout of their sweeps by what its counters said
next to the best configuration's: within 10% of the best; low CPU usage; high
CPI and context switches; high LLC misses; low memory bandwidth; and, for a
slow configuration whose metrics look like the best's, "needs investigation".

Each label carries the values behind it (the configuration's and the best's).
A label whose metric this machine cannot give (CPI, LLC misses and bandwidth
need hardware counters) is never assigned: it is listed as not assessed, with
why, and "needs investigation" then says which explanations were not checked.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import ClassVar

from numaspark.experiment.result import RunResult, by_configuration
from numaspark.records import Shape

WITHIN = 0.10  # "within 10% of the best"
LOW_CPU = 0.50  # busy share of the CPUs a configuration was given
HIGHER = 1.20  # a counter this much above the best's is "high"
LOWER = 0.80  # bandwidth this much below the best's is "low"

LABELS = {
    "best": "within 10% of the best",
    "low-cpu": "low CPU usage",
    "high-cpi-cs": "high CPI and context switches",
    "high-llc": "high LLC misses",
    "low-bandwidth": "low memory bandwidth",
    "investigate": "needs investigation",
}
# what each label needs, and what to say when it is missing
NEEDS = {
    "low-cpu": ("cpu_usage", "no OS CPU samples of the JVMs (run with the collectors on)"),
    "high-cpi-cs": ("cpi", "CPI needs the cycles and instructions counters"),
    "high-llc": ("llc_misses_per_s", "needs the LLC-load-misses counter"),
    "low-bandwidth": ("bandwidth_bps", "memory bandwidth is estimated from LLC misses"),
}


@dataclass
class Label:
    name: str  # a key of LABELS
    evidence: dict  # metric -> {"value": this configuration's, "best": the best's}

    __json__: ClassVar[Shape] = Shape(computed=("text",), order=("name", "text", "evidence"))

    @property
    def text(self) -> str:
        return LABELS[self.name]


@dataclass
class Classified:
    config: str  # the configuration key
    label: str  # its readable name
    runs: int
    wall_s: float  # median of the measured runs
    metrics: dict  # medians of what the labels look at (None when not measured)
    labels: list[Label] = field(default_factory=list)


@dataclass
class Classification:
    configs: list[Classified]
    not_assessed: dict[str, str]  # label -> why no configuration could get it


def run_metrics(result: RunResult) -> dict:
    """The figures the labels look at, from one run (None where not measured)."""
    found = result.figures
    seconds = found.seconds or 0.0
    given = result.spec.slots
    cpu_usage = None
    if found.jvm_use and seconds > 0 and given > 0:
        cpu_usage = min(1.0, sum(j.cpu_s for j in found.jvm_use) / (seconds * given))
    llc = found.llc_load_misses
    return {
        "cpu_usage": cpu_usage,
        "cpi": found.cpi,
        "context_switches_per_s": found.context_switches_per_s,
        "llc_misses_per_s": llc / seconds if llc is not None and seconds > 0 else None,
        "bandwidth_bps": found.bandwidth.get("estimate_bps"),
    }


def _median(values: list) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def classify(results: list[RunResult]) -> Classification:
    """Group the measured ok runs by configuration and label each configuration."""
    groups = by_configuration(results)
    configs = []
    for key, runs in groups.items():
        per_run = [run_metrics(r) for r in runs]
        configs.append(
            Classified(
                config=key,
                label=runs[0].spec.title,
                runs=len(runs),
                wall_s=statistics.median(r.wall_time_s for r in runs),
                metrics={name: _median([m[name] for m in per_run]) for name in per_run[0]},
            )
        )
    configs.sort(key=lambda c: c.wall_s)
    not_assessed = {
        name: why
        for name, (metric, why) in NEEDS.items()
        if all(c.metrics.get(metric) is None for c in configs)
    }
    if not configs:
        return Classification([], not_assessed)
    best = configs[0]
    for c in configs:
        c.labels = _labels(c, best)
    return Classification(configs, not_assessed)


def _evidence(c: Classified, best: Classified, *metrics: str) -> dict:
    return {m: {"value": c.metrics.get(m), "best": best.metrics.get(m)} for m in metrics}


def _labels(c: Classified, best: Classified) -> list[Label]:
    if c.wall_s <= best.wall_s * (1 + WITHIN):
        return [Label("best", {"wall_s": {"value": c.wall_s, "best": best.wall_s}})]
    m, b = c.metrics, best.metrics
    labels = []
    if m["cpu_usage"] is not None and m["cpu_usage"] < LOW_CPU:
        labels.append(Label("low-cpu", _evidence(c, best, "cpu_usage")))
    if (
        m["cpi"] is not None
        and b["cpi"]
        and m["cpi"] >= HIGHER * b["cpi"]
        and m["context_switches_per_s"] is not None
        and b["context_switches_per_s"]
        and m["context_switches_per_s"] >= HIGHER * b["context_switches_per_s"]
    ):
        labels.append(Label("high-cpi-cs", _evidence(c, best, "cpi", "context_switches_per_s")))
    if (
        m["llc_misses_per_s"] is not None
        and b["llc_misses_per_s"]
        and (m["llc_misses_per_s"] >= HIGHER * b["llc_misses_per_s"])
    ):
        labels.append(Label("high-llc", _evidence(c, best, "llc_misses_per_s")))
    if (
        m["bandwidth_bps"] is not None
        and b["bandwidth_bps"]
        and (m["bandwidth_bps"] <= LOWER * b["bandwidth_bps"])
    ):
        labels.append(Label("low-bandwidth", _evidence(c, best, "bandwidth_bps")))
    if not labels:
        unchecked = [
            LABELS[name]
            for name, (metric, _) in NEEDS.items()
            if m.get(metric) is None or not b.get(metric)
        ]
        evidence = {
            "wall_s": {"value": c.wall_s, "best": best.wall_s},
            "slower_by": c.wall_s / best.wall_s - 1,
        }
        if unchecked:
            evidence["not_checked"] = unchecked
        labels.append(Label("investigate", evidence))
    return labels
