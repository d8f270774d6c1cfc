package io.numaspark.affinity.spark;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.ProcessPlacement;
import io.numaspark.affinity.Topology;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor's own view of where it runs, at start and every {@code reportIntervalMs}: its
 * host, pid, allowed CPUs, memory policy and resident bytes per node ({@link ProcessPlacement},
 * from {@code /proc/self}), with the tasks it pinned and the task threads that ended on another
 * CPU than they started on. Each report goes to the driver ({@code PluginContext.send}) and the
 * latest one is the executor's plugin metrics (Spark's metrics system: JMX, CSV, Prometheus).
 * It never fails the executor: a report that cannot be read or sent is skipped.
 */
final class PlacementReporter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PlacementReporter.class);

  final AtomicLong pinnedTasks = new AtomicLong();
  final AtomicLong taskMigrations = new AtomicLong();
  private final PluginContext ctx;
  private final String executorId;
  private final String host = hostname();
  private CpuSet homeNodes = CpuSet.of();
  private Topology topology; // the host's nodes, read once
  private volatile ProcessPlacement latest;
  private ScheduledExecutorService timer;

  PlacementReporter(PluginContext ctx, String executorId) {
    this.ctx = ctx;
    this.executorId = executorId;
  }

  /** Report now, then every {@code intervalMs} (0: only now). */
  void start(long intervalMs) {
    report();
    if (intervalMs > 0) {
      timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "numaspark-placement");
        thread.setDaemon(true);
        return thread;
      });
      timer.scheduleWithFixedDelay(this::report, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }
  }

  void registerMetrics(MetricRegistry registry) {
    registry.register("localPagesShare", (Gauge<Double>) () -> latest == null ? 1.0
        : latest.shareOn(homeNodes));
    registry.register("remoteBytes", (Gauge<Long>) () -> latest == null ? 0L
        : Math.round(latest.residentBytes() * (1 - latest.shareOn(homeNodes))));
    registry.register("residentBytes", (Gauge<Long>) () -> latest == null ? 0L
        : latest.residentBytes());
    registry.register("allowedCpus", (Gauge<Integer>) () -> latest == null ? 0
        : latest.cpus().size());
    registry.register("pinnedTasks", (Gauge<Long>) pinnedTasks::get);
    registry.register("taskMigrations", (Gauge<Long>) taskMigrations::get);
  }

  void report() {
    try {
      ProcessPlacement now = ProcessPlacement.read();
      try {
        if (topology == null) {
          topology = Topology.fromSysfs();
        }
        homeNodes = now.homeNodes(topology);
      } catch (IOException | RuntimeException e) {
        homeNodes = now.mems();
      }
      latest = now;
      HashMap<String, Object> message = new HashMap<>(now.toMap());
      message.put("executor", executorId);
      message.put("host", host);
      message.put("time_ms", System.currentTimeMillis());
      message.put("home_nodes", homeNodes.toString());
      message.put("local_share", now.shareOn(homeNodes));
      message.put("pinned_tasks", pinnedTasks.get());
      message.put("task_migrations", taskMigrations.get());
      ctx.send(message);
    } catch (IOException | RuntimeException e) {
      LOG.debug("numaspark placement report skipped: {}", e.toString());
    }
  }

  private static String hostname() {
    try { // the kernel's name for this host: no DNS lookup
      return Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      return "?";
    }
  }

  /** The last report's fields (for tests and logs). */
  Map<String, Object> latest() {
    return latest == null ? Map.of() : latest.toMap();
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
    report(); // the last word: pages at the end
  }
}
