"""measure: metric definitions, event-log parsing and the OS / NUMA / perf collectors."""
