"""The results store, statistics and the results command, on hand-built runs."""

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import FIXTURES, run_cli

from numaspark import records
from numaspark.errors import UsageError
from numaspark.experiment.result import Artifacts, RunResult
from numaspark.experiment.stats import summarize
from numaspark.experiment.store import ResultStore


def _run(workload="wordcount", binding="none", wall=1.0, status="ok", warmup=False, iteration=1):
    spec = {
        "workload": workload,
        "size": "tiny",
        "mode": "local",
        "binding": binding,
        "mem_policy": None,
        "executors": 1,
        "cores_per_executor": 2,
        "warmup": warmup,
        "iteration": iteration,
        "label": None,
    }
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
        == "numaspark.run/2"
    )


def test_a_record_of_a_schema_this_version_cannot_read_is_skipped_with_why(tmp_path):
    store = ResultStore(tmp_path)
    store.append(_run(wall=1.0))
    line = json.loads((tmp_path / "results.jsonl").read_text())
    with open(tmp_path / "results.jsonl", "a") as handle:
        handle.write(json.dumps({**line, "schema": "numaspark.run/9", "run_id": "x"}) + "\n")
    loaded = store.load()
    assert [r.run_id for r in loaded] == [line["run_id"]]
    assert "numaspark.run/9" in store.skipped[0] and "newer numaspark" in store.skipped[0]


def test_a_line_cut_by_a_crash_loses_only_itself(tmp_path):
    store = ResultStore(tmp_path)
    store.append(_run())
    with open(store.path, "a") as handle:
        handle.write('{"spec": {"workload": "wordc')
    assert len(store.load()) == 1
    with pytest.raises(UsageError, match="no results"):
        ResultStore(tmp_path / "nothing").load()


def test_lines_that_are_not_runs_are_skipped_and_named(tmp_path):
    store = ResultStore(tmp_path)
    store.append(_run())
    good = store.path.read_text()
    wrong = json.loads(good)
    wrong["wall_time_s"] = "fast"
    nul = json.loads(good)
    nul["spec"]["label"] = "a\x00b"
    with open(store.path, "a") as handle:
        handle.write(json.dumps(wrong) + "\n" + json.dumps(nul) + "\n[1, 2]\n")
    assert len(store.load()) == 1
    [note] = store.skipped
    assert "skipped 3 line(s)" in note and '"wall_time_s" is of type str' in note
    assert "NUL byte" in note and "JSON list" in note


def test_a_json_array_instead_of_lines_is_a_clear_error(tmp_path):
    (tmp_path / "results.jsonl").write_text(
        json.dumps([records.dump(_run()), records.dump(_run())])
    )
    with pytest.raises(UsageError, match="no line is a run result .*JSON list"):
        ResultStore(tmp_path).load()
    proc = run_cli("results", str(tmp_path))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_a_resumed_configuration_counts_only_its_last_application(tmp_path):
    """Interrupted inside a configuration (one of two iterations stored), then resumed: the
    configuration's two runs come from the rerun, not three from two applications."""
    from dataclasses import replace

    store = ResultStore(tmp_path)

    def run(app, iteration):
        r = _run(iteration=iteration)
        return replace(r, app_id=app, spec=replace(r.spec, config="c1", iterations=2))

    for r in (run("app-1", 0), run("app-2", 0), run("app-2", 1)):
        store.append(r)
    loaded = store.load()
    assert [r.app_id for r in loaded] == ["app-2", "app-2"]
    assert "1 run(s) of 1 interrupted application(s) left out" in store.skipped[0]


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


def test_metrics_are_typed_from_the_registry_and_read_as_a_mapping():
    from dataclasses import fields

    from numaspark.metrics.registry import DERIVED_METRICS, METRIC_NAMES, REPORT_ORDER, Metrics

    assert (
        tuple(f.name for f in fields(Metrics)) == METRIC_NAMES == (*REPORT_ORDER, *DERIVED_METRICS)
    )
    measured = Metrics.of({"gcShare": 0.25, "numTasks": 4.0, "notAMetric": 1.0})
    assert measured.gcShare == 0.25 and measured["numTasks"] == 4.0 and measured.cpuShare is None
    assert len(measured) == len(METRIC_NAMES) and "notAMetric" not in records.dump(measured)
    assert {**measured}["gcShare"] == 0.25 and measured.get("gcShare") == 0.25
    assert not Metrics() and records.dump(Metrics()) == {}  # a run without an event log has none
    with pytest.raises(KeyError):
        _ = measured["notAMetric"]
    with pytest.raises(AttributeError):
        _ = _run(wall=1.0).metrics.gcShre  # a misspelt name fails instead of reading None


def test_artifacts_are_typed_and_stored_as_before():
    """The stored artifacts dict of earlier runs reads into `Artifacts` and writes back the
    same; a key a newer numaspark wrote is kept."""
    stored = {
        "run_dir": "/r",
        "event_log": None,
        "spark_submit_log": "/r/spark-submit.log",
        "flame_graphs": ["/r/profiles/profile-1.svg"],
        "later": {"x": 1},
    }
    artifacts = records.load(Artifacts, stored)
    assert artifacts.flame_graphs == ("/r/profiles/profile-1.svg",) and artifacts.gc_logs == ()
    assert artifacts.collector_samples is None and artifacts.extra == {"later": {"x": 1}}
    assert records.dump(artifacts) == stored
    # a record whose artifacts are null (or absent) has none
    assert RunResult({"workload": "w"}, {}, "ok", artifacts=None).artifacts == Artifacts()
    assert (
        records.load(RunResult, {**records.dump(_run()), "artifacts": None}).artifacts
        == Artifacts()
    )


def _two_places(tmp_path: Path) -> Path:
    """The recorded wordcount runs, and the same runs as if on a cluster at another address
    planned as another topology: two places whose times do not compare."""
    directory = tmp_path / "mixed"
    directory.mkdir()
    lines = (FIXTURES / "runs" / "wordcount-core" / "results.jsonl").read_text().splitlines()
    there = []
    for line in lines:
        record = json.loads(line)
        record["run_id"] += "x"
        record["spec"]["cluster"] = "spark://10.216.1.11:7077"
        record["environment"]["topology_fingerprint"] = "0123456789abcdef"
        there.append(json.dumps(record))
    (directory / "results.jsonl").write_text("\n".join(lines + there) + "\n")
    return directory


@pytest.mark.slow
def test_runs_of_two_places_are_compared_only_when_asked(tmp_path):
    """results, classify, advise and report refuse, in one line, runs of a host and of a
    cluster (or of two topologies); --mixed compares them anyway."""
    directory = _two_places(tmp_path)
    report = tmp_path / "r.html"
    for command in (
        ["results", str(directory)],
        ["classify", str(directory)],
        ["advise", str(directory)],
        ["report", str(directory), "-o", str(report)],
    ):
        refused = run_cli(*command)
        [line] = refused.stderr.strip().splitlines()
        assert refused.returncode == 2, (command, refused.stderr)
        assert "holds runs of 2 places" in line and "give --mixed" in line, line
        assert "vm (topology dc3e818f4ab94df0): 3 run(s)" in line
        assert "spark://10.216.1.11:7077 (topology 0123456789abcdef): 3 run(s)" in line
        asked = run_cli(*command, "--mixed")
        assert asked.returncode == 0, (command, asked.stderr)
    assert report.exists()
