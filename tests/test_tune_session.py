"""One run loop per tune session (issue 59, item 3): a live tune keeps the standalone cluster
numaspark started across its trials while the placement's shape stays the same, and restarts
it only when the shape changes. Real Spark on this machine: a standalone cluster of one
one-core executor (an executor takes ~15 s to start here, which every trial paid before)."""

from __future__ import annotations

import json

import pytest

from numaspark.decide.tune import Space, tune
from numaspark.decide.tune_runs import PARAMETERS, live_objective, live_space
from numaspark.experiment.runner import Runner
from numaspark.spark.standalone import Cluster
from numaspark.topology import load_machine


@pytest.mark.jvm
@pytest.mark.integration
@pytest.mark.usefixtures("no_spark_left")
def test_a_tune_of_three_trials_of_one_shape_starts_the_cluster_once(tmp_path, monkeypatch):
    """Three candidates that differ only in shuffle partitions (1, 2, 4 per task slot) keep
    one placement shape: the tune's three trials start one Master. Fails if each trial opens
    a run loop of its own (``runner=None`` in live_objective: three starts, one per trial)."""
    starts: list[int] = []
    start = Cluster.start.__func__

    def counted(cls, *args, **kwargs):
        starts.append(1)
        return start(cls, *args, **kwargs)

    monkeypatch.setattr(Cluster, "start", classmethod(counted))
    here = load_machine()
    _, configs = live_space(here, "wordcount", "tiny", local=False)
    one_shape = {
        key: config for key, config in configs.items() if key[:5] == ("standalone", 1, 1, 1, "none")
    }
    assert sorted(key[5] for key in one_shape) == [1, 2, 4]  # partitions per task slot
    values = {name: sorted({k[i] for k in one_shape}) for i, name in enumerate(PARAMETERS)}
    space = Space(values, list(one_shape))
    out = tmp_path / "out"
    with Runner(here, out) as runner:
        objective = live_objective(
            one_shape, here, out, repeat=1, warmup=0, data=tmp_path / "data", runner=runner
        )
        found = tune(space, objective, budget=3, early_stop=False)
    assert len(found.trials) == 3
    runs = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["status"] == "ok" for r in runs), [r.get("failure") for r in runs]
    partitions = {r["spec"]["spark_conf"]["spark.sql.shuffle.partitions"] for r in runs}
    assert partitions == {"1", "2", "4"}
    assert len(starts) == 1, f"the Master started {len(starts)} times for one shape"
