package io.numaspark.affinity.spark;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.SlotPool;
import io.numaspark.affinity.Topology;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * The executor side: when a task starts (on its own thread) it takes a free slot and its thread
 * is pinned there; when it ends the slot goes back and the thread is given the executor's whole
 * CPU set again, so the binding follows the slot, not the reused thread.
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
  private final ThreadLocal<Running> running = new ThreadLocal<>();

  /** What a running task holds: its slot (or -1) and what is recorded when it ends. */
  private record Running(int slot, Map<String, Object> record) {}

  @Override
  public void init(PluginContext ctx, Map<String, String> extraConf) {
    executorId = ctx.executorID();
    Map<String, String> settings = new HashMap<>();
    for (Tuple2<String, String> pair : ctx.conf().getAllWithPrefix(AffinityConf.PREFIX)) {
      settings.put(AffinityConf.PREFIX + pair._1(), pair._2());
    }
    try {
      conf = AffinityConf.from(settings, System::getenv);
    } catch (IllegalArgumentException e) {
      LOG.warn("numaspark affinity off: {}", e.getMessage());
      conf = new AffinityConf(AffinityConf.Level.NONE, List.of(), "-", null);
    }
    recorder = TaskRecorder.open(conf.recordDir(), executorId);
    reporter = new PlacementReporter(ctx, executorId);
    try {
      reporter.registerMetrics(ctx.metricRegistry());
    } catch (RuntimeException e) {
      LOG.warn("numaspark: placement metrics not registered: {}", e.toString());
    }
    reporter.start(reportInterval(settings));
    try {
      allowed = Affinity.currentThreadAffinity();
    } catch (RuntimeException | LinkageError e) {
      disable("cannot read this executor's CPU affinity: " + e.getMessage());
      return;
    }
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

  private static long reportInterval(Map<String, String> settings) {
    String value = settings.getOrDefault(AffinityConf.PREFIX + "reportIntervalMs", "5000");
    try {
      return Math.max(0, Long.parseLong(value.strip()));
    } catch (NumberFormatException e) {
      LOG.warn("numaspark: {}reportIntervalMs '{}' is not a number: 5000", AffinityConf.PREFIX,
          value);
      return 5000;
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
    AffinityConf flat = new AffinityConf(conf.level(), cores, conf.source(), null);
    return flat.slots();
  }

  private void disable(String why) {
    if (unpinned == null) {
      unpinned = why;
      LOG.warn("numaspark affinity: running unpinned: {}", why);
    }
  }

  @Override
  public void onTaskStart() {
    try {
      Map<String, Object> record = new HashMap<>();
      TaskContext task = TaskContext.get();
      if (task != null) {
        record.put("task", task.taskAttemptId());
        record.put("stage", task.stageId());
        record.put("stage_attempt", task.stageAttemptNumber());
        record.put("partition", task.partitionId());
      }
      record.put("executor", executorId);
      record.put("pid", ProcessHandle.current().pid());
      record.put("level", conf.level().name().toLowerCase(java.util.Locale.ROOT));
      record.put("start_ms", System.currentTimeMillis());
      int slot = -1;
      if (conf.level().pins() && unpinned == null) {
        slot = pool.acquire();
        if (slot < 0) {
          record.put("unpinned", "no free slot: more running tasks than the "
              + pool.size() + " slot(s)");
        } else {
          try {
            Affinity.bindCurrentThread(pool.cpus(slot));
            record.put("slot", slot);
            record.put("cpus", pool.cpus(slot).toString());
          } catch (RuntimeException | LinkageError e) {
            pool.release(slot);
            slot = -1;
            disable(e.getMessage());
          }
        }
      }
      if (slot < 0 && unpinned != null) {
        record.put("unpinned", unpinned);
      }
      record.put("tid", safeTid());
      record.put("cpu_start", safeCpu());
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
      int cpuEnd = safeCpu();
      held.record().put("cpu_end", cpuEnd);
      Object cpuStart = held.record().get("cpu_start");
      if (cpuStart instanceof Integer start && start >= 0 && cpuEnd >= 0 && start != cpuEnd) {
        reporter.taskMigrations.incrementAndGet();
      }
      if (held.slot() >= 0) {
        reporter.pinnedTasks.incrementAndGet();
      }
      held.record().put("end_ms", System.currentTimeMillis());
      held.record().put("outcome", outcome);
      if (held.slot() >= 0) {
        try {
          Affinity.bindCurrentThread(allowed); // the thread is free again: the whole set
        } finally {
          pool.release(held.slot());
        }
      }
      recorder.write(held.record());
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
    recorder.close();
    if (reporter != null) {
      reporter.close();
    }
  }
}
