"""sort (RDD): key/value records sorted by key, written out; the order is verified in Spark."""

from numaspark.workloads.harness import run_iterations


def _partition_summary(index, rows):
    first = last = None
    ordered = True
    count = 0
    for key in rows:
        if last is not None and key < last:
            ordered = False
        first = key if first is None else first
        last = key
        count += 1
    yield index, first, last, ordered, count


def sorted_summary(keys) -> tuple[int, bool]:
    """(records, whether the whole RDD is in order): each partition, then the boundaries."""
    parts = sorted(keys.mapPartitionsWithIndex(_partition_summary).collect())
    ordered = all(p[3] for p in parts)
    bounds = [(p[1], p[2]) for p in parts if p[4]]
    ordered = ordered and all(a[1] <= b[0] for a, b in zip(bounds, bounds[1:], strict=False))
    return sum(p[4] for p in parts), ordered


def sort(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    records = spark.sparkContext.textFile(input_dir).map(lambda line: tuple(line.split("\t", 1)))
    ordered = records.sortByKey().cache()
    ordered.map(lambda kv: f"{kv[0]}\t{kv[1]}").saveAsTextFile(output_dir)
    count, in_order = sorted_summary(ordered.keys())
    ordered.unpersist()
    return {"rows": count, "sorted": in_order}


if __name__ == "__main__":
    run_iterations("numaspark-sort", sort)
