"""Every batch workload runs at tiny size in local mode on this machine and passes its check
(their jobs in one application; numaspark run itself on kmeans); a wrong answer is recorded
as a failed run and never timed (the command line on recorded runs: no JVM)."""

import json
from pathlib import Path

import pytest
from conftest import invoke_cli, run_cli
from recorded import SUITE, RecordedTarget, targets

from numaspark.spark.home import spark_env, spark_home
from numaspark.supervise.processes import ProcessTracker
from numaspark.workloads import all_workloads
from numaspark.workloads.datagen import prepare_input

# real Spark: each test starts with no Spark JVM on the machine and leaves none
REAL = [pytest.mark.jvm, pytest.mark.integration, pytest.mark.usefixtures("no_spark_left")]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


def _results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


BATCH = [w for w in all_workloads() if not w.streaming]


def real(test):
    for mark in REAL:
        test = mark(test)
    return test


@real
def test_every_batch_workload_passes_its_check_at_tiny_size(tmp_path, data):
    """Every batch job on its tiny input, in one application (drivers/all_batch.py)."""
    plan = []
    for workload in BATCH:
        input_dir, manifest = prepare_input(workload, workload.size("tiny"), root=data)
        plan.append(
            {
                "workload": workload.name,
                "job": workload.job,
                "input": str(input_dir),
                "params": workload.job_arguments(manifest["facts"]),
                "facts": manifest["facts"],
            }
        )
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    out = tmp_path / "answers.json"
    with ProcessTracker() as tracker:
        # 8 shuffle partitions instead of 200: the same plans, minutes less CI on 2 cores
        driver = tracker.start(
            [
                str(spark_home() / "bin" / "spark-submit"),
                "--master",
                "local[2]",
                "--conf",
                "spark.sql.shuffle.partitions=8",
                "--conf",
                "spark.ui.enabled=false",
                "--driver-memory",
                "2g",
                str(Path(__file__).parent / "drivers" / "all_batch.py"),
                str(tmp_path / "plan.json"),
                str(out),
            ],
            name="spark-submit",
            log=tmp_path / "driver.log",
            env=spark_env(),
        )
        assert driver.popen.wait(timeout=900) == 0, (tmp_path / "driver.log").read_text()[-3000:]
    answers = json.loads(out.read_text())
    for entry, workload in zip(plan, BATCH, strict=True):
        verdict = workload.check(entry["facts"], answers[workload.name]["answer"])
        assert verdict.passed, f"{workload.name}: {verdict.details}"


@real
@pytest.mark.parametrize("name", ["kmeans"])  # every workload runs in the test above
def test_numaspark_run_passes_the_check_and_records_parameters(tmp_path, data, name):
    out = tmp_path / "out"
    proc = run_cli(
        "run",
        name,
        "--size",
        "tiny",
        "--out",
        str(out),
        "--data",
        str(data),
        "--conf",
        "spark.sql.shuffle.partitions=8",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = _results(out)
    assert run["status"] == "ok" and run["check"]["passed"], run["check"]
    assert run["spec"]["params"] == next(w.params for w in all_workloads() if w.name == name)
    assert run["metrics"]["numTasks"] > 0


def test_a_wrong_answer_is_a_failure_not_a_timing(tmp_path, monkeypatch):
    """The real command line on recorded runs (tests/recorded.py: the check of an answer
    against the input's facts is numaspark's, not Spark's): the recorded wordcount's answers
    checked against a manifest that says one word more than its input has."""
    monkeypatch.setattr(
        "numaspark.experiment.runner.default_targets",
        targets(RecordedTarget(), RecordedTarget(standalone=True)),
    )
    out, data = tmp_path / "out", tmp_path / "data"
    assert invoke_cli("datagen", "wordcount", "--size", "tiny", "--data", str(data)).returncode == 0
    (manifest_path,) = data.glob("wordcount/*/manifest.json")
    manifest = json.loads(manifest_path.read_text())
    recorded = json.loads((SUITE / "answers.jsonl").read_text().splitlines()[0])["answer"]
    assert manifest["facts"]["total_words"] == recorded["total_words"]  # the same input
    manifest["facts"]["total_words"] += 1  # the generator "said" one word more than it wrote
    manifest_path.write_text(json.dumps(manifest))
    proc = invoke_cli(
        "run",
        "wordcount",
        "--size",
        "tiny",
        "--repeat",
        "2",
        "--out",
        str(out),
        "--data",
        str(data),
    )
    assert proc.returncode == 1
    runs = _results(out)
    assert len(runs) == 2 and all(r["status"] == "failed" for r in runs)
    assert all(r["failure_reason"].startswith("wrong answer: total words") for r in runs)
    assert "1.00x" not in proc.stdout  # the comparison table has no row: nothing was timed
