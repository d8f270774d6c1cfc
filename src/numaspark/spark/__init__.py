"""run: Spark's home, spark-submit and its watcher, clusters here and on hosts, the affinity plugin
and the profiler."""
