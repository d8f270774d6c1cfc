package io.numaspark.affinity.example;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.ProcessPlacement;
import io.numaspark.affinity.Topology;
import io.numaspark.affinity.spark.TaskRecord;
import java.util.Arrays;

/**
 * What one placement report costs the executor, timed: read {@code /proc/self} (status and
 * numa_maps), as {@code PlacementReporter} does every few seconds (the kernel walks the
 * resident pages to count them per node: the cost grows with the resident set). A heap
 * of MB megabytes is touched first, so numa_maps is as long as a working JVM's. Prints the
 * median and spread of microseconds per report (bench/plugin_report.py runs it).
 *
 * <pre>java -cp numaspark-affinity.jar io.numaspark.affinity.example.ReportCost [REPORTS] [MB]</pre>
 */
public final class ReportCost {
  private ReportCost() {}

  public static void main(String[] args) throws Exception {
    int reports = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int megabytes = args.length > 1 ? Integer.parseInt(args[1]) : 256;
    byte[][] heap = new byte[megabytes][];
    for (int i = 0; i < megabytes; i++) {
      heap[i] = new byte[1 << 20];
      Arrays.fill(heap[i], (byte) i);
    }
    double[] rounds = new double[11];
    long resident = 0;
    Topology topology = Topology.fromSysfs(); // read once, as the reporter does
    for (int round = -3; round < rounds.length; round++) { // 3 warm-up rounds for the JIT
      long start = System.nanoTime();
      for (int i = 0; i < reports; i++) {
        ProcessPlacement now = ProcessPlacement.read();
        now.homeNodes(topology);
        resident = now.residentBytes();
      }
      if (round >= 0) {
        rounds[round] = (System.nanoTime() - start) / 1e3 / reports;
      }
    }
    Arrays.sort(rounds);
    double task = taskCost(20_000);
    System.out.printf("{\"reports_per_round\": %d, \"rounds\": %d, \"median_us\": %.1f, "
        + "\"min_us\": %.1f, \"max_us\": %.1f, \"resident_mb\": %d, \"heap_mb\": %d, "
        + "\"task_us\": %.3f}%n",
        reports, rounds.length, rounds[rounds.length / 2], rounds[0],
        rounds[rounds.length - 1], resident >> 20, heap.length, task);
  }

  /**
   * What the executor plugin does per task when it does not pin (level none, the level on
   * clusters numaspark did not start): the task's record, its thread id and CPU at start and
   * end, the migration and pinned counters. Median microseconds per task over 11 rounds.
   */
  static double taskCost(int tasks) {
    java.util.concurrent.atomic.AtomicLong migrations = new java.util.concurrent.atomic.AtomicLong();
    double[] rounds = new double[11];
    for (int round = -3; round < rounds.length; round++) {
      long start = System.nanoTime();
      for (int i = 0; i < tasks; i++) {
        long startMs = System.currentTimeMillis();
        TaskRecord record = new TaskRecord((long) i, null, null, null, "0",
            ProcessHandle.current().pid(), "none", null, null, null, Affinity.currentThreadId(),
            Affinity.currentCpu(), null, startMs, null, null)
            .ended(Affinity.currentCpu(), System.currentTimeMillis(), "success");
        if (record.migrated()) {
          migrations.incrementAndGet();
        }
      }
      if (round >= 0) {
        rounds[round] = (System.nanoTime() - start) / 1e3 / tasks;
      }
    }
    Arrays.sort(rounds);
    return rounds[rounds.length / 2];
  }
}
