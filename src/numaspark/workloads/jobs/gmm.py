"""gmm (spark.ml): a Gaussian mixture fitted to Gaussian-mixture points; the means are the answer.

EM finds a local optimum that depends on its random start (two planted
clusters merged, another split); like scikit-learn's ``n_init``, the job fits
``restarts`` times with different seeds and keeps the highest log-likelihood.
"""

from numaspark.workloads.harness import run_iterations


def gmm(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    from pyspark.ml.clustering import GaussianMixture
    from pyspark.ml.functions import array_to_vector

    points = (
        spark.read.parquet(input_dir).select(array_to_vector("features").alias("features")).cache()
    )
    best = None
    for seed in range(1, params.get("restarts", 1) + 1):
        model = GaussianMixture(k=params["k"], maxIter=params["iterations"], seed=seed).fit(points)
        if best is None or model.summary.logLikelihood > best.summary.logLikelihood:
            best = model
    model = best
    points.unpersist()
    means = [list(map(float, row["mean"])) for row in model.gaussiansDF.collect()]
    return {"centres": means}


if __name__ == "__main__":
    run_iterations("numaspark-gmm", gmm)
