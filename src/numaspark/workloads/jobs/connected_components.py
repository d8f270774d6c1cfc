"""connected-components (RDD): minimum-label propagation until no label changes."""

from numaspark.workloads.harness import run_iterations


def components(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    # a fixed partition count: a union per round would otherwise add up partitions
    parts = spark.sparkContext.defaultParallelism
    edges = spark.read.parquet(input_dir).rdd.map(lambda row: (row["src"], row["dst"]))
    neighbours = edges.flatMap(lambda e: [e, (e[1], e[0])]).distinct(parts).cache()
    labels = neighbours.keys().distinct(parts).map(lambda v: (v, v)).cache()
    rounds = 0
    while rounds < params["max_iterations"]:
        rounds += 1
        offers = neighbours.join(labels, parts).map(lambda item: (item[1][0], item[1][1]))
        updated = labels.union(offers).reduceByKey(min, parts).cache()
        changed = updated.join(labels, parts).filter(lambda item: item[1][0] != item[1][1]).count()
        labels.unpersist()
        labels = updated
        if changed == 0:
            break
    labels.saveAsTextFile(output_dir)
    count = labels.values().distinct().count()
    neighbours.unpersist()
    return {"components": count, "rounds": rounds}


if __name__ == "__main__":
    run_iterations("numaspark-connected-components", components)
