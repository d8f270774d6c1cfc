"""TPC-H input (tpchgen-cli) and reference answers computed another way (pyarrow + pandas)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from numaspark.errors import ToolMissingError
from numaspark.workloads.registry import CheckResult

LINEITEM_ROWS_PER_SF = 6_000_000
QUERIES = ("q1", "q3", "q6")


def tpch_tables(directory: Path, rows: int, seed: int) -> dict:
    """TPC-H tables in Parquet at the scale factor that gives ``rows`` lineitem rows.

    tpchgen-cli's data is fixed by the scale factor (TPC-H has no seed); the
    facts are Q1, Q3 and Q6 answered with pandas, to check Spark's answers.
    """
    scale = max(0.001, round(rows / LINEITEM_ROWS_PER_SF, 3))
    exe = shutil.which("tpchgen-cli") or str(Path(sys.executable).with_name("tpchgen-cli"))
    if not Path(exe).exists():
        raise ToolMissingError(
            "tpchgen-cli not found: pip install tpchgen-cli (scripts/setup.sh does)"
        )
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [exe, "parquet", "-s", str(scale), f"--output-dir={directory}"],
        check=True,
        capture_output=True,
    )
    return {"scale_factor": scale, **reference_answers(directory)}


def _frame(directory: Path, table: str, columns: list[str]):
    """A table as pandas: decimals as floats (as the Spark job reports them), strings as str."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pq.read_table(directory / f"{table}.parquet", columns=columns)
    fields = []
    for field in arrow.schema:
        if pa.types.is_decimal(field.type):
            fields.append(pa.field(field.name, pa.float64()))
        elif pa.types.is_string(field.type) or str(field.type) == "string_view":
            fields.append(pa.field(field.name, pa.string()))
        else:
            fields.append(field)
    return arrow.cast(pa.schema(fields)).to_pandas()


def reference_answers(directory: Path) -> dict:
    """Q1, Q3 and Q6 answered with pandas, with the dates of the Spark job's SQL
    (workloads/jobs/tpch.py), in the shapes that job reports them."""
    import pandas as pd

    line = _frame(
        directory,
        "lineitem",
        [
            "l_orderkey",
            "l_quantity",
            "l_extendedprice",
            "l_discount",
            "l_returnflag",
            "l_linestatus",
            "l_shipdate",
        ],
    )
    line["l_shipdate"] = pd.to_datetime(line["l_shipdate"])
    customer = _frame(directory, "customer", ["c_custkey", "c_mktsegment"])
    orders = _frame(
        directory, "orders", ["o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"]
    )
    orders["o_orderdate"] = pd.to_datetime(orders["o_orderdate"])
    return {
        "q1": _q1(line, shipped_by=pd.Timestamp("1998-09-02")),  # 1998-12-01 less 90 days
        "q3": _q3(customer, orders, line, day=pd.Timestamp("1995-03-15")),
        "q6": _q6(line, pd.Timestamp("1994-01-01"), pd.Timestamp("1995-01-01")),
    }


def _q1(line, shipped_by) -> list[list]:
    """Q1, the pricing summary: quantities and prices of the items shipped by
    ``shipped_by``, per return flag and line status."""
    q1 = line[line["l_shipdate"] <= shipped_by].copy()
    q1["disc_price"] = q1["l_extendedprice"] * (1 - q1["l_discount"])
    q1 = (
        q1.groupby(["l_returnflag", "l_linestatus"])
        .agg(
            sum_qty=("l_quantity", "sum"),
            sum_base_price=("l_extendedprice", "sum"),
            sum_disc_price=("disc_price", "sum"),
            count_order=("l_quantity", "size"),
        )
        .reset_index()
        .sort_values(["l_returnflag", "l_linestatus"])
    )
    return [
        [
            r.l_returnflag,
            r.l_linestatus,
            float(r.sum_qty),
            float(r.sum_base_price),
            float(r.sum_disc_price),
            int(r.count_order),
        ]
        for r in q1.itertuples()
    ]


def _q3(customer, orders, line, day) -> list[list]:
    """Q3, shipping priority: the 10 orders of the BUILDING segment with the most revenue
    still to ship on ``day`` (ordered before it, items shipped after), as [key, revenue]."""
    joined = (
        customer[customer["c_mktsegment"] == "BUILDING"]
        .merge(
            orders[orders["o_orderdate"] < day],
            left_on="c_custkey",
            right_on="o_custkey",
        )
        .merge(
            line[line["l_shipdate"] > day],
            left_on="o_orderkey",
            right_on="l_orderkey",
        )
    )
    joined["revenue"] = joined["l_extendedprice"] * (1 - joined["l_discount"])
    q3 = (
        joined.groupby(["l_orderkey", "o_orderdate", "o_shippriority"])["revenue"]
        .sum()
        .reset_index()
        .sort_values(["revenue", "o_orderdate"], ascending=[False, True])
        .head(10)
    )
    return [[int(r.l_orderkey), float(r.revenue)] for r in q3.itertuples()]


def _q6(line, shipped_from, shipped_before) -> float:
    """Q6, forecasting revenue change: what discounts of 5 to 7% took off the items of fewer
    than 24 units shipped in ``[shipped_from, shipped_before)``."""
    q6 = line[
        (line["l_shipdate"] >= shipped_from)
        & (line["l_shipdate"] < shipped_before)
        & line["l_discount"].between(0.05, 0.07)
        & (line["l_quantity"] < 24)
    ]
    return float((q6["l_extendedprice"] * q6["l_discount"]).sum())


def check_tpch(facts: dict, answer: dict):
    """Spark's Q1, Q3 and Q6 against the pandas reference, to 1e-6 relative."""

    def close(a: float, b: float) -> bool:
        return abs(a - b) <= 1e-6 * max(1.0, abs(b))

    def rows_match(got, want) -> bool:
        if got is None or len(got) != len(want):
            return False
        for g, w in zip(got, want, strict=True):
            for x, y in zip(g, w, strict=True):
                if (
                    isinstance(y, str)
                    or isinstance(y, int)
                    and not isinstance(y, bool)
                    and isinstance(x, int)
                ):
                    if x != y:
                        return False
                elif not close(float(x), float(y)):
                    return False
        return True

    results = {
        "q1": rows_match(answer.get("q1"), facts["q1"]),
        "q3": rows_match(answer.get("q3"), facts["q3"]),
        "q6": answer.get("q6") is not None and close(answer["q6"], facts["q6"]),
    }
    return CheckResult(
        all(results.values()),
        ", ".join(f"{q} {'ok' if ok else 'differs'}" for q, ok in results.items()),
    )
