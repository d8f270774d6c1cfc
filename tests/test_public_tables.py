"""bench/public_tables.py reads public Spark run datasets right (samples of each in
tests/fixtures/public/, sources in its README.md), and bench/public_replay.py reports random
search's exact figures from the tables themselves."""

from __future__ import annotations

import itertools
import json
import statistics
from pathlib import Path

import public_replay
import public_tables
import pytest
from public_tables import Source
from tune_models import evaluations_to, random_search, random_search_expected

from numaspark.decide.tune import read_table
from numaspark.errors import UsageError

FIXTURES = Path(__file__).parent / "fixtures" / "public"


def tables_of(convert, name: str) -> dict:
    return {t.name: t for t in convert(Source(FIXTURES / name))}


def written(table, tmp_path: Path) -> tuple:
    csv = tmp_path / f"{table.name}.csv"
    table.frame.to_csv(csv, index=False)
    return read_table(csv, table.minimize)


def test_autoscaling_one_table_per_job_and_input_size(tmp_path):
    tables = tables_of(public_tables.autoscaling, "autoscaling")
    assert sorted(tables) == [
        "autoscaling.grep-dataset_size_bytes=3232000000000",
        "autoscaling.grep-dataset_size_bytes=6464000000000",
        "autoscaling.sort-dataset_size_bytes=101000000000",
    ]
    grep = tables["autoscaling.grep-dataset_size_bytes=3232000000000"]
    assert grep.fixed == {"dataset_size_bytes": 3232000000000}
    assert list(grep.frame.columns) == [
        "cpu_cores_per_node",
        "memory_gb_per_node",
        "scaleout",
        "runtime",
    ]
    space, lookup = written(grep, tmp_path)
    assert len(lookup) == 10 and space.values["scaleout"] == [2, 4, 8, 16]
    assert lookup[(8, 8, 16)] == 516.92  # the fixture's row: 8 cores, 8 GB x 16 nodes


def test_c3o_fixes_the_job_and_keeps_repetitions_for_their_median(tmp_path):
    tables = tables_of(public_tables.c3o, "c3o")
    names = sorted(tables)
    assert [n.rsplit("-", 1)[1] for n in names] == ["p_occurrence=0.0", "p_occurrence=0.5"]
    table = tables[names[1]]
    assert table.fixed == {
        "data_size_MB": 15150,
        "line_length": 100,
        "lines": 150000000,
        "p_occurrence": 0.5,
    }
    # the machine type split into its family and vCPUs; slots and memory follow from it
    assert list(table.frame.columns) == [
        "instance_count",
        "family",
        "vcpus_per_node",
        "gross_runtime",
    ]
    assert len(table.frame) == 20 and table.configurations == 4
    space, lookup = written(table, tmp_path)
    assert space.values["family"] == ["c4", "m4"] and not space.ordered("family")
    assert lookup[(2, "c4", 8)] == 154  # the median of 150, 152, 154, 156, 162
    assert lookup[(4, "m4", 8)] == 138  # of 136, 138, 138, 140, 140


def test_scout_leaves_out_runs_that_did_not_complete(tmp_path):
    tables = tables_of(public_tables.scout, "scout")
    big = tables["scout.join_spark_bigdata-datasize=bigdata"]
    assert big.fixed == {"datasize": "bigdata"}
    assert big.left_out == []
    _, lookup = written(big, tmp_path)
    assert lookup == {(4, "c4", 2): 1817.555, (10, "c4", 2): 777.986, (10, "c4", 8): 305.064}
    assert tables["scout.join_spark_huge-datasize=huge"].configurations == 1
    kmeans = tables["scout.kmeans_spark1.5_bigdata-datasize=bigdata"]
    assert kmeans.left_out == ["4 x c4.large kmeans_spark1.5_bigdata"]  # the 2-hour timeout
    assert kmeans.frame.to_dict("records") == [
        {"nodes": 8, "family": "c4", "vcpus_per_node": 2, "elapsed_s": 6761.987263486997}
    ]


