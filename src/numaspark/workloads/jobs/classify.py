"""logistic-regression, linear-svm and random-forest (spark.ml) on labelled points.

The answer is the training accuracy.
"""

import sys

from numaspark.workloads.harness import run_iterations


def classify(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    from pyspark.ml.classification import LinearSVC, LogisticRegression, RandomForestClassifier
    from pyspark.ml.functions import array_to_vector

    data = (
        spark.read.parquet(input_dir)
        .select("label", array_to_vector("features").alias("features"))
        .cache()
    )
    if params["model"] == "random-forest":
        learner = RandomForestClassifier(
            numTrees=params["trees"], maxDepth=params["depth"], seed=params.get("seed", 1)
        )
    elif params["model"] == "logistic-regression":
        learner = LogisticRegression(maxIter=params["iterations"])
    else:
        learner = LinearSVC(maxIter=params["iterations"])
    model = learner.fit(data)
    accuracy = model.transform(data).where("prediction = label").count() / data.count()
    data.unpersist()
    return {"accuracy": accuracy}


if __name__ == "__main__":
    run_iterations(f"numaspark-{sys.argv[0].split('/')[-1]}", classify)
