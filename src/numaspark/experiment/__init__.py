"""measure/experiment: run specs, the runner, the results store, statistics."""
