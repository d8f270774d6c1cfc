"""naive-bayes (spark.ml): text documents to word features to a multinomial classifier."""

from numaspark.workloads.harness import run_iterations


def naive_bayes(spark, input_dir: str, output_dir: str, params: dict) -> dict:
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import NaiveBayes
    from pyspark.ml.feature import HashingTF, Tokenizer

    docs = spark.read.parquet(input_dir).cache()
    pipeline = Pipeline(
        stages=[
            Tokenizer(inputCol="text", outputCol="words"),
            HashingTF(inputCol="words", outputCol="features", numFeatures=1 << 16),
            NaiveBayes(smoothing=1.0),
        ]
    )
    model = pipeline.fit(docs)
    accuracy = model.transform(docs).where("prediction = label").count() / docs.count()
    docs.unpersist()
    return {"accuracy": accuracy}


if __name__ == "__main__":
    run_iterations("numaspark-naive-bayes", naive_bayes)
