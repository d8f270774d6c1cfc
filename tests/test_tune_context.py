"""`tune --replay` tunes the knobs, not the job (issue 58, item 4): a table's columns that
describe the job or its input (the workload, the dataset, its size) are context, held fixed,
and the search runs within each context. Tested on real rows of the Dataproc autoscaling
table (tests/fixtures/public/autoscaling: grep on 3.2 TB and 6.4 TB, sort on 101 GB, every
node shape of each; where they come from: tests/fixtures/public/README.md) and on the tables
recorded here (bench/tables). No Spark here."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import FIXTURES, ROOT, run_cli

from numaspark.decide.tune import (
    context_columns,
    parse_columns,
    read_table,
    replay_objective,
    split,
    tune,
)
from numaspark.errors import UsageError

DATAPROC = (
    FIXTURES / "public" / "autoscaling" / "data" / "regular_dataproc" / "regular_dataproc.csv"
)
CONTEXT = ("algorithm", "dataset_size_bytes")
RECORDED = sorted((ROOT / "bench" / "tables").glob("*.csv"))


def _rows() -> list[dict]:
    with DATAPROC.open() as table:
        return list(csv.DictReader(table))


def _contexts_of_the_table() -> list[dict]:
    """Each (algorithm, input size) of the fixture, in its order, as the JSON gives it."""
    found = {(r["algorithm"], int(r["dataset_size_bytes"])) for r in _rows()}
    return [dict(zip(CONTEXT, k, strict=True)) for k in sorted(found)]


def _tune_json(*args: str) -> dict:
    proc = run_cli("tune", "--replay", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_columns_that_name_the_job_or_its_input_are_context():
    """By their names' words: the workload (algorithm, query, a test case's command) and its
    input (dataset, input, size; a results table's param.* columns), not settings named with
    such a word (partitions of the input, memory size), nor the rules' own names."""
    public = [
        # autoscaling, c3o, scout (as bench/public_tables.py names it), gatk, loftune
        *("algorithm", "dataset_size_bytes", "cpu_cores_per_node", "memory_gb_per_node"),
        *("scaleout", "instance_count", "machine_type", "data_size_MB", "workload"),
        *("datasize", "nodes", "family", "vcpus_per_node", "Command", "Number of executors"),
        *("Executor cores", "Executor memory", "scenario", "test_case"),
    ]
    assert list(context_columns(public)) == [
        "algorithm",
        "dataset_size_bytes",
        "data_size_MB",
        "workload",
        "datasize",
        "Command",
        "scenario",
        "test_case",
    ]
    ours = ["workload", "size", "mode", "executors", "binding", "partitions", "param.k"]
    assert list(context_columns(ours)) == ["workload", "size", "param.k"]
    settings = [
        "input_partitions",
        "executor_memory_size",
        "partition_size",
        "spark.sql.files.maxPartitionBytes",
        "data_per_node",
        "spark.executor.memory",
        # a size or a count of jobs that is a setting's (found by a review)
        *("heap_size", "executor_heap_size", "page_size", "pool_size", "cache_size"),
        "concurrent_jobs",
    ]
    assert context_columns(settings) == {}
    # camelCase names are read by their words
    assert list(context_columns(["inputSize", "datasetSize", "workloadName", "heapSize"])) == [
        "inputSize",
        "datasetSize",
        "workloadName",
    ]
    # declared: context (or none, which says the same), or a knob (undoes a name's reading)
    declared = parse_columns(["binding=none", "algorithm=knob", "mode=context"])
    assert declared == {"binding": "context", "algorithm": "knob", "mode": "context"}
    assert context_columns(["algorithm", "binding", "mode", "size"], declared) == {
        "binding": "declared",
        "mode": "declared",
        "size": "from its name",
    }


def test_the_dataproc_table_is_tuned_within_each_workload_and_input_size():
    """Before: one search over every row, whose moves were "fewer dataset_size_bytes" and
    whose best was sort on 101 GB against the start's grep on 3.2 TB. Now: a search per
    (algorithm, dataset_size_bytes), each with its own start, moves and best, every trial
    with its context's values."""
    found = _tune_json(str(DATAPROC), "--minimize", "runtime", "--budget", "6")
    assert found["schema"] == "numaspark.tune/2"  # contexts[]: the fields moved
    assert "context, held fixed: algorithm (from its name" in found["held"]
    contexts = found["contexts"]
    assert [c["context"] for c in contexts] == _contexts_of_the_table()
    runtime = {
        (r["algorithm"], int(r["dataset_size_bytes"]), *(int(r[k]) for k in KNOBS)): float(
            r["runtime"]
        )
        for r in _rows()
    }
    for context in contexts:
        trials = context["trials"]
        assert 1 <= len(trials) <= 6 and trials[0]["source"].startswith("prior")
        for trial in trials:
            assert {k: trial["params"][k] for k in CONTEXT} == context["context"], trial
            key = tuple(trial["params"][k] for k in (*CONTEXT, *KNOBS))
            assert trial["value"] == runtime[key]  # the table's own row
            assert "dataset_size_bytes" not in trial["source"]  # never a move of the input
        best = context["best"]
        assert {k: best["params"][k] for k in CONTEXT} == context["context"]
        assert best["value"] == min(t["value"] for t in trials)
        assert "searched without a prior: algorithm" not in context["prior"]


KNOBS = ("cpu_cores_per_node", "memory_gb_per_node", "scaleout")


def test_the_search_never_asks_for_another_context():
    """Every configuration the search asks the table for has its context's values, whatever
    the budget (here enough to measure every row of each context), and its best is the best
    of that context's rows."""
    space, lookup = read_table(DATAPROC, "runtime")
    objective = replay_objective(lookup, space)
    asked: list[dict] = []  # what the table was asked, whole rows

    def table(params):
        asked.append(dict(params))
        return objective(params)

    held = context_columns(space.names)
    assert list(held) == list(CONTEXT)
    contexts = split(space, table, held)
    assert [c.values for c in contexts.each] == _contexts_of_the_table()
    for context in contexts.each:
        assert context.space.names == list(KNOBS)
        asked.clear()
        found = context.whole(
            tune(context.space, context.objective, budget=20, seed=1, early_stop=False)
        )
        assert len(asked) == len(context.space.candidates) == 10  # every node shape, once
        assert all({k: a[k] for k in CONTEXT} == context.values for a in asked), asked
        assert [t.params for t in found.trials] == [{n: a[n] for n in space.names} for a in asked]
        rows = [
            v
            for k, v in lookup.items()
            if dict(zip(space.names, k, strict=True)).items() >= context.values.items()
        ]
        assert found.best.value == min(rows)  # the context's own best, not another job's


def test_text_output_has_a_section_per_context():
    proc = run_cli("tune", "--replay", str(DATAPROC), "--minimize", "runtime", "--budget", "2")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("\ncontext algorithm=") == len(_contexts_of_the_table())
    assert "context algorithm=grep, dataset_size_bytes=3232000000000" in out
    assert "context algorithm=sort, dataset_size_bytes=101000000000" in out
    assert out.count("stopped: ") == len(_contexts_of_the_table())
    assert "held fixed: algorithm" in out.splitlines()[0]


def test_none_holds_a_column_and_knob_searches_it(tmp_path):
    """`--column NAME=none` (or `=context`) holds a column the search would move; `=knob`
    makes a column read as context a knob again: one search over every row, as before."""
    kmeans = ROOT / "bench" / "tables" / "tune-kmeans.csv"
    held = _tune_json(str(kmeans), "--column", "binding=none", "--budget", "3")
    bindings = sorted({r["binding"] for r in csv.DictReader(kmeans.open())})
    assert [c["context"] for c in held["contexts"]] == [{"binding": b} for b in bindings]
    for context in held["contexts"]:
        assert all(
            t["params"]["binding"] == context["context"]["binding"] for t in context["trials"]
        )
    assert "binding (declared)" in held["held"]
    searched = _tune_json(
        str(DATAPROC),
        "--minimize",
        "runtime",
        "--column",
        "algorithm=knob",
        "--column",
        "dataset_size_bytes=knob",
        "--budget",
        "12",
        "--no-early-stop",
    )
    (one,) = searched["contexts"]
    assert searched["held"] == "" and one["context"] == {}
    assert (
        len({(t["params"]["algorithm"], t["params"]["dataset_size_bytes"]) for t in one["trials"]})
        > 1
    )


def test_a_table_of_context_only_is_one_line(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("workload,size,wall_s\nsort,1,3\nsort,2,5\ngrep,1,2\n")
    proc = run_cli("tune", "--replay", str(table))
    assert proc.returncode == 2 and "nothing to search" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    with pytest.raises(UsageError, match="every parameter column is context"):
        space, lookup = read_table(table, "wall_s")
        split(space, replay_objective(lookup, space), context_columns(space.names))


@pytest.mark.parametrize("table", RECORDED, ids=[t.stem for t in RECORDED])
def test_the_recorded_tables_replay_as_before(table):
    """bench/tables have no column that describes the job (one workload each): one search
    of the whole table, the trials of `tune` on it unchanged."""
    side = json.loads(table.with_suffix(".json").read_text())
    space, lookup = read_table(table, side["minimize"])
    assert context_columns(space.names) == {}
    (whole,) = split(space, replay_objective(lookup, space), {}).each
    assert whole.space is space and whole.values == {}
    before = tune(space, replay_objective(lookup, space), budget=8, seed=2)
    after = whole.whole(tune(whole.space, whole.objective, budget=8, seed=2))
    assert [(t.params, t.value, t.source) for t in after.trials] == [
        (t.params, t.value, t.source) for t in before.trials
    ]
