"""triangle-count (DataFrame): triangles of the undirected graph, by joining edge lists."""

from numaspark.workloads.harness import run_iterations


def triangles(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    from pyspark.sql import functions as F

    raw = spark.read.parquet(input_dir)
    edges = (
        raw.select(F.least("src", "dst").alias("a"), F.greatest("src", "dst").alias("b"))
        .where("a != b")
        .distinct()
        .cache()
    )
    e1, e2, e3 = edges.alias("e1"), edges.alias("e2"), edges.alias("e3")
    found = (
        e1.join(e2, F.col("e1.b") == F.col("e2.a"))
        .join(e3, (F.col("e3.a") == F.col("e1.a")) & (F.col("e3.b") == F.col("e2.b")))
        .select(F.col("e1.a").alias("x"), F.col("e1.b").alias("y"), F.col("e2.b").alias("z"))
    )
    found.write.mode("overwrite").parquet(output_dir)
    count = spark.read.parquet(output_dir).count()
    edges.unpersist()
    return {"triangles": count}


if __name__ == "__main__":
    run_iterations("numaspark-triangle-count", triangles)
