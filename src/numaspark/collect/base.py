"""The sampling thread and the collector interface."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

SAMPLES_FILE = "collectors.jsonl"  # in the run directory: one line per collector

# pid -> (JVM name, the NUMA nodes its memory is bound to, or None when unbound)
JvmMap = dict[int, tuple[str, frozenset[int] | None]]


class Collector:
    """One source of measurements. Subclasses implement ``sample`` and ``summarize``."""

    name = "collector"

    def __init__(self) -> None:
        self.samples: list[dict] = []
        self.problem: str | None = None  # why it stopped collecting, or why it never could

    def start(self, run_dir: Path) -> None:
        """Called once before the first sample."""

    def sample(self, now: float, jvms: JvmMap) -> dict | None:
        """One reading at ``now`` (epoch seconds), cumulative where the source is a counter."""
        raise NotImplementedError

    def stop(self) -> None:
        """Called once after the last sample."""

    def load(self, samples: list[dict]) -> None:
        """Take recorded samples (``collectors.jsonl``) as if this collector had sampled them."""
        self.samples = list(samples)

    def summarize(self, start: float, end: float) -> dict:
        """Figures for the window ``[start, end]`` (epoch seconds)."""
        raise NotImplementedError

    def window(self, start: float, end: float) -> list[dict]:
        """The samples that bound ``[start, end]``: the last one at or before ``start`` (when
        there is one) through the first one at or after ``end``."""
        inside = [s for s in self.samples if start <= s["t"] <= end]
        before = [s for s in self.samples if s["t"] < start]
        after = [s for s in self.samples if s["t"] > end]
        return ([before[-1]] if before else []) + inside + ([after[0]] if after else [])


class CollectorSet(threading.Thread):
    """Samples every collector every ``interval_s`` until stopped; never raises into the run."""

    def __init__(
        self,
        collectors: list[Collector],
        jvms: Callable[[], JvmMap],
        run_dir: Path,
        interval_s: float = 1.0,
    ) -> None:
        super().__init__(daemon=True, name="numaspark-collectors")
        self.collectors = collectors
        self.jvms = jvms
        self.run_dir = run_dir
        self.interval_s = interval_s
        self._stop_event = threading.Event()
        self.overhead_s = 0.0  # time spent sampling, reported with the results
        self.jvms_problem: str | None = None  # why the watcher's view failed, the first time

    def begin(self) -> None:
        for collector in self.collectors:
            _guard(collector, lambda c=collector: c.start(self.run_dir))
        self.start()

    def run(self) -> None:
        while True:
            self._sample_all()
            if self._stop_event.wait(self.interval_s):
                break
        self._sample_all()  # the closing sample bounds the last window

    def _sample_all(self) -> None:
        began = time.perf_counter()
        now = time.time()
        try:
            jvms = self.jvms()
        except Exception as exc:  # noqa: BLE001 - the watcher's view is best effort: kept why
            jvms = {}
            self.jvms_problem = self.jvms_problem or (
                f"the JVMs were not known to one sample or more ({type(exc).__name__}: {exc}): "
                "their per-JVM figures are missing there"
            )
        for collector in self.collectors:
            if collector.problem is None:
                reading = _guard(collector, lambda c=collector: c.sample(now, jvms))
                if reading is not None:
                    collector.samples.append({"t": now, **reading})
        self.overhead_s += time.perf_counter() - began

    def finish(self) -> None:
        self._stop_event.set()
        if self.is_alive():
            self.join(timeout=30)
        for collector in self.collectors:
            _guard(collector, collector.stop)
        self.save()

    def save(self) -> Path:
        """Every sample, one JSON line per collector, next to the run's other artifacts."""
        path = self.run_dir / SAMPLES_FILE
        with open(path, "w") as out:
            for c in self.collectors:
                out.write(
                    json.dumps(
                        {
                            "collector": c.name,
                            "problem": c.problem,
                            "interval_s": self.interval_s,
                            "sampling_s": round(self.overhead_s, 3),
                            "jvms_problem": self.jvms_problem,
                            "samples": c.samples,
                        }
                    )
                    + "\n"
                )
        return path

    def summarize(self, start: float, end: float) -> dict:
        """Every collector's figures for the window ``[start, end]`` (epoch seconds)."""
        return summarize_window(
            self.collectors, start, end, self.interval_s, self.overhead_s, self.jvms_problem
        )


def summarize_window(
    collectors: list[Collector],
    start: float,
    end: float,
    interval_s: float,
    sampling_s: float,
    jvms_problem: str | None = None,
) -> dict:
    """Every collector's figures for one window, and what could not be measured."""
    result: dict = {"interval_s": interval_s, "sampling_s": round(sampling_s, 3)}
    if jvms_problem:
        result["jvms_problem"] = jvms_problem
    for collector in collectors:
        summary = _guard(collector, lambda c=collector: c.summarize(start, end))
        entry = summary if isinstance(summary, dict) else {}
        if collector.problem:
            entry["problem"] = collector.problem
        result[collector.name] = entry
    return result


def _guard(collector: Collector, call: Callable):
    """Run ``call``; a failure disables the collector with the reason, never the run."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - a collector must not break what it measures
        collector.problem = collector.problem or f"{type(exc).__name__}: {exc}"
        return None
