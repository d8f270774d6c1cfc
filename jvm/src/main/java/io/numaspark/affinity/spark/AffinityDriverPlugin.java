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
 *
 * <p>With Spark's event log on, the reports also go into it, in batches ({@link
 * EventLogPoster}, {@link NumaPlacementEvent}), with the driver's own placement at the start
 * and at the end ({@code executor} {@code driver}): what a History Server keeps of an
 * application then says where it ran, in every deploy mode and on every cluster manager. Only
 * the driver posts to the listener bus.
 */
public final class AffinityDriverPlugin implements DriverPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(AffinityDriverPlugin.class);

  private final Map<String, PlacementReport> latest = new ConcurrentHashMap<>();
  private JsonLines out = JsonLines.none();
  private EventLogPoster eventLog; // null: Spark's event log is off
  private PlacementReporter driver; // the driver's own placement, into the event log

  @Override
  public Map<String, String> init(SparkContext sc, PluginContext ctx) {
    AffinityConf conf = AffinityConf.of(sc.conf());
    try {
      String file = conf.placementFile();
      if (file != null) {
        out = JsonLines.open(Path.of(file), "executor placement reports");
      }
    } catch (RuntimeException e) {
      LOG.warn("numaspark: cannot record executor placement: {}", e.toString());
    }
    if (sc.conf().getBoolean("spark.eventLog.enabled", false)) {
      try {
        var bus = sc.listenerBus(); // private[spark] in Scala, public to Java: stable 3.0-4.x
        eventLog = new EventLogPoster(bus::post).every(conf.eventLogIntervalMs());
        if (!sc.isLocal()) { // in local mode the executor plugin reports this JVM as "driver"
          driver = new PlacementReporter(eventLog::add, "driver");
          driver.start(0);
        }
      } catch (RuntimeException | LinkageError e) {
        LOG.warn("numaspark: placement reports will not be in the event log: {}", e.toString());
        eventLog = null;
      }
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
        if (eventLog != null) {
          eventLog.add(report.toMap());
        }
      } catch (RuntimeException e) {
        LOG.debug("numaspark: a placement report not read: {}", e.toString());
      }
    }
    return null;
  }

  @Override
  public void shutdown() {
    out.close();
    if (eventLog != null) { // before the listener bus stops (SparkContext.stop's order)
      if (driver != null) {
        driver.close(); // the driver's last word: its pages at the end
      }
      eventLog.close();
    }
  }
}
