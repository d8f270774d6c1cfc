"""The built-in batch workloads: core (RDD), SQL (DataFrame), ML (spark.ml) and graph.

Parameters default to what the studies used (k-means 4 iterations and 8
clusters, PageRank 20 iterations); they are recorded with every run. Size
profiles count the generator's rows: lines, records, points, documents or
vertices (``numaspark workloads`` lists them).
"""

from __future__ import annotations

import math

import numaspark.workloads.generators as gen
from numaspark.workloads.registry import CheckResult, Workload, register
from numaspark.workloads.registry import check_all as _all
from numaspark.workloads.registry import check_close as _close
from numaspark.workloads.registry import check_equal as _equal
from numaspark.workloads.tpch import check_tpch, tpch_tables

TINY, SMALL, LARGE, HUGE = "tiny", "small", "large", "huge"


def _profiles(tiny: int, small: int, large: int, huge: int) -> dict[str, int]:
    return {TINY: tiny, SMALL: small, LARGE: large, HUGE: huge}


def _centres_found(facts: dict, answer: dict, tolerance: float = 1.0) -> CheckResult:
    """Every planted centre has a found centre within ``tolerance`` (unit-variance clusters)."""
    found = answer.get("centres") or []
    worst = 0.0
    for planted in facts["centres"]:
        nearest = min((math.dist(planted, c) for c in found), default=math.inf)
        worst = max(worst, nearest)
    ok = len(found) == len(facts["centres"]) and worst <= tolerance
    return CheckResult(
        ok, f"{len(found)} centres found, farthest planted centre {worst:.3f} from its nearest"
    )


def _accuracy(answer: dict, floor: float) -> CheckResult:
    accuracy = answer.get("accuracy") or 0.0
    return CheckResult(
        accuracy >= floor, f"training accuracy {accuracy:.3f}, expected at least {floor}"
    )


TEXT = _profiles(20_000, 1_000_000, 20_000_000, 200_000_000)  # lines of 10 words, ~70 bytes

register(
    Workload(
        name="wordcount",
        category="core",
        api="RDD",
        description="count the words of Zipfian text (flatMap, reduceByKey)",
        job="wordcount.py",
        profiles=TEXT,
        row_bytes=70,
        generator=lambda d, size, seed, p: gen.zipf_text(d, size.rows, seed),
        check=lambda f, a: _all(
            _equal("total words", a.get("total_words"), f["total_words"]),
            _equal("distinct words", a.get("distinct_words"), f["distinct_words"]),
        ),
    )
)

register(
    Workload(
        name="grep",
        category="core",
        api="RDD",
        description="the lines of Zipfian text that contain a keyword, written out",
        job="grep.py",
        profiles=TEXT,
        row_bytes=70,
        params={"keyword_rank": 100},
        generator=lambda d, size, seed, p: gen.zipf_text(d, size.rows, seed, p["keyword_rank"]),
        check=lambda f, a: _equal("matching lines", a.get("lines"), f["keyword_lines"]),
        job_params=lambda facts: {"keyword": facts["keyword"]},
    )
)

register(
    Workload(
        name="sort",
        category="core",
        api="RDD",
        description="key/value text records sorted by key (sortByKey), written out",
        job="sort.py",
        profiles=_profiles(20_000, 1_000_000, 10_000_000, 100_000_000),
        row_bytes=100,
        generator=lambda d, size, seed, p: gen.key_value_text(d, size.rows, seed),
        check=lambda f, a: _all(
            _equal("records", a.get("rows"), f["rows"]),
            CheckResult(a.get("sorted") is True, f"output in order: {a.get('sorted')}"),
        ),
    )
)

register(
    Workload(
        name="terasort",
        category="core",
        api="RDD",
        description="TeraSort: 100-byte records sorted by their 10-byte key",
        job="terasort.py",
        profiles=_profiles(20_000, 1_000_000, 10_000_000, 100_000_000),
        row_bytes=100,
        generator=lambda d, size, seed, p: gen.tera_records(d, size.rows, seed),
        check=lambda f, a: _all(
            _equal("records", a.get("rows"), f["rows"]),
            CheckResult(a.get("sorted") is True, f"output in order: {a.get('sorted')}"),
            _equal("checksum", a.get("checksum"), f["checksum"]),
        ),
    )
)

VISITS = _profiles(
    50_000, 2_000_000, 40_000_000, 400_000_000
)  # uservisits rows, ~40 bytes in Parquet

register(
    Workload(
        name="sql-aggregation",
        category="sql",
        api="DataFrame",
        description="uservisits grouped by source IP, ad revenue summed (HiBench aggregation)",
        job="sql_aggregation.py",
        profiles=VISITS,
        row_bytes=40,
        generator=lambda d, size, seed, p: gen.uservisits(d, size.rows, seed),
        check=lambda f, a: _all(
            _equal("source IPs", a.get("groups"), f["distinct_ips"]),
            _close("revenue", a.get("total_revenue"), f["total_revenue"]),
        ),
    )
)

register(
    Workload(
        name="sql-join",
        category="sql",
        api="DataFrame",
        description="rankings joined with uservisits over a date range, per source IP (HiBench join)",
        job="sql_join.py",
        profiles=VISITS,
        row_bytes=45,
        params={"date_from": "2005-01-01", "date_to": "2010-01-01"},
        generator=lambda d, size, seed, p: gen.rankings_and_uservisits(
            d, size.rows, seed, p["date_from"], p["date_to"]
        ),
        check=lambda f, a: _all(
            _equal("source IPs", a.get("groups"), f["range_ips"]),
            _close("revenue", a.get("revenue"), f["range_revenue"]),
        ),
    )
)

