"""measure: where a JVM really ran, read back. `proc` reads a process's allowed CPUs and
nodes, its memory policy and its resident pages per node from /proc (here, or its text
fetched from another host over SSH), and `EffectiveJvm` is the one shape a run records it in,
whoever read it: numaspark from /proc, or the affinity plugin from inside an executor."""
