package io.numaspark.affinity.spark;

import com.codahale.metrics.Gauge;
import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.spark.ui.NumaPage;
import io.numaspark.affinity.spark.ui.NumaUi;
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
 *
 * <p>With Spark's UI on, the latest reports are also a page of it, {@code /numa/} ({@link
 * NumaUi}); a UI that is off or cannot take the page is one log line.
 */
public final class AffinityDriverPlugin implements DriverPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(AffinityDriverPlugin.class);

  private final Map<String, PlacementReport> latest = new ConcurrentHashMap<>();
  private JsonLines out = JsonLines.none();
  private EventLogPoster eventLog; // null: Spark's event log is off
  private PlacementReporter driver; // the driver's own placement: the event log, the page
  private NumaPage page; // null: no page in Spark's UI
  private volatile boolean driverLogged; // its first report is in the event log
  private volatile boolean closing;
  private NodeBinder bound; // cluster deploy mode at level node: the driver's own node slot

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
    page = NumaUi.live(sc);
    if (sc.conf().getBoolean("spark.eventLog.enabled", false)) {
      try {
        var bus = sc.listenerBus(); // private[spark] in Scala, public to Java: stable 3.0-4.x
        eventLog = new EventLogPoster(bus::post).every(conf.eventLogIntervalMs());
        sc.addSparkListener(eventLog.atApplicationEnd()); // Spark 3.5: the last batch
      } catch (RuntimeException | LinkageError e) {
        LOG.warn("numaspark: placement reports will not be in the event log: {}", e.toString());
        eventLog = null;
      }
    }
    bound = bindInClusterMode(sc, conf);
    // in local mode the executor plugin reports this JVM as "driver"
    if ((eventLog != null || page != null) && !sc.isLocal()) {
      try {
        driver = new PlacementReporter(this::ownReport, "driver");
        if (bound != null) {
          driver.nodeBinding(bound);
        }
        driver.start(page != null ? conf.reportIntervalMs() : 0);
      } catch (RuntimeException | LinkageError e) {
        LOG.warn("numaspark: the driver's own placement is not reported: {}", e.toString());
        driver = null;
      }
    }
    return Map.of();
  }

  /**
   * In cluster deploy mode the driver runs on a worker (or in YARN's application master),
   * where nobody bound it: at level node it takes a node slot of that host like an executor
   * ({@link NodeBinder}: spread with the executors there, every thread bound, its memory
   * moved), for {@code spark.driver.cores}. In client mode the driver runs where the user
   * started it, placed by whoever started it. Never throws: what it did is in its reports.
   */
  private static NodeBinder bindInClusterMode(SparkContext sc, AffinityConf conf) {
    if (conf.level() != AffinityConf.Level.NODE
        || !"cluster".equals(sc.conf().get("spark.submit.deployMode", "client"))) {
      return null;
    }
    try {
      int cores = sc.conf().getInt("spark.driver.cores", 1);
      return NodeBinder.start(conf, Affinity.currentThreadAffinity(), cores);
    } catch (RuntimeException | LinkageError e) {
      LOG.warn("numaspark affinity: the driver is not bound: {}", e.toString());
      return null;
    }
  }

  /** The driver's own report: to the page each time, to the event log at start and at end. */
  private void ownReport(Map<String, Object> report) {
    if (page != null) {
      page.add(PlacementReport.fromMap(report));
    }
    if (eventLog != null && (!driverLogged || closing)) {
      driverLogged = true;
      eventLog.add(report);
    }
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
        if (page != null) {
          page.add(report);
        }
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
    if (driver != null) { // before the listener bus stops (SparkContext.stop's order)
      closing = true;
      driver.close(); // the driver's last word: its pages at the end
    }
    if (eventLog != null) {
      eventLog.close();
    }
    if (bound != null) {
      bound.close(); // its node slot goes back to the host's pool
    }
  }
}
