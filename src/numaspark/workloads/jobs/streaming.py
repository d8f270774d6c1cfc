"""The streaming workloads (Structured Streaming) over numaspark's rate-controlled socket source.

One iteration is one streaming query: it connects to the source (one connection
per iteration), runs while the source sends its warm-up and measured events,
then drains what is left and stops. Every batch's input is observed (count,
mean and oldest event time), so the progress events in the event log carry
what end-to-end latency needs. The sink of each query reduces the result
table to the figures the check compares with the source's ledger (totals,
distinct keys, sums of squares) once the stream has drained. The sink is
Spark's in-memory table (complete mode replaces it each batch): it keeps the
JVM's work per batch to what the query itself costs, with no Python callback.
"""

import os
import time

from numaspark.workloads.harness import JOB_GROUP_PREFIX, read_json_lines, run_iterations

OBSERVED = "numaspark_events"
LEDGER = "ledger.jsonl"


def _events(spark, source_dir: str, kind: str):
    from pyspark.sql import functions as F

    with open(os.path.join(source_dir, "port")) as handle:
        port = int(handle.read())
    lines = (
        spark.readStream.format("socket").option("host", "127.0.0.1").option("port", port).load()
    )
    parts = F.split("value", "\t")
    ts = parts.getItem(0).cast("long")
    columns = [ts.alias("ts"), F.timestamp_millis(ts).alias("time")]
    if kind == "words":
        columns.append(parts.getItem(1).alias("text"))
    else:
        columns += [
            parts.getItem(1).alias("user"),
            parts.getItem(2).alias("page"),
            parts.getItem(3).alias("zip"),
            parts.getItem(4).cast("int").alias("status"),
        ]
    return lines.select(*columns).observe(
        OBSERVED,
        F.count(F.lit(1)).alias("events"),
        F.avg("ts").alias("avg_ts"),
        F.min("ts").alias("min_ts"),
    )


def _words(events):
    from pyspark.sql import functions as F

    return events.select("time", F.explode(F.split("text", " ")).alias("word"))


def _window(params: dict, sliding: bool):
    from pyspark.sql import functions as F

    slide = f"{params['slide_s']} seconds" if sliding else None
    return F.window("time", f"{params['window_s']} seconds", slide)


def _word_totals(table) -> dict:
    from pyspark.sql import functions as F

    row = table.agg(
        F.sum("count").alias("words"),
        F.count(F.lit(1)).alias("distinct_words"),
        F.sum(F.col("count") * F.col("count")).alias("words_sum_squares"),
    ).first()
    return {k: int(row[k] or 0) for k in ("words", "distinct_words", "words_sum_squares")}


def _page_totals(table) -> dict:
    from pyspark.sql import functions as F

    row = table.agg(
        F.sum("count").alias("events"),
        F.count(F.lit(1)).alias("distinct_pages"),
        F.sum(F.col("count") * F.col("count")).alias("pages_sum_squares"),
    ).first()
    return {k: int(row[k] or 0) for k in ("events", "distinct_pages", "pages_sum_squares")}


def _windowed_totals(key: str):
    def totals(table) -> dict:
        from pyspark.sql import functions as F

        row = table.agg(
            F.sum("count").alias("window_total"), F.countDistinct(key).alias("distinct")
        ).first()
        return {"window_total": int(row[0] or 0), f"distinct_{key}s": int(row[1] or 0)}

    return totals


# --- the queries: (result table, output mode, summary of the final output) ---------------


def network_wordcount(spark, events, params):
    return _words(events).groupBy("word").count(), "complete", _word_totals


def sql_wordcount(spark, events, params):
    _words(events).createOrReplaceTempView("numaspark_words")
    table = spark.sql("SELECT word, count(*) AS count FROM numaspark_words GROUP BY word")
    return table, "complete", _word_totals


def windowed_wordcount(spark, events, params):
    table = _words(events).groupBy(_window(params, sliding=True), "word").count()
    return table, "complete", _windowed_totals("word")


def stateful_wordcount(spark, events, params):
    """A running count per word kept in user-managed state (applyInPandasWithState)."""
    import pandas as pd
    from pyspark.sql.streaming.state import GroupStateTimeout

    def count(key, batches, state):
        total = state.get[0] if state.exists else 0
        for batch in batches:
            total += len(batch)
        state.update((total,))
        yield pd.DataFrame({"word": [key[0]], "count": [total]})

    table = (
        _words(events)
        .groupBy("word")
        .applyInPandasWithState(
            count,
            outputStructType="word string, count long",
            stateStructType="count long",
            outputMode="update",
            timeoutConf=GroupStateTimeout.NoTimeout,
        )
    )

    def totals(output) -> dict:  # update mode: a word's rows are its counts so far
        from pyspark.sql import functions as F

        return _word_totals(output.groupBy("word").agg(F.max("count").alias("count")))

    return table, "update", totals


