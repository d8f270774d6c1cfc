"""The built-in workloads (the full suite grows in later issues)."""

from __future__ import annotations

from numaspark.workloads import generators
from numaspark.workloads.registry import CheckResult, Workload, register


def _check_wordcount(facts: dict, result: dict) -> CheckResult:
    want = (facts["total_words"], facts["distinct_words"])
    got = (result.get("total_words"), result.get("distinct_words"))
    return CheckResult(
        got == want, f"words total/distinct {got[0]}/{got[1]}, generated {want[0]}/{want[1]}"
    )


def _check_sql_aggregation(facts: dict, result: dict) -> CheckResult:
    groups, revenue = result.get("groups"), result.get("total_revenue")
    ok = (
        groups == facts["distinct_ips"]
        and revenue is not None
        and abs(revenue - facts["total_revenue"]) <= 1e-6 * max(1.0, facts["total_revenue"])
    )
    return CheckResult(
        bool(ok),
        f"{groups} source IPs and revenue {revenue}, generated {facts['distinct_ips']} "
        f"and {facts['total_revenue']:.4f}",
    )


register(
    Workload(
        name="wordcount",
        category="core",
        api="RDD",
        description="count words of Zipfian text (flatMap, reduceByKey)",
        job="wordcount.py",
        generator=lambda d, size, seed: generators.zipf_text(d, size.rows, seed),
        check=_check_wordcount,
        profiles={"tiny": 20_000, "small": 1_000_000, "large": 20_000_000, "huge": 200_000_000},
        row_bytes=70,
    )
)

register(
    Workload(
        name="sql-aggregation",
        category="sql",
        api="DataFrame",
        description="uservisits grouped by source IP, ad revenue summed (HiBench aggregation)",
        job="sql_aggregation.py",
        generator=lambda d, size, seed: generators.uservisits(d, size.rows, seed),
        check=_check_sql_aggregation,
        profiles={"tiny": 50_000, "small": 2_000_000, "large": 40_000_000, "huge": 400_000_000},
        row_bytes=40,
    )
)
