"""Parse ``perf stat -x,`` output and find which events this machine can count."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

HARDWARE_EVENTS = (
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "LLC-loads",
    "LLC-load-misses",
    "node-loads",
    "node-load-misses",
)
SOFTWARE_EVENTS = ("task-clock", "context-switches", "cpu-migrations", "page-faults")


@dataclass(frozen=True)
class PerfCount:
    """One line of ``perf stat -x,``: an event and whether it was really counted."""

    event: str
    value: float | None  # None when not supported or not counted
    unit: str
    status: str  # "measured", "unsupported" or "not counted"
    running_share: float | None  # percentage of the time the counter ran (multiplexing)


def parse_perf_csv(text: str) -> list[PerfCount]:
    """Parse the CSV that ``perf stat -x,`` writes to stderr; comment and blank lines skipped.

    Fields: value, unit, event, run time, running share (%), metric, metric unit.
    """
    return [count for _, count in _parse(text, interval=False)]


def parse_perf_interval_csv(text: str) -> list[tuple[float, PerfCount]]:
    """``perf stat -x, -I MS`` output: each count with the seconds since perf started."""
    return _parse(text, interval=True)


def _parse(text: str, interval: bool) -> list[tuple[float, PerfCount]]:
    counts = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        stamp = 0.0
        if interval:
            stamp_value = _float(fields[0])
            if stamp_value is None:
                continue
            stamp, fields = stamp_value, fields[1:]
        if len(fields) < 3:
            continue
        raw, unit, event = fields[0].strip(), fields[1].strip(), fields[2].strip()
        if not event:
            continue  # a metric-only line (perf's derived figures): numaspark derives its own
        share = _float(fields[4]) if len(fields) > 4 else None
        if raw == "<not supported>":
            counts.append((stamp, PerfCount(event, None, unit, "unsupported", None)))
        elif raw == "<not counted>":
            counts.append((stamp, PerfCount(event, None, unit, "not counted", share)))
        else:
            value = _float(raw)
            if value is None:
                continue
            counts.append((stamp, PerfCount(event, value, unit, "measured", share)))
    return counts


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def summarize_counts(counts: list[PerfCount], seconds: float | None = None) -> dict:
    """Totals per event with their status, and the derived figures the studies used.

    An event is ``measured`` when any reading counted it, ``unsupported`` when
    the CPU (or hypervisor) has no such counter, ``not counted`` when it was
    never scheduled. ``running_share`` below 100% means perf multiplexed the
    counter and scaled its value. Derived: IPC and CPI, cache miss ratio, LLC
    load miss ratio, node (remote) load miss ratio; and for the software events
    CPUs utilised (task-clock over wall time) and rates per second.
    """
    events: dict[str, dict] = {}
    for c in counts:
        entry = events.setdefault(
            c.event, {"value": None, "unit": c.unit, "status": c.status, "shares": []}
        )
        if c.status == "measured":
            entry["value"] = (entry["value"] or 0.0) + (c.value or 0.0)
            entry["status"] = "measured"
            if c.running_share is not None:
                entry["shares"].append(c.running_share)
    table = {}
    for name, entry in events.items():
        shares = entry.pop("shares")
        entry["running_share"] = round(sum(shares) / len(shares), 2) if shares else None
        entry["multiplexed"] = bool(shares) and min(shares) < 100.0
        table[name] = entry

    def value(name: str) -> float | None:
        return table.get(name, {}).get("value")

    derived = {
        "ipc": _ratio(value("instructions"), value("cycles")),
        "cpi": _ratio(value("cycles"), value("instructions")),
        "cache_miss_ratio": _ratio(value("cache-misses"), value("cache-references")),
        "llc_miss_ratio": _ratio(value("LLC-load-misses"), value("LLC-loads")),
        "node_miss_ratio": _ratio(value("node-load-misses"), value("node-loads")),
    }
    if seconds:
        clock = value("task-clock")
        derived["cpus_utilised"] = clock / 1000.0 / seconds if clock is not None else None
        for name in ("context-switches", "cpu-migrations", "page-faults"):
            count = value(name)
            derived[f"{name}_per_s"] = count / seconds if count is not None else None
    unsupported = sorted(n for n, e in table.items() if e["status"] == "unsupported")
    return {
        "events": table,
        "derived": {k: (round(v, 4) if v is not None else None) for k, v in derived.items()},
        "unsupported": unsupported,
        "multiplexed": sorted(n for n, e in table.items() if e["multiplexed"]),
    }


def probe_events(events: tuple[str, ...] = HARDWARE_EVENTS + SOFTWARE_EVENTS) -> list[PerfCount]:
    """Count ``events`` over ``true``: what this machine supports. Empty when perf is missing."""
    exe = shutil.which("perf")
    if exe is None:
        return []
    proc = subprocess.run(
        [exe, "stat", "-x,", "-e", ",".join(events), "true"],
        capture_output=True,
        text=True,
        check=False,
    )
    return parse_perf_csv(proc.stderr)


def _float(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None
