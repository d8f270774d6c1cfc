"""pagerank (RDD): the iterations of Spark's own example (0.15 + 0.85 x contributions)."""

from operator import add

from numaspark.workloads.harness import run_iterations


def _contributions(item):
    _, (targets, rank) = item
    share = rank / len(targets)
    return [(target, share) for target in targets]


def pagerank(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    edges = spark.read.parquet(input_dir).rdd.map(lambda row: (row["src"], row["dst"]))
    links = edges.groupByKey().mapValues(list).cache()
    ranks = links.mapValues(lambda _: 1.0)
    for _ in range(params["iterations"]):
        ranks = (
            links.join(ranks)
            .flatMap(_contributions)
            .reduceByKey(add)
            .mapValues(lambda s: 0.15 + 0.85 * s)
        )
    ranks = ranks.cache()
    ranks.saveAsTextFile(output_dir)
    total, vertices = ranks.map(lambda kv: (kv[1], 1)).reduce(
        lambda a, b: (a[0] + b[0], a[1] + b[1])
    )
    top = ranks.takeOrdered(1, key=lambda kv: -kv[1])[0]
    links.unpersist()
    ranks.unpersist()
    return {"rank_sum": total, "vertices": vertices, "top_vertex": int(top[0])}


if __name__ == "__main__":
    run_iterations("numaspark-pagerank", pagerank)
