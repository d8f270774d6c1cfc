"""measure: collectors that sample the OS, NUMA placement and hardware counters during a run.

Each collector samples at an interval (default 1 s) from a thread started with
the application and stopped with it; every sample keeps cumulative readings
with its time, so any window (one iteration of a workload) is summarized from
the samples that bound it. A collector that fails records why and stops; the
run it measures goes on.
"""

from numaspark.collect.base import Collector, CollectorSet, default_collectors

__all__ = ["Collector", "CollectorSet", "default_collectors"]
