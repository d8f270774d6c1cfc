"""gmm (spark.ml): a Gaussian mixture fitted to Gaussian-mixture points; the means are the answer."""

from numaspark.workloads.harness import run_iterations


def gmm(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    from pyspark.ml.clustering import GaussianMixture
    from pyspark.ml.functions import array_to_vector

    points = (
        spark.read.parquet(input_dir).select(array_to_vector("features").alias("features")).cache()
    )
    model = GaussianMixture(k=params["k"], maxIter=params["iterations"], seed=1).fit(points)
    points.unpersist()
    means = [list(map(float, row["mean"])) for row in model.gaussiansDF.collect()]
    return {"centres": means}


if __name__ == "__main__":
    run_iterations("numaspark-gmm", gmm)
