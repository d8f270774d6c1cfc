package io.numaspark.affinity.spark;

/**
 * One task as the executor plugin records it, one JSON line each in {@code
 * recordDir/affinity-EXECUTOR-PID.jsonl} (field names in snake_case: {@link PluginJson};
 * {@code jvm/contract.json} lists them). Null components are left out of the line.
 *
 * @param task the task attempt's id (null without a TaskContext)
 * @param stage its stage (null without a TaskContext)
 * @param stageAttempt the stage's attempt (null without a TaskContext)
 * @param partition its partition (null without a TaskContext)
 * @param executor the executor's id ({@code driver} in local mode)
 * @param pid the executor's process
 * @param level the binding level: none, node, core or pu
 * @param slot the slot it was pinned to (null: unpinned)
 * @param cpus the slot's CPUs (null: unpinned)
 * @param unpinned why it ran unpinned at a pinning level (null: pinned, or not pinning)
 * @param tid the task thread's kernel id (-1: unknown)
 * @param cpuStart the CPU it started on (-1: unknown)
 * @param cpuEnd the CPU it ended on (-1: unknown; null until it ends)
 * @param startMs when it started (epoch milliseconds)
 * @param endMs when it ended (null until it ends)
 * @param outcome {@code success} or {@code failed} (null until it ends)
 */
public record TaskRecord(Long task, Integer stage, Integer stageAttempt, Integer partition,
    String executor, long pid, String level, Integer slot, String cpus, String unpinned, int tid,
    int cpuStart, Integer cpuEnd, long startMs, Long endMs, String outcome) {

  /** This record as its task ended. */
  public TaskRecord ended(int cpu, long timeMs, String how) {
    return new TaskRecord(task, stage, stageAttempt, partition, executor, pid, level, slot, cpus,
        unpinned, tid, cpuStart, cpu, startMs, timeMs, how);
  }

  /** Whether its thread ended on another CPU than it started on (both known). */
  public boolean migrated() {
    return cpuStart >= 0 && cpuEnd != null && cpuEnd >= 0 && cpuStart != cpuEnd;
  }

  /** The JSON line. */
  public String json() {
    return PluginJson.line(this);
  }
}
