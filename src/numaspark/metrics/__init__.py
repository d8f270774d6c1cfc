"""measure: the metric registry, event logs (read in segments, parsed in parallel), GC, memory,
streaming progress and perf stat figures. The collectors that sample during a run are in
collect/."""
