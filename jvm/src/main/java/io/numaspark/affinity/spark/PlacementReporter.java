package io.numaspark.affinity.spark;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.ProcessPlacement;
import io.numaspark.affinity.Topology;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor's own view of where it runs, at start and every {@code reportIntervalMs}: its
 * host, pid, allowed CPUs, memory policy and resident bytes per node ({@link ProcessPlacement},
 * from {@code /proc/self}), with the tasks it pinned and the task threads that ended on another
 * CPU than they started on, and its Python processes ({@link PythonWorkers}: PySpark's daemon
 * and workers, their pages counted in the local share and remote bytes). Each report goes to the driver ({@code PluginContext.send}) and the
 * latest one is the executor's plugin metrics (Spark's metrics system: JMX, CSV, Prometheus).
 * The first report also carries the host's topology ({@link HostTopology}), which numaspark
 * keeps to plan the next run on the cluster; later ones leave it out (it does not change while
 * the executor runs, and every report is one line of the placement file). It never fails the
 * executor: a report that cannot be read or sent is skipped, and a host topology that cannot
 * be read is left out.
 */
final class PlacementReporter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PlacementReporter.class);

  final AtomicLong pinnedTasks = new AtomicLong();
  final AtomicLong taskMigrations = new AtomicLong();
  private final Consumer<Map<String, Object>> sink;
  private final String executorId;
  private final String host = hostname();
  private Topology topology; // the host's nodes, read once
  private volatile boolean hostSent; // the host's topology went out with a report: not again
  private volatile ProcessPlacement latest;
  private volatile PlacementReport last;
  private ScheduledExecutorService timer;
  private volatile NodeBinder node; // node level: what it chose and applied
  private volatile PythonWorkers python; // the executor's Python processes, listed in reports
  private volatile List<DeviceReport> devices; // the devices Spark gave it, with their nodes
  private volatile NicReport nic; // the interface its traffic to the driver leaves by

  /** An executor's reporter: each report goes to the driver. */
  PlacementReporter(PluginContext ctx, String executorId) {
    this(message -> {
      try {
        ctx.send(message);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, executorId);
  }

  /** Each report (its JSON fields: JDK values only) goes to {@code sink}. */
  PlacementReporter(Consumer<Map<String, Object>> sink, String executorId) {
    this.sink = sink;
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

  /** Each report lists {@code workers}' Python processes. */
  void pythonWorkers(PythonWorkers workers) {
    python = workers;
  }

  /** Each report names the executor's {@code devices} and the {@code nic} of its traffic. */
  void devices(List<DeviceReport> given, NicReport through) {
    devices = given;
    nic = through;
  }

  /** Node level: each report says what {@code binder} chose and applied. */
  void nodeBinding(NodeBinder binder) {
    node = binder;
  }

  void registerMetrics(MetricRegistry registry) {
    registry.register("localPagesShare", (Gauge<Double>) () -> last == null ? 1.0
        : last.localShare());
    registry.register("remoteBytes", (Gauge<Long>) () -> last == null ? 0L
        : last.remoteBytes());
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
      CpuSet homeNodes;
      try {
        if (topology == null) {
          topology = Topology.fromSysfs();
        }
        homeNodes = now.homeNodes(topology);
      } catch (IOException | RuntimeException e) {
        homeNodes = now.mems();
      }
      latest = now;
      NodeBinder binder = node;
      HostTopology hostTopology = hostSent ? null : HostTopology.read();
      PythonWorkers workers = python;
      last = PlacementReport.of(executorId, host, now, homeNodes, pinnedTasks.get(),
          taskMigrations.get(), System.currentTimeMillis(),
          binder == null ? null : binder.chosenNodes(), binder == null ? null : binder.choice(),
          binder == null ? null : binder.binding(), hostTopology,
          workers == null ? List.of() : workers.read()).withHost(numaBalancing(), cpuSeconds())
          .withDevices(devices, nic);
      sink.accept(last.toMap()); // JDK values only: see PlacementReport
      hostSent = true; // sent, or not readable: later reports go without it
    } catch (IOException | RuntimeException e) {
      LOG.debug("numaspark placement report skipped: {}", e.toString());
    }
  }

  /** The host's {@code kernel.numa_balancing} (null: not readable, e.g. no NUMA kernel). */
  static String numaBalancing() {
    try {
      return Files.readString(Path.of("/proc/sys/kernel/numa_balancing"), StandardCharsets.UTF_8)
          .strip();
    } catch (IOException e) {
      return null;
    }
  }

  /** This JVM's CPU time so far, seconds (null where the JVM does not say). */
  static Double cpuSeconds() {
    if (ManagementFactory.getOperatingSystemMXBean()
        instanceof com.sun.management.OperatingSystemMXBean os) {
      long nanos = os.getProcessCpuTime();
      return nanos < 0 ? null : Math.round(nanos / 1e7) / 100.0;
    }
    return null;
  }

  private static String hostname() {
    // in a Kubernetes pod the kernel's hostname is the pod's: numaspark's executor pod template
    // gives the node's name (downward API), under which what is learned of a host is kept
    String node = System.getenv("NUMASPARK_NODE_NAME");
    if (node != null && !node.isBlank()) {
      return node.strip();
    }
    try { // the kernel's name for this host: no DNS lookup
      return Files.readString(Path.of("/proc/sys/kernel/hostname"), StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      return "?";
    }
  }

  /** The last report (null before the first); for tests and logs. */
  PlacementReport last() {
    return last;
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
    report(); // the last word: pages at the end
  }
}
