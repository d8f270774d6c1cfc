package io.numaspark.affinity.spark;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.SlotPool;
import io.numaspark.affinity.Topology;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.resource.ResourceInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor side: when a task starts (on its own thread) it takes a free slot and its thread
 * is pinned there; when it ends the slot goes back and the thread is given the executor's whole
 * CPU set again, so the binding follows the slot, not the reused thread.
 *
 * <p>A PySpark executor's Python workers ({@link PythonWorkers}) are kept on the executor's
 * CPUs: the daemon is forked from a task thread, pinned at level core or pu, and would pass
 * that one core to every worker. They are re-bound every {@code PythonWorkers.WATCH_MS} by
 * a thread of their own (not at each task start: the first wave of tasks starts before the
 * daemon exists, and a walk of the JVM's threads per task costs short tasks), and every
 * placement report lists them.
 *
 * <p>It never fails a task: a slot CPU outside the executor's allowed set, a missing native
 * library or a refused call is logged once and the executor runs unpinned (each task's record
 * says why). It does not call {@code PluginContext.hostname()}, which throws on standalone
 * executors in Spark 4.3.0.
 */
public final class AffinityExecutorPlugin implements ExecutorPlugin {
  private static final Logger LOG = LoggerFactory.getLogger(AffinityExecutorPlugin.class);

  private AffinityConf conf;
  private SlotPool pool;
  private CpuSet allowed;
  private String executorId = "?";
  private volatile String unpinned; // why tasks run unpinned; null while pinning works
  private TaskRecorder recorder;
  private PlacementReporter reporter;
  private NodeBinder node; // level node: the slot it holds, what it bound
  private PythonWorkers python; // the executor's Python processes: kept on its CPUs, reported
  private ScheduledExecutorService pythonWatch;
  private ScheduledExecutorService rebalancer; // level node: moves it when the host unbalances
  private final ThreadLocal<Running> running = new ThreadLocal<>();

  /** What a running task holds: its slot (or -1) and what is recorded when it ends. */
  private record Running(int slot, TaskRecord record) {}

  @Override
  public void init(PluginContext ctx, Map<String, String> extraConf) {
    executorId = ctx.executorID();
    try {
      conf = AffinityConf.of(ctx.conf()); // a bad value: one warning, its default
    } catch (RuntimeException e) {
      LOG.warn("numaspark affinity off: {}", e.toString());
      conf = AffinityConf.defaults();
    }
    recorder = TaskRecorder.open(conf.recordDir(), executorId);
    reporter = new PlacementReporter(ctx, executorId);
    try {
      reporter.registerMetrics(ctx.metricRegistry());
    } catch (RuntimeException e) {
      LOG.warn("numaspark: placement metrics not registered: {}", e.toString());
    }
    ExecutorDevices devices = devicesOf(ctx);
    reporter.devices(devices.forReport(), nicOf(ctx));
    try {
      allowed = Affinity.currentThreadAffinity();
    } catch (RuntimeException | LinkageError e) {
      python = new PythonWorkers(null); // listed in reports, left where they are
      reporter.pythonWorkers(python);
      reporter.start(conf.reportIntervalMs());
      disable("cannot read this executor's CPU affinity: " + e.getMessage());
      return;
    }
    if (conf.level() == AffinityConf.Level.NODE) {
      // before the reporter's thread starts (it inherits the binding) and its first report
      node = NodeBinder.start(conf, allowed, executorCores(ctx), null, devices);
      reporter.nodeBinding(node);
    } else if (!devices.nodes().isEmpty()) {
      LOG.info("numaspark affinity: level {}: devices {} reported, not bound by (level node "
          + "binds by them)", conf.level(), devices.describe());
    }
    watchPython();
    watchBalance();
    reporter.start(conf.reportIntervalMs());
    if (!conf.level().pins()) {
      LOG.info("numaspark affinity: level {}, tasks not pinned", conf.level());
      return;
    }
    List<CpuSet> slots = conf.slots();
    if (slots.isEmpty()) {
      slots = coresOf(allowed);
    }
    for (CpuSet slot : slots) {
      if (!slot.isSubsetOf(allowed)) {
        disable("slot " + slot + " (from " + conf.source() + ") is not within this executor's "
            + "allowed CPUs " + allowed);
        return;
      }
    }
    pool = new SlotPool(slots);
    LOG.info("numaspark affinity: level {}, {} slot(s) {} from {}", conf.level(),
        slots.size(), slots, conf.source());
  }

  /**
   * The Python workers' CPUs: the executor's (node level: the node it bound to). Below node
   * level nothing pins a thread, so they inherit the executor's and are only listed.
   */
  private void watchPython() {
    CpuSet cpus = null;
    if (conf.level().pins()) {
      cpus = allowed;
    } else if (node != null && node.boundCpus() != null) {
      cpus = node.boundCpus();
    }
    python = new PythonWorkers(cpus);
    reporter.pythonWorkers(python);
    if (cpus == null) {
      return;
    }
    pythonWatch = Executors.newSingleThreadScheduledExecutor(runnable -> {
      Thread thread = new Thread(runnable, "numaspark-python");
      thread.setDaemon(true);
      return thread;
    });
    pythonWatch.scheduleWithFixedDelay(this::rebindPython, PythonWorkers.WATCH_MS,
        PythonWorkers.WATCH_MS, TimeUnit.MILLISECONDS);
  }

  /** Level node: every {@code rebalanceMs}, {@link NodeBinder#rebalance()} (0: never). */
  private void watchBalance() {
    if (node == null || !node.movable() || conf.rebalanceMs() <= 0) {
      return;
    }
    rebalancer = Executors.newSingleThreadScheduledExecutor(runnable -> {
      Thread thread = new Thread(runnable, "numaspark-rebalance");
      thread.setDaemon(true);
      return thread;
    });
    rebalancer.scheduleWithFixedDelay(this::rebalance, conf.rebalanceMs(), conf.rebalanceMs(),
        TimeUnit.MILLISECONDS);
  }

  private void rebalance() {
    try {
      if (node.rebalance() && python != null && node.boundCpus() != null) {
        python.moveTo(node.boundCpus());
        python.rebind();
      }
    } catch (RuntimeException | LinkageError e) {
      LOG.debug("numaspark affinity: balance not checked: {}", e.toString());
    }
  }

  private void rebindPython() {
    try {
      python.rebind();
    } catch (RuntimeException | LinkageError e) {
      LOG.debug("numaspark affinity: Python workers not re-bound: {}", e.toString());
    }
  }

  /**
   * The devices Spark gave this executor ({@code PluginContext.resources()}), each with its
   * PCI function and node; none when they cannot be read (one line, as without them).
   */
  private ExecutorDevices devicesOf(PluginContext ctx) {
    try {
      Map<String, List<String>> resources = new TreeMap<>();
      Map<String, ResourceInformation> given = ctx.resources();
      if (given != null) {
        given.forEach((name, info) -> resources.put(name, List.of(info.addresses())));
      }
      ExecutorDevices devices = ExecutorDevices.read(resources, conf.deviceResources(),
          Path.of("/"));
      if (!devices.reports().isEmpty()) {
        LOG.info("numaspark affinity: devices {}", devices.reports());
      }
      return devices;
    } catch (RuntimeException | LinkageError e) {
      LOG.warn("numaspark affinity: this executor's resources not read: {}", e.toString());
      return ExecutorDevices.none();
    }
  }

  /** The interface towards the driver ({@code spark.driver.host}); null when unknown. */
  private static NicReport nicOf(PluginContext ctx) {
    try {
      return TrafficInterface.read(ctx.conf().get("spark.driver.host", null));
    } catch (RuntimeException | LinkageError e) {
      LOG.debug("numaspark affinity: the driver's interface not read: {}", e.toString());
      return null;
    }
  }

  /** {@code spark.executor.cores} (1 when unset or bad). */
  private static int executorCores(PluginContext ctx) {
    try {
      return Math.max(1, ctx.conf().getInt("spark.executor.cores", 1));
    } catch (RuntimeException e) {
      return 1;
    }
  }

  /** The executor's allowed CPUs grouped by core (sysfs), or one slot per CPU. */
  private List<CpuSet> coresOf(CpuSet cpus) {
    List<CpuSet> cores = new ArrayList<>();
    try {
      for (CpuSet core : Topology.fromSysfs().cores()) {
        CpuSet mine = core.and(cpus);
        if (!mine.isEmpty()) {
          cores.add(mine);
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      cores.clear();
    }
    if (cores.isEmpty()) {
      cpus.stream().forEach(cpu -> cores.add(CpuSet.of(cpu)));
    }
    return AffinityConf.slots(conf.level(), cores);
  }

  private void disable(String why) {
    if (unpinned == null) {
      unpinned = why;
      LOG.warn("numaspark affinity: running unpinned: {}", why);
    }
  }

  @Override
  public void onTaskStart() {
    if (node != null) {
      node.onTaskStart(); // never throws
    }
    try {
      long startMs = System.currentTimeMillis();
      TaskContext task = TaskContext.get();
      int slot = -1;
      String unpinnedWhy = null;
      if (conf.level().pins() && unpinned == null) {
        slot = pool.acquire();
        if (slot < 0) {
          unpinnedWhy = "no free slot: more running tasks than the " + pool.size() + " slot(s)";
        } else {
          try {
            Affinity.bindCurrentThread(pool.cpus(slot));
          } catch (RuntimeException | LinkageError e) {
            pool.release(slot);
            slot = -1;
            disable(e.getMessage());
          }
        }
      }
      if (slot < 0 && unpinned != null) {
        unpinnedWhy = unpinned;
      }
      TaskRecord record = new TaskRecord(
          task == null ? null : task.taskAttemptId(),
          task == null ? null : task.stageId(),
          task == null ? null : task.stageAttemptNumber(),
          task == null ? null : task.partitionId(),
          executorId, ProcessHandle.current().pid(),
          conf.level().name().toLowerCase(Locale.ROOT),
          slot < 0 ? null : slot,
          slot < 0 ? null : pool.cpus(slot).toString(),
          unpinnedWhy, safeTid(), safeCpu(), null, startMs, null, null);
      running.set(new Running(slot, record));
    } catch (RuntimeException | LinkageError e) {
      disable("affinity bookkeeping failed: " + e);
    }
  }

  @Override
  public void onTaskSucceeded() {
    end("success");
  }

  @Override
  public void onTaskFailed(TaskFailedReason failureReason) {
    end("failed");
  }

  private void end(String outcome) {
    Running held = running.get();
    running.remove();
    if (held == null) {
      return;
    }
    try {
      TaskRecord record = held.record().ended(safeCpu(), System.currentTimeMillis(), outcome);
      if (record.migrated()) {
        reporter.taskMigrations.incrementAndGet();
      }
      if (held.slot() >= 0) {
        reporter.pinnedTasks.incrementAndGet();
        try {
          Affinity.bindCurrentThread(allowed); // the thread is free again: the whole set
        } finally {
          pool.release(held.slot());
        }
      }
      recorder.write(record);
    } catch (RuntimeException | LinkageError e) {
      disable("affinity bookkeeping failed: " + e);
    }
  }

  private static int safeCpu() {
    try {
      return Affinity.currentCpu();
    } catch (RuntimeException | LinkageError e) {
      return -1;
    }
  }

  private static int safeTid() {
    try {
      return Affinity.currentThreadId();
    } catch (RuntimeException | LinkageError e) {
      return -1;
    }
  }

  @Override
  public void shutdown() {
    if (rebalancer != null) {
      rebalancer.shutdownNow(); // before the slot goes back: no move after it
    }
    if (pythonWatch != null) {
      pythonWatch.shutdownNow();
    }
    recorder.close();
    if (reporter != null) {
      reporter.close();
    }
    if (node != null) {
      node.close(); // the slot goes back (the kernel would release it at exit anyway)
    }
  }
}
