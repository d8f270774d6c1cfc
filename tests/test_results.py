"""The results store, statistics and the results command, on hand-built runs."""

import json

import pandas as pd
import pytest
from conftest import run_cli

from numaspark.errors import UsageError
from numaspark.experiment.result import RunResult
from numaspark.experiment.stats import summarize
from numaspark.experiment.store import ResultStore


def _run(workload="wordcount", binding="none", wall=1.0, status="ok", warmup=False, iteration=1):
    spec = {"workload": workload, "size": "tiny", "mode": "local", "binding": binding,
            "mem_policy": None, "executors": 1, "cores_per_executor": 2, "warmup": warmup,
            "iteration": iteration, "label": None}  # fmt: skip
    return RunResult(
        spec=spec,
        environment={"topology_fingerprint": "abc"},
        status=status,
        wall_time_s=wall,
        failure_reason=None if status == "ok" else "boom",
        metrics={"executorRunTime": 100.0, "gcShare": 0.05, "elapsedTime": 900.0},
    )


def test_append_and_load_round_trip(tmp_path):
    store = ResultStore(tmp_path)
    runs = [_run(wall=1.0), _run(wall=1.2, status="failed")]
    for run in runs:
        store.append(run)
    loaded = store.load()
    assert [r.run_id for r in loaded] == [r.run_id for r in runs]
    assert loaded[1].failure_reason == "boom"
    assert (
        json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])["schema"]
        == "numaspark.run/1"
    )


def test_a_line_cut_by_a_crash_loses_only_itself(tmp_path):
    store = ResultStore(tmp_path)
    store.append(_run())
    with open(store.path, "a") as handle:
        handle.write('{"spec": {"workload": "wordc')
    assert len(store.load()) == 1
    with pytest.raises(UsageError, match="no results"):
        ResultStore(tmp_path / "nothing").load()


def test_summary_and_instability_warning():
    steady = summarize([1.0, 1.02, 0.99])
    assert steady.median == 1.0 and steady.minimum == 0.99 and steady.maximum == 1.02
    assert steady.warning("x") is None
    noisy = summarize([1.0, 1.5, 1.1])
    assert "run more repetitions" in noisy.warning("wordcount")
    assert summarize([]) is None
    assert summarize([2.0]).stdev is None


def test_results_command_lists_compares_and_exports(tmp_path):
    store = ResultStore(tmp_path)
    for wall in (1.0, 1.1, 1.2):
        store.append(_run(binding="none", wall=wall))
    for wall in (0.5, 0.6):
        store.append(_run(binding="node", wall=wall))
    store.append(_run(binding="node", wall=9.0, warmup=True, iteration=0))
    store.append(_run(binding="node", wall=0.1, status="failed"))
    proc = run_cli(
        "results",
        str(tmp_path),
        "--csv",
        str(tmp_path / "r.csv"),
        "--parquet",
        str(tmp_path / "r.parquet"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "7 run(s)" in proc.stdout
    # medians 1.1 s unbound and 0.55 s node-bound; the warm-up and the failure are left out
    assert "2.00x" in proc.stdout
    assert "0.5-0.6" in proc.stdout
    frame = pd.read_csv(tmp_path / "r.csv")
    assert len(frame) == 7 and "spark.executorRunTime" in frame.columns
    assert len(pd.read_parquet(tmp_path / "r.parquet")) == 7
