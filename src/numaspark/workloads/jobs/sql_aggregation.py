"""sql-aggregation (DataFrame): uservisits grouped by source IP, ad revenue summed, written out."""

from numaspark.workloads.harness import run_iterations


def aggregation(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    spark.read.parquet(input_dir).createOrReplaceTempView("uservisits")
    revenue = spark.sql(
        "SELECT sourceIP, SUM(adRevenue) AS revenue FROM uservisits GROUP BY sourceIP"
    ).cache()
    revenue.write.mode("overwrite").parquet(output_dir)
    row = revenue.selectExpr("count(*) AS groups", "sum(revenue) AS total").first()
    revenue.unpersist()
    return {"groups": int(row["groups"]), "total_revenue": float(row["total"])}


if __name__ == "__main__":
    run_iterations("numaspark-sql-aggregation", aggregation)
