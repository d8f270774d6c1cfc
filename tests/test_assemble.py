"""Result assembly on a recorded run directory, without Spark: the records a real run stored
are made again from what its application left behind (tests/fixtures/runs/record.py)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import pytest
from conftest import FIXTURES

from numaspark import records
from numaspark.experiment.assemble import AppRecord, RunPlan, assemble, read_outputs
from numaspark.experiment.result import Environment, Measurements, RunResult, measured
from numaspark.workloads import get_workload

RECORDED = FIXTURES / "runs" / "wordcount-core"


def _stored() -> list[RunResult]:
    return [
        records.load(RunResult, json.loads(line))
        for line in (RECORDED / "results.jsonl").read_text().splitlines()
    ]


def _plan(stored: list[RunResult], iterations: int = 3) -> RunPlan:
    first = stored[0]
    return RunPlan(
        workload=get_workload(first.spec.workload),
        spec=first.spec,
        environment=first.environment,
        iterations=iterations,
        warmup=1,
        facts=first.spec.dataset["facts"],
    )


def _copy(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(RECORDED, run_dir)
    (run_dir / "results.jsonl").unlink()
    return run_dir


def test_the_recorded_run_assembles_into_the_records_it_stored(tmp_path):
    stored = _stored()
    made = assemble(read_outputs(_copy(tmp_path)), _plan(stored))
    assert [r.spec.iteration for r in made] == [r.spec.iteration for r in stored] == [0, 1, 2]
    assert [r.spec.warmup for r in made] == [True, False, False]
    for new, old in zip(made, stored, strict=True):
        assert new.status == old.status == "ok" and new.check == old.check
        assert new.wall_time_s == old.wall_time_s and new.app_id == old.app_id
        # ns times are now summed as the integers Spark wrote, then scaled: the last digit of
        # a float may differ from the per-task sum this record was stored with
        assert new.metrics == pytest.approx(old.metrics, rel=1e-12) and new.metrics["numTasks"] > 0
        assert records.dump(new.measurements) == records.dump(old.measurements)
        assert new.affinity == old.affinity and new.affinity["level"] == "core"
        assert new.effective_placement == old.effective_placement
        assert records.dump(new.spec) == records.dump(old.spec)
    assert len(measured(made)) == 2


def test_typed_accessors_read_what_the_collectors_wrote():
    figures = _stored()[-1].figures
    assert figures.seconds and figures.seconds > 0
    assert figures.cpu_utilisation is not None and 0 <= figures.cpu_utilisation <= 1
    (jvm,) = figures.jvm_use  # local mode: the driver ran the tasks
    assert jvm.name == "driver" and jvm.cpu_s > 0
    (local,) = figures.locality
    assert local.bound_nodes == [0] and local.share_on_bound_nodes == 1.0
    # no PMU on this machine: perf counted software events only, so no IPC, never a guess
    assert figures.ipc is None and figures.bandwidth.get("unavailable")


def test_an_application_that_ended_early_gets_a_failed_record(tmp_path):
    run_dir = _copy(tmp_path)
    answers = (run_dir / "answers.jsonl").read_text().splitlines()
    (run_dir / "answers.jsonl").write_text(answers[0] + "\n")  # only the warm-up finished
    app = AppRecord.load(run_dir)
    replace(app, returncode=1, failure="spark-submit exited with 1: boom").save(run_dir)
    made = assemble(read_outputs(run_dir), _plan(_stored()))
    assert [r.status for r in made] == ["ok", "failed"]
    assert made[1].failure_reason == "spark-submit exited with 1: boom"
    assert made[1].spec.iteration == 1 and not made[1].spec.warmup


def test_an_interrupted_application_keeps_only_what_finished(tmp_path):
    """Ctrl-C before spark-submit ended: no app.json, no failed record for the rest."""
    run_dir = _copy(tmp_path)
    (run_dir / "app.json").unlink()
    made = assemble(read_outputs(run_dir), _plan(_stored(), iterations=5))
    assert len(made) == 3 and all(r.ok for r in made)
    assert made[0].app.returncode is None


def test_a_wrong_answer_is_a_failed_run_with_why(tmp_path):
    stored = _stored()
    facts = {**stored[0].spec.dataset["facts"], "total_words": -1}
    plan = replace(_plan(stored), facts=facts)
    made = assemble(read_outputs(_copy(tmp_path)), plan)
    assert len(made) == 3  # every recorded iteration, each failed for the answer
    assert all(not r.ok and r.failure_reason.startswith("wrong answer") for r in made)


def test_records_round_trip_through_their_json_unchanged():
    """The recorded lines are numaspark.run/1: they load, and write back the same but for
    the fields version 2 added (absent, so null) and the readings no longer kept."""
    for line in (RECORDED / "results.jsonl").read_text().splitlines():
        data = json.loads(line)
        assert data["schema"] == "numaspark.run/1"
        again = json.loads(json.dumps(records.dump(records.load(RunResult, data)), default=str))
        data.pop("readings", None)  # computed when shown now: not kept
        data["app"]["job_time_ms"] = None
        data["spec"].update(application=None, timed=None, numa_balancing=None)
        assert again == data


def test_old_and_hand_written_records_still_load():
    old = records.load(
        RunResult,
        {
            "spec": {"workload": "wordcount", "warmup": 0, "unknown": 1},
            "environment": {"host": "h"},
            "status": "ok",
            "readings": ["GC takes 1%"],
            "measurements": None,
        },
    )
    assert old.spec.workload == "wordcount" and old.environment == Environment(host="h")
    assert old.measurements is None and old.figures == Measurements()
    assert not old.measured  # no wall time: not counted


def test_an_iteration_that_lost_an_executor_is_not_a_measurement(tmp_path):
    """Spark logs SparkListenerExecutorRemoved when an executor dies (kill -9) and relaunches
    it; the iteration it fell in keeps its right answer but is not counted as measured."""
    import zstandard

    run_dir = _copy(tmp_path)
    answers = [json.loads(line) for line in (run_dir / "answers.jsonl").read_text().splitlines()]
    second = answers[1]
    removed_ms = int((second["started"] + second["ended"]) / 2 * 1000)
    log = next((run_dir / "eventlog").glob("*/events_1_*"))
    text = zstandard.ZstdDecompressor().stream_reader(log.open("rb")).read().decode()
    lines = text.splitlines()
    lines.insert(
        -1,
        json.dumps(
            {
                "Event": "SparkListenerExecutorRemoved",
                "Timestamp": removed_ms,
                "Executor ID": "7",
                "Removed Reason": "Command exited with code 137",
            }
        ),
    )
    log.write_bytes(zstandard.ZstdCompressor().compress(("\n".join(lines) + "\n").encode()))
    made = assemble(read_outputs(run_dir), _plan(_stored()))
    assert [r.status for r in made] == ["ok", "disturbed", "ok"]
    assert "executor 7 was lost" in made[1].failure_reason and "code 137" in made[1].failure_reason
    assert len(measured(made)) == 1


def test_runs_a_killed_numaspark_did_not_store_are_recovered(tmp_path):
    """SIGKILL of numaspark after an application's iterations finished: the next run loop on
    the same --out stores them from runs/<id> (its plan, answers and event log)."""
    from numaspark.experiment.runner import Runner
    from numaspark.experiment.store import ResultStore
    from numaspark.topology import load_synthetic

    out = tmp_path / "out"
    run_dir = out / "runs" / "abc"
    shutil.copytree(RECORDED, run_dir)
    (run_dir / "results.jsonl").unlink()
    (run_dir / "app.json").unlink()  # killed before spark-submit's end was recorded
    _plan(_stored()).save(run_dir, {})
    plan = json.loads((run_dir / "plan.json").read_text())
    plan["owner"] = [999_999_999, 0.0]  # a numaspark that is gone
    (run_dir / "plan.json").write_text(json.dumps(plan))
    with Runner(load_synthetic("pack:1 core:2 pu:1"), out) as runner:
        recovered = runner.recover()  # __enter__ recovered them already: nothing left
    stored = ResultStore(out).load()
    assert recovered == [] and len(stored) == 3 and all(r.ok for r in stored)
    assert (run_dir / "stored").exists()
    with Runner(load_synthetic("pack:1 core:2 pu:1"), out):
        pass
    assert len(ResultStore(out).load()) == 3  # stored once, not again
