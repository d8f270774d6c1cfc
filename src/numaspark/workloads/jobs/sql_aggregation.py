"""sql-aggregation (DataFrame): spark-submit sql_aggregation.py INPUT OUTPUT RESULT_JSON."""

import json
import sys
import time

from pyspark.sql import SparkSession

input_dir, output_dir, result_path = sys.argv[1:4]
spark = SparkSession.builder.appName("numaspark-sql-aggregation").getOrCreate()
started = time.time()
spark.read.parquet(input_dir).createOrReplaceTempView("uservisits")
spark.sql(
    "SELECT sourceIP, SUM(adRevenue) AS revenue FROM uservisits GROUP BY sourceIP"
).write.mode("overwrite").parquet(output_dir)
row = (
    spark.read.parquet(output_dir).selectExpr("count(*) AS groups", "sum(revenue) AS total").first()
)
with open(result_path, "w") as out:
    json.dump(
        {
            "groups": int(row["groups"]),
            "total_revenue": float(row["total"]),
            "job_s": time.time() - started,
        },
        out,
    )
spark.stop()
