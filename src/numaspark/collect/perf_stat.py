"""Hardware and software counters through ``perf stat -x, -I``, system-wide, for the whole run.

System-wide (``-a``) because the executors start after the application does
and numaspark owns the machine while it measures; each interval line carries
its time, so each iteration's window is summed from its own intervals. On
machines without a PMU (most VMs) the hardware events read
``<not supported>``: the result says so, and the software events (task-clock,
context switches, CPU migrations, page faults) are still counted.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from pathlib import Path

from numaspark.collect.base import Collector, JvmMap
from numaspark.metrics.perf import (
    HARDWARE_EVENTS,
    SOFTWARE_EVENTS,
    PerfCount,
    parse_perf_interval_csv,
    summarize_counts,
)
from numaspark.supervise.ledger import LEDGER


class PerfCollector(Collector):
    name = "perf"

    def __init__(
        self, events: tuple[str, ...] = HARDWARE_EVENTS + SOFTWARE_EVENTS, interval_ms: int = 1000
    ) -> None:
        super().__init__()
        self.events = events
        self.interval_ms = interval_ms
        self.popen: subprocess.Popen | None = None
        self.output: Path | None = None
        self.started_at = 0.0
        self.counts: list = []

    def start(self, run_dir: Path) -> None:
        exe = shutil.which("perf")
        if exe is None:
            self.problem = "perf is not installed (apt-get install linux-perf, or linux-tools)"
            return
        self.output = run_dir / "perf-stat.csv"
        argv = [
            exe,
            "stat",
            "-x,",
            "-a",
            "-I",
            str(self.interval_ms),
            "-e",
            ",".join(self.events),
            "-o",
            str(self.output),
        ]
        self.started_at = time.time()
        self.popen = subprocess.Popen(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        LEDGER.started(self.popen.pid, "perf stat")  # stopped by the next numaspark if we die
        time.sleep(0.1)
        if self.popen.poll() is not None:
            LEDGER.ended(self.popen.pid)
            error = (self.popen.stderr.read() or b"").decode(errors="replace").strip()
            self.problem = f"perf stat did not start: {error.splitlines()[-1] if error else '?'}"
            self.popen = None

    def sample(self, now: float, jvms: JvmMap) -> None:
        return None  # perf writes its own intervals

    def stop(self) -> None:
        if self.popen is not None:
            LEDGER.ended(self.popen.pid)
            if self.popen.poll() is None:
                self.popen.send_signal(signal.SIGINT)  # perf prints its last interval and exits
                try:
                    self.popen.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.popen.kill()
                    self.popen.wait()
            if self.popen.stderr:
                self.popen.stderr.close()
        if self.output is not None and self.output.exists():
            self.counts = [
                (self.started_at + t, c)
                for t, c in parse_perf_interval_csv(self.output.read_text())
            ]
            self.samples = [
                {
                    "t": t,
                    "event": c.event,
                    "value": c.value,
                    "unit": c.unit,
                    "status": c.status,
                    "running_share": c.running_share,
                }
                for t, c in self.counts
            ]

    def load(self, samples: list[dict]) -> None:
        super().load(samples)
        self.counts = [
            (
                s["t"],
                PerfCount(
                    s["event"],
                    s.get("value"),
                    s.get("unit", ""),
                    s.get("status", ""),
                    s.get("running_share"),
                ),
            )
            for s in samples
        ]

    def summarize(self, start: float, end: float) -> dict:
        if self.problem:
            return {}
        step = self.interval_ms / 1000
        # the intervals that ended inside the window, and the one that ended just after it
        stamped = [(t, c) for t, c in self.counts if start < t <= end + step]
        chosen = [c for _, c in stamped]
        summary = summarize_counts(chosen, seconds=len({t for t, _ in stamped}) * step or None)
        summary["scope"] = "system-wide"
        if not chosen:
            summary["note"] = "no perf interval ended inside this window"
        return summary
