package io.numaspark.affinity.spark;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Pins each running task to its own core or hardware thread inside an executor, and reports
 * from inside every executor where it really runs:
 * {@code spark.plugins=io.numaspark.affinity.spark.AffinityPlugin}. The keys are read by
 * {@link AffinityConf}; the executor side is {@link AffinityExecutorPlugin} (pinning, and the
 * {@link PlacementReporter}), the driver side {@link AffinityDriverPlugin} (the reports).
 */
public final class AffinityPlugin implements SparkPlugin {
  @Override
  public DriverPlugin driverPlugin() {
    return new AffinityDriverPlugin();
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new AffinityExecutorPlugin();
  }
}
