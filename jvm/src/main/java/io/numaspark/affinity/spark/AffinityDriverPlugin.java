package io.numaspark.affinity.spark;

import com.codahale.metrics.Gauge;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToLongFunction;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side: every executor's placement reports ({@link PlacementReport}) arrive here.
 * Each is appended as one JSON line to {@code spark.numaspark.affinity.placementFile} (when
 * set), and the latest of each executor feeds the driver's plugin metrics: how many executors
 * report, the lowest share of pages on an executor's own nodes, remote bytes, pinned tasks and
 * task migrations in all.
 */
public final class AffinityDriverPlugin implements DriverPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(AffinityDriverPlugin.class);

  private final Map<String, PlacementReport> latest = new ConcurrentHashMap<>();
  private JsonLines out = JsonLines.none();

  @Override
  public Map<String, String> init(SparkContext sc, PluginContext ctx) {
    try {
      String file = AffinityConf.of(sc.conf()).placementFile();
      if (file != null) {
        out = JsonLines.open(Path.of(file), "executor placement reports");
      }
    } catch (RuntimeException e) {
      LOG.warn("numaspark: cannot record executor placement: {}", e.toString());
    }
    return Map.of();
  }

  @Override
  public void registerMetrics(String appId, PluginContext ctx) {
    var registry = ctx.metricRegistry();
    registry.register("executorsReporting", (Gauge<Integer>) latest::size);
    registry.register("lowestLocalPagesShare", (Gauge<Double>) () -> latest.values().stream()
        .mapToDouble(PlacementReport::localShare).min().orElse(1.0));
    registry.register("remoteBytes", (Gauge<Long>) () -> sum(PlacementReport::remoteBytes));
    registry.register("pinnedTasks", (Gauge<Long>) () -> sum(PlacementReport::pinnedTasks));
    registry.register("taskMigrations",
        (Gauge<Long>) () -> sum(PlacementReport::taskMigrations));
  }

  private long sum(ToLongFunction<PlacementReport> field) {
    return latest.values().stream().mapToLong(field).sum();
  }

  @Override
  public Object receive(Object message) {
    if (message instanceof Map<?, ?> map) {
      try {
        PlacementReport report = PlacementReport.fromMap(map);
        latest.put(String.valueOf(report.executor()), report);
        out.append(report.json());
      } catch (RuntimeException e) {
        LOG.debug("numaspark: a placement report not read: {}", e.toString());
      }
    }
    return null;
  }

  @Override
  public void shutdown() {
    out.close();
  }
}
