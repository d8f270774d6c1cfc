"""`RunResult`: one run, as stored. Append-only, schema-versioned.

Schema history (``numaspark.run/N``):
1 - first version (numaspark 0.1): spec, environment, status, wall time,
    Spark aggregates, effective placement, check, app, artifacts. One run is
    one iteration; the iterations of one application share its app_id.
    Optional fields added since, absent (None) in older records: ``streaming``
    (input and processing rate, batch duration, end-to-end latency of a
    streaming workload's measured window); ``measurements`` and ``readings``
    (OS, NUMA, perf counters, GC per executor, executor CPU gap; numaspark 0.2);
    ``affinity`` (the affinity plugin's record of each task's slot and CPU).
"""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
import time
import uuid
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from numaspark import __version__
from numaspark.kernel import NUMA_BALANCING, THP_ENABLED, read_setting, selected

RUN_SCHEMA = "numaspark.run/1"


@dataclass
class RunResult:
    spec: dict  # workload, size, params, mode, layout, binding, placement, spark conf, repetition
    environment: dict
    status: str  # "ok" or "failed"
    failure_reason: str | None = None
    wall_time_s: float | None = None
    app_id: str | None = None
    metrics: dict = field(default_factory=dict)  # Spark aggregates (metrics.registry names)
    streaming: dict | None = None  # streaming workloads: metrics.streaming.STREAM_METRICS
    # what the collectors saw during this iteration: os, numa, perf, gc, executor CPU gap
    measurements: dict | None = None
    readings: list[str] = field(default_factory=list)  # one line per figure, for people
    # core/pu binding: each task's slot and CPU, from the affinity plugin (spark/affinity.py)
    affinity: dict | None = None
    effective_placement: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    check: dict | None = None  # {"passed": bool, "details": str, "answer": {...}}
    app: dict = field(default_factory=dict)  # the application that ran it: wall time, elapsed
    artifacts: dict = field(default_factory=dict)  # paths: run dir, event log, logs
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    schema: str = RUN_SCHEMA

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def key(self) -> str:
        """Identifies the configuration (not the repetition): runs with one key compare."""
        spec = self.spec
        return "|".join(
            str(spec.get(k))
            for k in (
                "workload",
                "size",
                "mode",
                "binding",
                "mem_policy",
                "executors",
                "cores_per_executor",
            )
        )

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RunResult:
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


def by_configuration(results: list[RunResult]) -> dict[str, list[RunResult]]:
    """The measured (not warm-up), ok, timed runs of each configuration, by its key."""
    groups: dict[str, list[RunResult]] = {}
    for r in results:
        if r.ok and not r.spec.get("warmup") and r.wall_time_s is not None:
            groups.setdefault(r.spec.get("config") or r.key, []).append(r)
    return groups


def environment(topology_fingerprint: str, spark_version: str | None) -> dict:
    """What a run's numbers depend on, besides the spec: compared before runs are compared."""
    return {
        "host": socket.gethostname(),
        "kernel": platform.release(),
        "cpu_model": _cpu_model(),
        "java": java_version(),
        "spark": spark_version,
        "python": platform.python_version(),
        "numaspark": __version__,
        "topology_fingerprint": topology_fingerprint,
        "numa_balancing": read_setting(NUMA_BALANCING),
        "transparent_hugepages": selected(read_setting(THP_ENABLED)),
        "cpus": os.cpu_count(),
    }


@lru_cache(maxsize=1)
def java_version() -> str | None:
    try:
        proc = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "([^"]+)"', proc.stderr)
    return match.group(1) if match else None


def _cpu_model() -> str | None:
    text = read_setting("/proc/cpuinfo") or ""
    match = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return match.group(1).strip() if match else platform.processor() or None
