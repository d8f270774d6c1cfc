"""Alternating least squares with numpy in PySpark's Python workers: the shape of a PySpark
job whose data and CPU time live in the workers (written for numaspark's measurements).

    spark-submit als.py [M U F ITERATIONS PARTITIONS]

R (M x U) = A B^T with rank F: each iteration solves every row of A against B, then every
row of B against A, in parallel over PARTITIONS partitions; prints the RMSE each iteration.
"""

import sys

import numpy as np
from pyspark.sql import SparkSession

LAMBDA = 0.01


def rmse(r: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    diff = r - a @ b.T
    return float(np.sqrt(np.sum(diff * diff) / (r.shape[0] * r.shape[1])))


def solve(row: int, fixed: np.ndarray, ratings: np.ndarray) -> np.ndarray:
    """The least-squares solution of one row against the fixed factor matrix."""
    xtx = fixed.T @ fixed + LAMBDA * fixed.shape[0] * np.eye(fixed.shape[1])
    return np.linalg.solve(xtx, fixed.T @ ratings[row, :])


def _half(sc, rows: int, partitions: int, fixed, ratings, transpose: bool) -> np.ndarray:
    """One half of an iteration: every row of one factor, solved against the other."""

    def row(x: int) -> np.ndarray:
        r = ratings.value.T if transpose else ratings.value
        return solve(x, fixed.value, r)

    return np.array(sc.parallelize(range(rows), partitions).map(row).collect())


def main() -> None:
    m, u, f, iterations, partitions = (int(x) for x in (sys.argv[1:] or [200, 500, 10, 5, 2]))
    spark = SparkSession.builder.appName("als").getOrCreate()
    sc = spark.sparkContext
    rng = np.random.default_rng(42)
    r = rng.random((m, f)) @ rng.random((u, f)).T
    a, b = rng.random((m, f)), rng.random((u, f))
    ratings = sc.broadcast(r)
    for i in range(iterations):
        a = _half(sc, m, partitions, sc.broadcast(b), ratings, transpose=False)
        b = _half(sc, u, partitions, sc.broadcast(a), ratings, transpose=True)
        print(f"iteration {i}: RMSE {rmse(r, a, b):.4f}")
    spark.stop()


if __name__ == "__main__":
    main()
