"""wordcount (RDD): words of a text counted with flatMap and reduceByKey, written out."""

from operator import add

from numaspark.workloads.harness import run_iterations


def wordcount(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    counts = (
        spark.sparkContext.textFile(input_dir)
        .flatMap(lambda line: line.split())
        .map(lambda word: (word, 1))
        .reduceByKey(add)
        .cache()
    )
    counts.saveAsTextFile(output_dir)
    distinct, total = counts.map(lambda kv: (1, kv[1])).reduce(
        lambda a, b: (a[0] + b[0], a[1] + b[1])
    )
    counts.unpersist()
    return {"total_words": int(total), "distinct_words": int(distinct)}


if __name__ == "__main__":
    run_iterations("numaspark-wordcount", wordcount)
