package io.numaspark.affinity.spark.ui;

import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.status.ElementTrackingStore;

/**
 * Spark 3.5's shape of {@code AppHistoryServerPlugin.createListeners} (Scala 2.12: it returns
 * {@code scala.collection.Seq}). {@link NumaHistoryPlugin} implements it beside Spark 4's, and
 * javac gives it the bridge method with this return type, so one class file serves both lines.
 * Keep it free of APIs newer than Java 8.
 */
interface Scala212HistoryPlugin {
  scala.collection.Seq<SparkListener> createListeners(SparkConf conf, ElementTrackingStore store);
}
