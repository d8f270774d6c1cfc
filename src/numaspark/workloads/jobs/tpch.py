"""tpch (DataFrame): TPC-H Q1, Q3 and Q6 over Parquet tables made by tpchgen-cli."""

from numaspark.workloads.harness import run_iterations

TABLES = ("lineitem", "orders", "customer")
Q1 = """
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price, count(*) AS count_order
FROM lineitem WHERE l_shipdate <= date '1998-12-01' - interval '90' day
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus
"""
Q3 = """
SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
  AND o_orderdate < date '1995-03-15' AND l_shipdate > date '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10
"""
Q6 = """
SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem
WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01'
  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24
"""


def tpch(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    for table in TABLES:
        spark.read.parquet(f"{input_dir}/{table}.parquet").createOrReplaceTempView(table)
    q1 = spark.sql(Q1).collect()
    q3 = spark.sql(Q3).collect()
    q6 = spark.sql(Q6).first()["revenue"]
    spark.createDataFrame(q1).write.mode("overwrite").parquet(f"{output_dir}/q1")
    return {
        "q1": [[r[0], r[1], float(r[2]), float(r[3]), float(r[4]), int(r[5])] for r in q1],
        "q3": [[int(r[0]), float(r[1])] for r in q3],
        "q6": float(q6 or 0.0),
    }


if __name__ == "__main__":
    run_iterations("numaspark-tpch", tpch)