register(
    Workload(
        name="sql-scan",
        category="sql",
        api="DataFrame",
        description="a full Parquet scan with a filter that is never true (the CPU-bound read)",
        job="sql_scan.py",
        profiles=VISITS,
        row_bytes=40,
        generator=lambda d, size, seed, p: gen.uservisits(d, size.rows, seed),
        check=lambda f, a: _equal("matching rows", a.get("matches"), 0),
    )
)

POINTS = _profiles(20_000, 1_000_000, 20_000_000, 200_000_000)

register(
    Workload(
        name="kmeans",
        category="ml",
        api="spark.ml",
        description="k-means on Gaussian-mixture points with planted centres",
        job="kmeans.py",
        profiles=POINTS,
        row_bytes=80,
        params={"k": 8, "iterations": 4, "dims": 8},
        generator=lambda d, size, seed, p: gen.gaussian_mixture(
            d, size.rows, seed, p["k"], p["dims"]
        ),
        check=lambda f, a: _centres_found(f, a),
    )
)

register(
    Workload(
        name="gmm",
        category="ml",
        api="spark.ml",
        description="a Gaussian mixture model fitted to points with planted means",
        job="gmm.py",
        profiles=POINTS,
        row_bytes=80,
        params={"k": 4, "iterations": 20, "dims": 4, "restarts": 3},
        generator=lambda d, size, seed, p: gen.gaussian_mixture(
            d, size.rows, seed, p["k"], p["dims"]
        ),
        check=lambda f, a: _centres_found(f, a),
    )
)

for _model in ("logistic-regression", "linear-svm"):
    register(
        Workload(
            name=_model,
            category="ml",
            api="spark.ml",
            description=f"{_model.replace('-', ' ')} on linearly separable points with 5% label noise",
            job="classify.py",
            profiles=POINTS,
            row_bytes=180,
            params={"model": _model, "iterations": 10, "dims": 20, "noise": 0.05},
            generator=lambda d, size, seed, p: gen.labelled_points(
                d, size.rows, seed, p["dims"], p["noise"]
            ),
            check=lambda f, a: _accuracy(a, 0.85),
        )
    )

register(
    Workload(
        name="random-forest",
        category="ml",
        api="spark.ml",
        description="a random forest on the same labelled points (HiBench's RF): deep trees, wide shuffles",
        job="classify.py",
        profiles=POINTS,
        row_bytes=180,
        params={"model": "random-forest", "trees": 20, "depth": 8, "dims": 20, "noise": 0.05},
        generator=lambda d, size, seed, p: gen.labelled_points(
            d, size.rows, seed, p["dims"], p["noise"]
        ),
        # axis-aligned trees of depth 8 cut an oblique 20-dimensional boundary coarsely: measured
        # training accuracy 0.782 at small size (1M rows; more at tiny, where they overfit), against
        # 0.5 for guessing; 0.7 catches a broken fit without failing a correct one
        check=lambda f, a: _accuracy(a, 0.7),
    )
)

register(
    Workload(
        name="naive-bayes",
        category="ml",
        api="spark.ml",
        description="text documents to hashed word counts to a multinomial naive Bayes classifier",
        job="naive_bayes.py",
        profiles=_profiles(10_000, 500_000, 10_000_000, 100_000_000),
        row_bytes=150,
        params={"classes": 4},
        generator=lambda d, size, seed, p: gen.labelled_documents(d, size.rows, seed, p["classes"]),
        check=lambda f, a: _accuracy(a, 0.9),
    )
)

VERTICES = _profiles(2_000, 200_000, 5_000_000, 50_000_000)  # edges are ~8x

register(
    Workload(
        name="pagerank",
        category="graph",
        api="RDD",
        description="PageRank on an R-MAT power-law graph (Spark's example iterations)",
        job="pagerank.py",
        profiles=VERTICES,
        row_bytes=130,
        params={"iterations": 20},
        generator=lambda d, size, seed, p: gen.power_law_graph(d, size.rows, seed),
        check=lambda f, a: _all(
            _equal("vertices", a.get("vertices"), f["vertices"]),
            _close("rank sum", a.get("rank_sum"), f["vertices"], rel=1e-6),
        ),
    )
)

register(
    Workload(
        name="connected-components",
        category="graph",
        api="RDD",
        description="connected components by label propagation on a graph with planted components",
        job="connected_components.py",
        profiles=VERTICES,
        row_bytes=130,
        params={"components": 10, "max_iterations": 50},
        generator=lambda d, size, seed, p: gen.power_law_graph(
            d, size.rows, seed, components=p["components"]
        ),
        check=lambda f, a: _equal("components", a.get("components"), f["components"]),
    )
)

register(
    Workload(
        name="triangle-count",
        category="graph",
        api="DataFrame",
        description="triangles of an R-MAT power-law graph, by joining edge lists",
        job="triangle_count.py",
        profiles=_profiles(2_000, 100_000, 1_000_000, 10_000_000),
        row_bytes=130,
        generator=lambda d, size, seed, p: gen.power_law_graph(
            d, size.rows, seed, count_triangles=True
        ),
        check=lambda f, a: _equal("triangles", a.get("triangles"), f["triangles"]),
    )
)

register(
    Workload(
        name="tpch",
        category="sql",
        api="DataFrame",
        description="TPC-H Q1, Q3 and Q6 over Parquet tables from tpchgen-cli, checked against pandas",
        job="tpch.py",
        profiles=_profiles(60_000, 600_000, 6_000_000, 60_000_000),
        row_bytes=130,
        generator=lambda d, size, seed, p: tpch_tables(d, size.rows, seed),
        check=lambda f, a: check_tpch(f, a),
        seeded=False,
    )
)