def test_loftune_keeps_the_knobs_and_drops_the_query_embeddings():
    tables = tables_of(public_tables.loftune, "loftune")
    q1 = tables["loftune.q1-scenario=TPCH_100G_single"]
    assert len(q1.params) == 22 and all(p.startswith("spark.") for p in q1.params)
    assert list(q1.frame.columns) == [*q1.params, "duration_ms"]
    assert q1.configurations == 4 and q1.frame["duration_ms"].min() == 31750
    assert tables["loftune.q10-scenario=TPCH_100G_single"].configurations == 2


def test_gatk_keeps_its_own_column_names_and_leaves_out_failed_runs(tmp_path):
    tables = tables_of(public_tables.gatk, "gatk")
    two = tables[
        "gatk.test_case_2-Command=CountReadsSpark_-I_hdfs_user_tom_q4_spark_eval_"
        "WGS-G94982-NA12878.bam"
    ]
    assert two.workload == "test_case_2" and two.left_out == []
    assert two.fixed == {
        "Command": "CountReadsSpark -I hdfs:///user/tom/q4_spark_eval/WGS-G94982-NA12878.bam"
    }
    assert list(two.frame.columns) == [
        "Number of executors",
        "Executor cores",
        "Executor memory",
        "Time (mins)",
    ]
    space, lookup = written(two, tmp_path)
    assert space.values["Number of executors"] == [2, 4, 8, 16] and len(lookup) == 6
    assert lookup[(8, 2, "1g")] == 8.35 and lookup[(16, 1, "1g")] == 8.35
    five = tables[
        "gatk.test_case_5-Command=CountReadsSpark_-I_hdfs_user_tom_q4_spark_eval_"
        "WGS-G94982-NA12878.bam"
    ]
    # the 128 MB executors failed (exit code 3, after 0.76 minutes): not a time to compare
    assert five.left_out == ["4 x 4 cores x 128m: exit code 3"]
    assert five.configurations == 4 and 0.76 not in five.frame["Time (mins)"].tolist()


def test_bell_reads_the_spark_jobs_only(tmp_path):
    tables = tables_of(public_tables.bell, "bell")
    assert list(tables) == ["bell.grep"]  # wordcount.flink.csv is Flink's: left out
    grep = tables["bell.grep"]
    assert grep.fixed == {} and list(grep.frame.columns) == ["Nodes", "Runtime"]
    assert len(grep.frame) == 21 and grep.configurations == 3  # 7 repetitions each
    _, lookup = written(grep, tmp_path)
    assert lookup == {(4,): 846235.0, (8,): 531776.0, (12,): 394254.0}  # their medians


def test_a_mirror_of_neither_is_one_line():
    with pytest.raises(UsageError, match="no scripts/spark_eval/test_case_"):
        public_tables.gatk(Source(FIXTURES / "bell"))
    with pytest.raises(UsageError, match=r"no src/test/resources/\*.spark.csv"):
        public_tables.bell(Source(FIXTURES / "gatk"))


def all_sources() -> list[str]:
    return [f"--source={d}={FIXTURES / d}" for d in public_tables.CONVERTERS]


def test_the_index_and_min_configurations(tmp_path, capsys):
    assert (
        public_tables.main([*all_sources(), "--out", str(tmp_path), "--min-configurations", "4"])
        == 0
    )
    index = json.loads((tmp_path / "index.json").read_text())
    assert [e["table"].split(".", 1)[0] for e in index] == ["autoscaling"] * 3 + [
        "c3o",
        "loftune",
        "gatk",
        "gatk",
    ]
    assert all((tmp_path / e["csv"]).is_file() for e in index)
    out = capsys.readouterr().out
    assert "c3o (dos-group/c3o-experiments at (working tree)): 1 table(s); 1 with fewer" in out
    assert "bell (dos-group/allocation-assistant at (working tree)): 0 table(s); 1 with" in out


def test_only_the_datasets_asked_for(tmp_path, capsys):
    assert (
        public_tables.main(
            [
                *all_sources(),
                "--out",
                str(tmp_path),
                "--dataset",
                "gatk",
                "--dataset",
                "bell",
                "--min-configurations",
                "3",
            ]
        )
        == 0
    )
    index = json.loads((tmp_path / "index.json").read_text())
    assert [e["dataset"] for e in index] == ["gatk", "gatk", "bell"]
    assert [e["repository"] for e in index][-1] == "dos-group/allocation-assistant"
    assert public_tables.main(["--dataset", "nosuch", "--out", str(tmp_path)]) == 2
    assert "--dataset nosuch: give one of autoscaling, c3o" in capsys.readouterr().err


