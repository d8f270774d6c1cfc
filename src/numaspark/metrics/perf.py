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
    """Parse the CSV that ``perf stat -x,`` writes to stderr; comment and blank lines skipped."""
    counts = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        raw, unit, event = fields[0].strip(), fields[1].strip(), fields[2].strip()
        share = _float(fields[4]) if len(fields) > 4 else None
        if raw == "<not supported>":
            counts.append(PerfCount(event, None, unit, "unsupported", None))
        elif raw == "<not counted>":
            counts.append(PerfCount(event, None, unit, "not counted", share))
        else:
            value = _float(raw)
            if value is None:
                continue
            counts.append(PerfCount(event, value, unit, "measured", share))
    return counts


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
