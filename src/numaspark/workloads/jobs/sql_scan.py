"""sql-scan (DataFrame): a full Parquet scan with a filter that is never true.

The predicate is an expression Parquet cannot push down (no min/max statistics
can rule a row group out), so every row is read and decoded: the CPU-bound
Parquet read.
"""

from numaspark.workloads.harness import run_iterations


def scan(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    table = spark.read.parquet(input_dir)
    matches = table.where("length(concat(sourceIP, destURL, searchWord)) > 10000")
    matches.write.mode("overwrite").parquet(output_dir)
    return {"matches": spark.read.parquet(output_dir).count()}


if __name__ == "__main__":
    run_iterations("numaspark-sql-scan", scan)
