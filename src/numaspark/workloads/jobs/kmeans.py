"""kmeans (spark.ml): k-means on Gaussian-mixture points; the centres found are the answer."""

from numaspark.workloads.harness import run_iterations


def kmeans(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    from pyspark.ml.clustering import KMeans
    from pyspark.ml.functions import array_to_vector

    points = (
        spark.read.parquet(input_dir).select(array_to_vector("features").alias("features")).cache()
    )
    model = KMeans(k=params["k"], maxIter=params["iterations"], seed=1).fit(points)
    points.unpersist()
    return {"centres": [list(map(float, c)) for c in model.clusterCenters()]}


if __name__ == "__main__":
    run_iterations("numaspark-kmeans", kmeans)
