"""logistic-regression and linear-svm (spark.ml) on labelled points: training accuracy."""

import sys

from numaspark.workloads.harness import run_iterations


def classify(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    from pyspark.ml.classification import LinearSVC, LogisticRegression
    from pyspark.ml.functions import array_to_vector

    data = (
        spark.read.parquet(input_dir)
        .select("label", array_to_vector("features").alias("features"))
        .cache()
    )
    kind = LogisticRegression if params["model"] == "logistic-regression" else LinearSVC
    model = kind(maxIter=params["iterations"]).fit(data)
    accuracy = model.transform(data).where("prediction = label").count() / data.count()
    data.unpersist()
    return {"accuracy": accuracy}


if __name__ == "__main__":
    run_iterations(f"numaspark-{sys.argv[0].split('/')[-1]}", classify)
