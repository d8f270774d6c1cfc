"""grep (RDD): the lines that contain a keyword, written out."""

from numaspark.workloads.harness import run_iterations


def grep(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    keyword = params["keyword"]
    matches = (
        spark.sparkContext.textFile(input_dir).filter(lambda line: keyword in line.split()).cache()
    )
    matches.saveAsTextFile(output_dir)
    count = matches.count()
    matches.unpersist()
    return {"lines": count}


if __name__ == "__main__":
    run_iterations("numaspark-grep", grep)
