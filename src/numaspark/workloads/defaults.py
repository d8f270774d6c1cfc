"""A run's defaults that several rooms share, written once: the request (experiment/), the
command line (cli/), sweeps and spark-submit's watch (spark/app.py)."""

TIMEOUT_S = 1800.0  # an application still running after this long is stopped as failed
# a streaming workload: events a second the source sends, the measured window, the warm-up
STREAM_RATE = 1000.0
STREAM_WINDOW_S = 60.0
STREAM_WARMUP_S = 10.0
