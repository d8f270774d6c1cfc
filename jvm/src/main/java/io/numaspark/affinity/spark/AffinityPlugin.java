package io.numaspark.affinity.spark;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Pins each running task to its own core or hardware thread inside an executor:
 * {@code spark.plugins=io.numaspark.affinity.spark.AffinityPlugin}. The keys are read by
 * {@link AffinityConf}; the work is done by {@link AffinityExecutorPlugin}. No driver part.
 */
public final class AffinityPlugin implements SparkPlugin {
  @Override
  public DriverPlugin driverPlugin() {
    return null;
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    return new AffinityExecutorPlugin();
  }
}
