"""The workload registry, the generators (determinism, size) and the checks."""

import json

import pytest

from numaspark.errors import UsageError
from numaspark.workloads import all_workloads, get_workload
from numaspark.workloads.datagen import prepare_input

BATCH = [w.name for w in all_workloads() if not w.streaming]


def test_registry_lists_the_batch_suite():
    assert {"wordcount", "grep", "sort", "terasort", "sql-aggregation", "sql-join", "sql-scan",
            "kmeans", "gmm", "logistic-regression", "linear-svm", "naive-bayes",
            "pagerank", "connected-components", "triangle-count", "tpch", "random-forest",
            } <= set(BATCH)  # fmt: skip
    assert get_workload("kmeans").params == {"k": 8, "iterations": 4, "dims": 8}
    assert get_workload("pagerank").params["iterations"] == 20
    with pytest.raises(UsageError, match="unknown workload 'nope'"):
        get_workload("nope")


@pytest.mark.parametrize(
    ("text", "rows"), [("tiny", 20_000), ("1000rows", 1000), ("7MB", 7 * 2**20 // 70)]
)
def test_sizes(text, rows):
    assert get_workload("wordcount").size(text).rows == rows
    with pytest.raises(UsageError, match="bad --size"):
        get_workload("wordcount").size("lots")


@pytest.mark.parametrize("name", BATCH)
def test_generators_are_deterministic_and_reused(tmp_path, name):
    workload = get_workload(name)
    size = workload.size("500rows")
    first, manifest = prepare_input(workload, size, seed=7, root=tmp_path / "a")
    again, same = prepare_input(workload, size, seed=7, root=tmp_path / "b")
    other, different = prepare_input(workload, size, seed=8, root=tmp_path / "c")
    assert manifest["sha256"] == same["sha256"]
    assert (manifest["sha256"] != different["sha256"]) == workload.seeded
    assert manifest["facts"] == same["facts"]
    assert manifest["rows"] == 500 and manifest["bytes"] > 0
    stamp = (first.parent / "manifest.json").stat().st_mtime_ns
    reused, _ = prepare_input(workload, size, seed=7, root=tmp_path / "a")
    assert reused == first and (first.parent / "manifest.json").stat().st_mtime_ns == stamp


def test_size_grows_with_rows(tmp_path):
    workload = get_workload("sort")
    _, small = prepare_input(workload, workload.size("1000rows"), root=tmp_path)
    _, big = prepare_input(workload, workload.size("4000rows"), root=tmp_path)
    assert big["bytes"] == 4 * small["bytes"] == 4 * 1000 * 100  # 100-byte lines


def test_planted_facts(tmp_path):
    _, cc = prepare_input(
        get_workload("connected-components"),
        get_workload("connected-components").size("300rows"),
        root=tmp_path,
    )
    assert cc["facts"]["components"] == 10
    _, km = prepare_input(
        get_workload("kmeans"), get_workload("kmeans").size("300rows"), root=tmp_path
    )
    assert len(km["facts"]["centres"]) == 8 and len(km["facts"]["centres"][0]) == 8
    _, tri = prepare_input(
        get_workload("triangle-count"),
        get_workload("triangle-count").size("300rows"),
        root=tmp_path,
    )
    assert tri["facts"]["triangles"] > 0


WRONG = {
    "wordcount": {"total_words": 1, "distinct_words": 1},
    "grep": {"lines": -1},
    "sort": {"rows": 500, "sorted": False},
    "terasort": {"rows": 500, "sorted": True, "checksum": "0"},
    "sql-aggregation": {"groups": 1, "total_revenue": 1.0},
    "sql-join": {"groups": 1, "revenue": 1.0},
    "sql-scan": {"matches": 3},
    "kmeans": {"centres": [[0.0] * 8] * 8},
    "gmm": {"centres": [[0.0] * 4] * 4},
    "logistic-regression": {"accuracy": 0.5},
    "linear-svm": {"accuracy": 0.5},
    "random-forest": {"accuracy": 0.6},
    "naive-bayes": {"accuracy": 0.25},
    "pagerank": {"vertices": 500, "rank_sum": 250.0},
    "connected-components": {"components": 9},
    "triangle-count": {"triangles": 0},
    "tpch": {"q1": [], "q3": [], "q6": 0.0},
}


@pytest.mark.parametrize("name", BATCH)
def test_checks_reject_wrong_answers(tmp_path, name):
    workload = get_workload(name)
    _, manifest = prepare_input(workload, workload.size("500rows"), root=tmp_path)
    verdict = workload.check(manifest["facts"], WRONG[name])
    assert not verdict.passed and verdict.details
    assert not workload.check(manifest["facts"], {}).passed  # an empty answer never passes
    json.dumps(workload.job_arguments(manifest["facts"]))  # what the job gets is JSON


def test_triangle_facts_match_networkx():
    import networkx as nx
    import numpy as np

    from numaspark.workloads.generators import _triangles, rmat_edges

    rng = np.random.default_rng(3)
    for vertices in (50, 400):
        edges = rmat_edges(rng, vertices, vertices * 8)
        graph = nx.Graph()
        graph.add_edges_from(map(tuple, edges))
        assert _triangles(edges, vertices) == sum(nx.triangles(graph).values()) // 3


def test_ip_pool_is_distinct():
    """Random IPs collide (about 5 in 200,000): the SQL checks count distinct ones."""
    import numpy as np

    from numaspark.workloads.generators import _ip_pool

    pool = _ip_pool(np.random.default_rng(1), 200_000)
    assert len(set(pool.tolist())) == 200_000


@pytest.mark.parametrize("name", ["wordcount", "terasort", "sql-join", "kmeans", "naive-bayes"])
def test_parallel_generation_writes_the_same_bytes_as_one_process(tmp_path, monkeypatch, name):
    from numaspark.workloads import generators

    workload = get_workload(name)
    size = workload.size("2000rows")
    monkeypatch.setattr(generators, "PARALLEL_FROM_ROWS", 0)  # a process pool even for 2000 rows
    monkeypatch.setenv("NUMASPARK_GEN_WORKERS", "1")
    _, serial = prepare_input(workload, size, root=tmp_path / "serial")
    monkeypatch.setenv("NUMASPARK_GEN_WORKERS", "4")
    _, parallel = prepare_input(workload, size, root=tmp_path / "parallel")
    assert serial["sha256"] == parallel["sha256"] and serial["facts"] == parallel["facts"]


def test_parameters_can_be_set_and_are_typed():
    kmeans = get_workload("kmeans").with_params({"k": "4", "iterations": "2"})
    assert kmeans.params == {"k": 4, "iterations": 2, "dims": 8}
    assert get_workload("kmeans").params["k"] == 8  # the registered default is untouched
    with pytest.raises(UsageError, match="kmeans has no parameter 'clusters'"):
        get_workload("kmeans").with_params({"clusters": "4"})
    with pytest.raises(UsageError, match="expected a int"):
        get_workload("kmeans").with_params({"k": "many"})