def clicks_page_counts(spark, events, params):
    return events.groupBy("page").count(), "complete", _page_totals


def clicks_sliding_page_counts(spark, events, params):
    table = events.groupBy(_window(params, sliding=True), "page").count()
    return table, "complete", _windowed_totals("page")


def clicks_error_rate(spark, events, params):
    """The share of non-200 responses per zip code, per tumbling window."""
    from pyspark.sql import functions as F

    table = events.groupBy(_window(params, sliding=False), "zip").agg(
        F.count(F.lit(1)).alias("events"),
        F.sum((F.col("status") != 200).cast("long")).alias("errors"),
        F.avg((F.col("status") != 200).cast("double")).alias("error_rate"),
    )

    def totals(output) -> dict:
        row = output.agg(
            F.sum("events"), F.sum("errors"), F.count(F.lit(1)), F.max("error_rate")
        ).first()
        return {
            "events": int(row[0] or 0),
            "errors": int(row[1] or 0),
            "window_zips": int(row[2] or 0),
            "max_error_rate": float(row[3] or 0.0),
        }

    return table, "complete", totals


def clicks_active_users(spark, events, params):
    """Distinct users per tumbling window (HyperLogLog++, 1% standard error)."""
    from pyspark.sql import functions as F

    table = events.groupBy(_window(params, sliding=False)).agg(
        F.approx_count_distinct("user", 0.01).alias("users")
    )

    def totals(output) -> dict:
        row = output.agg(F.count(F.lit(1)), F.sum("users")).first()
        return {"windows": int(row[0] or 0), "window_users": int(row[1] or 0)}

    return table, "complete", totals


QUERIES = {
    "network-wordcount": ("words", network_wordcount),
    "sql-wordcount": ("words", sql_wordcount),
    "windowed-wordcount": ("words", windowed_wordcount),
    "stateful-wordcount": ("words", stateful_wordcount),
    "clicks-page-counts": ("clicks", clicks_page_counts),
    "clicks-sliding-page-counts": ("clicks", clicks_sliding_page_counts),
    "clicks-error-rate": ("clicks", clicks_error_rate),
    "clicks-active-users": ("clicks", clicks_active_users),
}


def _ledger_entry(source_dir: str, connection: int) -> dict | None:
    entries = read_json_lines(os.path.join(source_dir, LEDGER))
    return next((e for e in entries if e.get("connection") == connection), None)


def _received(query) -> int:
    """Lines the query has taken from the socket (its offset counts from -1)."""
    progress = query.lastProgress
    if not progress or not progress["sources"]:
        return 0
    end = progress["sources"][0].get("endOffset")
    return int(end) + 1 if end is not None else 0


def stream(spark, source_dir: str, output_dir: str, params: dict) -> dict:
    """One iteration: run the query until the source has sent everything and it is processed."""
    group = spark.sparkContext.getLocalProperty("spark.jobGroup.id") or f"{JOB_GROUP_PREFIX}0"
    connection = int(group.rsplit("-", 1)[1])
    name = group.replace("-", "_")  # the memory sink's table: an identifier
    kind, build = QUERIES[params["query"]]
    table, mode, summarize = build(spark, _events(spark, source_dir, kind), params)
    query = (
        table.writeStream.queryName(name)
        .outputMode(mode)
        .format("memory")
        .trigger(processingTime=f"{params['trigger_s']} seconds")
        .option("checkpointLocation", os.path.join(output_dir, "checkpoint"))
        .start()
    )
    try:
        sending = float(params["warmup_s"]) + float(params["duration_s"])
        deadline = time.time() + sending + 300
        entry = None
        while entry is None and time.time() < deadline:
            if query.exception() is not None:
                raise query.exception()
            time.sleep(0.5)
            entry = _ledger_entry(source_dir, connection)
        if entry is None:
            raise RuntimeError(f"the event source did not finish connection {connection} in time")
        drain_until = time.time() + 300
        while _received(query) < entry["events"] and time.time() < drain_until:
            query.processAllAvailable()
            time.sleep(0.2)
        query.processAllAvailable()  # the last lines' batch, and its output
        return {
            "query": params["query"],
            "run_id": str(query.runId),
            "received": _received(query),
            **summarize(spark.table(name)),
        }
    finally:
        query.stop()


if __name__ == "__main__":
    run_iterations("numaspark-streaming", stream)
