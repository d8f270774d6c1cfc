package io.numaspark.affinity.spark;

import com.codahale.metrics.Gauge;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver side: every executor's placement reports arrive here. Each is appended as one
 * JSON line to {@code spark.numaspark.affinity.placementFile} (when set), and the latest of
 * each executor feeds the driver's plugin metrics: how many executors report, the lowest share
 * of pages on an executor's own nodes, remote bytes, pinned tasks and task migrations in all.
 */
public final class AffinityDriverPlugin implements DriverPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(AffinityDriverPlugin.class);

  private final Map<String, Map<String, Object>> latest = new ConcurrentHashMap<>();
  private BufferedWriter out;

  @Override
  public Map<String, String> init(SparkContext sc, PluginContext ctx) {
    String file = sc.conf().get(AffinityConf.PREFIX + "placementFile", "");
    if (!file.isBlank()) {
      try {
        Path path = Path.of(file);
        if (path.getParent() != null) {
          Files.createDirectories(path.getParent());
        }
        out = Files.newBufferedWriter(path, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      } catch (IOException | RuntimeException e) {
        LOG.warn("numaspark: cannot record executor placement in {}: {}", file, e.toString());
      }
    }
    return Map.of();
  }

  @Override
  public void registerMetrics(String appId, PluginContext ctx) {
    var registry = ctx.metricRegistry();
    registry.register("executorsReporting", (Gauge<Integer>) latest::size);
    registry.register("lowestLocalPagesShare", (Gauge<Double>) () -> latest.values().stream()
        .mapToDouble(r -> ((Number) r.getOrDefault("local_share", 1.0)).doubleValue())
        .min().orElse(1.0));
    registry.register("remoteBytes", (Gauge<Long>) () -> sum("remote_bytes"));
    registry.register("pinnedTasks", (Gauge<Long>) () -> sum("pinned_tasks"));
    registry.register("taskMigrations", (Gauge<Long>) () -> sum("task_migrations"));
  }

  private long sum(String key) {
    return latest.values().stream()
        .mapToLong(r -> ((Number) r.getOrDefault(key, 0L)).longValue()).sum();
  }

  @Override
  @SuppressWarnings("unchecked")
  public Object receive(Object message) {
    if (message instanceof Map<?, ?> map) {
      Map<String, Object> report = (Map<String, Object>) map;
      long resident = ((Map<String, Number>) report.getOrDefault("bytes_per_node", Map.of()))
          .values().stream().mapToLong(Number::longValue).sum();
      double share = ((Number) report.getOrDefault("local_share", 1.0)).doubleValue();
      report.put("remote_bytes", Math.round(resident * (1 - share)));
      latest.put(String.valueOf(report.get("executor")), report);
      write(report);
    }
    return null;
  }

  private synchronized void write(Map<String, Object> report) {
    if (out == null) {
      return;
    }
    try {
      out.write(TaskRecorder.json(report));
      out.newLine();
      out.flush();
    } catch (IOException e) {
      // a full disk must not fail the application; the report is lost
    }
  }

  @Override
  public synchronized void shutdown() {
    if (out != null) {
      try {
        out.close();
      } catch (IOException e) {
        // nothing left to save
      }
      out = null;
    }
  }
}
