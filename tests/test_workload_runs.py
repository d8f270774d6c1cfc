"""Every batch workload runs at tiny size in local mode on this machine and passes its check;
a wrong answer is recorded as a failed run and never timed."""

import json
from pathlib import Path

import pytest
from conftest import run_cli

from numaspark.workloads import all_workloads

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("no_spark_left")]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return tmp_path_factory.mktemp("data")


def _results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("name", [w.name for w in all_workloads() if not w.streaming])
def test_workload_passes_its_check_at_tiny_size(tmp_path, data, name):
    out = tmp_path / "out"
    # 8 shuffle partitions instead of 200: the same plans, minutes less CI on 2 cores
    proc = run_cli("run", name, "--size", "tiny", "--out", str(out), "--data", str(data),
                   "--conf", "spark.sql.shuffle.partitions=8")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run,) = _results(out)
    assert run["status"] == "ok" and run["check"]["passed"], run["check"]
    assert run["spec"]["params"] == next(w.params for w in all_workloads() if w.name == name)
    assert run["metrics"]["numTasks"] > 0


def test_a_wrong_answer_is_a_failure_not_a_timing(tmp_path, data):
    out = tmp_path / "out"
    assert run_cli("datagen", "wordcount", "--size", "tiny", "--data", str(data)).returncode == 0
    (manifest_path,) = data.glob("wordcount/*/manifest.json")
    manifest = json.loads(manifest_path.read_text())
    manifest["facts"]["total_words"] += 1  # the generator "said" one word more than it wrote
    manifest_path.write_text(json.dumps(manifest))
    proc = run_cli(
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