def test_a_bad_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "c3o"
    bad.mkdir()
    (bad / "grep.tsv").write_text("instance_count\tmachine_type\tgross_runtime\n2\tc4.large\t9\n")
    assert public_tables.main([f"--source=c3o={bad}", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("Error: ") and "\n" not in err and "lacks column(s) slots, memory" in err
    assert public_tables.main([f"--source=c3o={tmp_path / 'none'}"]) == 2
    assert "is not a directory" in capsys.readouterr().err
    assert public_tables.main(["--source=nosuch=/tmp"]) == 2
    assert "DATASET one of autoscaling, c3o, scout, loftune, gatk, bell" in capsys.readouterr().err


def test_a_mirror_that_is_not_the_dataset_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="no data/.*all_history_data.csv"):
        public_tables.loftune(Source(FIXTURES / "c3o"))


def test_random_search_expected_is_exact():
    """(N + 1) / (k + 1): the mean, over every order of N rows, of the first of k hits."""
    for rows, hits in ((6, 1), (6, 2), (7, 3)):
        lookup = {(i,): (1.0 if i < hits else 2.0) for i in range(rows)}
        firsts = [
            next(n for n, i in enumerate(order, 1) if i < hits)
            for order in itertools.permutations(range(rows))
        ]
        assert random_search_expected(rows, hits) == pytest.approx(statistics.mean(firsts))
        drawn = [evaluations_to(random_search(lookup, s), 1.0) for s in range(2000)]
        assert statistics.mean(drawn) == pytest.approx(random_search_expected(rows, hits), rel=0.1)


def test_the_bench_puts_random_search_exact_figures_beside_the_tuner(tmp_path, capsys):
    public_tables.main([*all_sources(), "--out", str(tmp_path)])
    capsys.readouterr()
    saved = tmp_path / "rows.jsonl"
    assert (
        public_replay.main(
            [
                str(tmp_path),
                "--seeds",
                "2",
                "--only",
                "grep-dataset_size_bytes=3232",
                "--save",
                str(saved),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert public_replay.main(["--load", str(saved)]) == 0  # the report again, not replayed
    assert capsys.readouterr().out == out
    row = next(line for line in out.splitlines() if line.startswith("| autoscaling.grep"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # 10 configurations, 1 within 5% (516.92; the next, 744.7, is 44% slower): 11 / 2
    assert cells[1:3] == ["10", "1"] and cells[4] == "5.5, 5"
    assert "- autoscaling: goal met on" in out
    assert public_replay.main([str(tmp_path / "missing")]) == 2
    assert "run bench/public_tables.py" in capsys.readouterr().err


def test_the_bench_can_replay_a_column_under_a_name_the_rules_know(tmp_path, capsys):
    """--as scaleout=workers: the column read as the rules' executors (as tune --column)."""
    public_tables.main([*all_sources(), "--out", str(tmp_path)])
    capsys.readouterr()
    argv = [str(tmp_path), "--seeds", "1", "--only", "sort-dataset", "--json"]
    assert public_replay.main([*argv, "--as", "scaleout=workers", "--no-early-stop"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["renamed"] == {"scaleout": "executors"} and row["early stop"] is False
    assert "scaleout (= executors, declared)" in row["prior"]
    assert public_replay.main([*argv, "--as", "scaleout"]) == 2
    assert "--as 'scaleout': give COLUMN=ROLE" in capsys.readouterr().err
    assert public_replay.main([*argv, "--as", "scaleout=nodez"]) == 2  # as tune --column reads it
    assert "unknown role 'nodez'" in capsys.readouterr().err


def test_a_report_without_its_time_is_one_line(tmp_path, capsys):
    run = tmp_path / "scout" / "dataset" / "osr_multiple_nodes" / "4_c4.large_join_spark_bigdata_1"
    run.mkdir(parents=True)
    (run / "report.json").write_text('{"completed": true, "datasize": "bigdata"}')
    assert public_tables.main([f"--source=scout={tmp_path / 'scout'}", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        "\n" not in err and "does not hold oxhead/scout's layout (KeyError: 'elapsed_time')" in err
    )
