"""terasort (RDD): 100-byte records sorted by their 10-byte key; order and checksum verified."""

from numaspark.workloads.harness import run_iterations
from numaspark.workloads.jobs.sort import sorted_summary

MASK = (1 << 64) - 1


def _record_sum(record: bytes) -> int:
    return int.from_bytes(record[0:8], "big") + int.from_bytes(record[10:18], "big")


def terasort(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    records = spark.sparkContext.binaryRecords(input_dir, 100)
    ordered = records.keyBy(lambda r: bytes(r[:10])).sortByKey().cache()
    ordered.values().saveAsPickleFile(output_dir)
    count, in_order = sorted_summary(ordered.keys())
    checksum = ordered.values().map(_record_sum).fold(0, lambda a, b: (a + b) & MASK)
    ordered.unpersist()
    return {"rows": count, "sorted": in_order, "checksum": str(checksum)}


if __name__ == "__main__":
    run_iterations("numaspark-terasort", terasort)
