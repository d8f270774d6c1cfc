"""sql-join (DataFrame): HiBench's join: rankings joined with uservisits over a date range."""

from numaspark.workloads.harness import run_iterations

QUERY = """
SELECT sourceIP, avg(pageRank) AS avgPageRank, sum(adRevenue) AS totalRevenue
FROM rankings R JOIN (
    SELECT sourceIP, destURL, adRevenue FROM uservisits UV
    WHERE UV.visitDate > '{date_from}' AND UV.visitDate < '{date_to}'
) NUV ON (R.pageURL = NUV.destURL)
GROUP BY sourceIP
"""


def join(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    spark.read.parquet(f"{input_dir}/rankings").createOrReplaceTempView("rankings")
    spark.read.parquet(f"{input_dir}/uservisits").createOrReplaceTempView("uservisits")
    result = spark.sql(QUERY.format(**params)).cache()
    result.write.mode("overwrite").parquet(output_dir)
    row = result.selectExpr("count(*) AS groups", "sum(totalRevenue) AS revenue").first()
    result.unpersist()
    return {"groups": int(row["groups"]), "revenue": float(row["revenue"] or 0.0)}


if __name__ == "__main__":
    run_iterations("numaspark-sql-join", join)
