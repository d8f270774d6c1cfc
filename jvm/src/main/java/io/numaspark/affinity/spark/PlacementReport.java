package io.numaspark.affinity.spark;

import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.ProcessPlacement;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where one executor runs, as it reports it ({@link PlacementReporter}) to the driver, which
 * appends it to {@code placementFile} as one JSON line (field names in snake_case:
 * {@link PluginJson}; {@code jvm/contract.json} lists them). It travels to the driver as
 * {@link #toMap()} (plain JDK values: the driver may not load this class in the RPC thread).
 *
 * @param executor the executor's id
 * @param host the kernel's name for its host
 * @param pid its process
 * @param cpus the CPUs it may run on (Linux list format)
 * @param mems the memory nodes its cpuset allows
 * @param policy the memory policy of most of its mappings ({@code default}, {@code bind:0})
 * @param bytesPerNode resident bytes on each node (node number as text)
 * @param homeNodes the nodes its memory should be on (the policy's, else its CPUs')
 * @param localShare the share of its resident bytes on its home nodes (1 with none resident)
 * @param remoteBytes resident bytes elsewhere
 * @param pinnedTasks tasks pinned to a slot so far
 * @param taskMigrations task threads that ended on another CPU than they started on
 * @param timeMs when it was read (epoch milliseconds)
 * @param chosenNodes the nodes a node-level executor chose from inside (null: none chosen)
 * @param choice why those ({@code slot 0 of node 1 in /tmp/numaspark-affinity (nodes 0-1
 *     allowed)}), null when none
 * @param binding what node level applied (threads bound, memory moved, policies set) or why
 *     it ran unbound; null below node level
 * @param hostTopology its host's NUMA nodes, memory, cores, packages and distances as sysfs
 *     shows them: in an executor's first report only (null in the others, or when sysfs
 *     could not be read)
 * @param python the executor's Python processes (PySpark's daemon and workers), read from
 *     inside by walking its child processes ({@link PythonWorkers}); null when it has none.
 *     Their pages count in {@code localShare} and {@code remoteBytes}
 * @param numaBalancing its host's {@code kernel.numa_balancing} as the kernel says it ({@code
 *     0}, {@code 1}, {@code 2}); null when unreadable
 * @param cpuS the JVM's own CPU time so far (user and system, every thread), seconds; null
 *     when the JVM cannot say
 * @param devices the devices Spark gave the executor (its resources' addresses), each with its
 *     PCI function and NUMA node ({@link ExecutorDevices}); null when it was given none
 * @param nic the network interface its traffic to the driver leaves by, and its node ({@link
 *     TrafficInterface}); null when the driver's address is not known
 */
public record PlacementReport(String executor, String host, long pid, String cpus, String mems,
    String policy, Map<String, Long> bytesPerNode, String homeNodes, double localShare,
    long remoteBytes, long pinnedTasks, long taskMigrations, long timeMs, String chosenNodes,
    String choice, String binding, HostTopology hostTopology, List<PythonProcess> python,
    String numaBalancing, Double cpuS, List<DeviceReport> devices, NicReport nic) {

  /** A report of {@code placement}, read now, with no node binding. */
  public static PlacementReport of(String executor, String host, ProcessPlacement placement,
      CpuSet homeNodes, long pinnedTasks, long taskMigrations, long timeMs) {
    return of(executor, host, placement, homeNodes, pinnedTasks, taskMigrations, timeMs, null,
        null, null, null, List.of());
  }

  /**
   * A report of {@code placement}, read now, with what node level chose and applied and the
   * executor's {@code python} processes, whose pages count in the local share and the remote
   * bytes with the JVM's own.
   */
  public static PlacementReport of(String executor, String host, ProcessPlacement placement,
      CpuSet homeNodes, long pinnedTasks, long taskMigrations, long timeMs, String chosenNodes,
      String choice, String binding, HostTopology hostTopology, List<PythonProcess> python) {
    Map<String, Long> perNode = new TreeMap<>();
    placement.bytesPerNode().forEach((node, bytes) -> perNode.put(String.valueOf(node), bytes));
    long total = placement.residentBytes();
    long home = Math.round(placement.shareOn(homeNodes) * total);
    for (PythonProcess process : python) {
      for (Map.Entry<String, Long> node : process.bytesPerNode().entrySet()) {
        total += node.getValue();
        if (homeNodes.contains(Integer.parseInt(node.getKey()))) {
          home += node.getValue();
        }
      }
    }
    double share = total == 0 ? 1.0 : (double) home / total;
    return new PlacementReport(executor, host, placement.pid(), placement.cpus().toString(),
        placement.mems().toString(), placement.policy(), perNode, homeNodes.toString(), share,
        total - home, pinnedTasks, taskMigrations, timeMs, chosenNodes, choice, binding,
        hostTopology, python.isEmpty() ? null : List.copyOf(python), null, null, null, null);
  }

  /** This report with its host's NUMA balancing state and the JVM's CPU time. */
  public PlacementReport withHost(String balancing, Double cpuSeconds) {
    return new PlacementReport(executor, host, pid, cpus, mems, policy, bytesPerNode, homeNodes,
        localShare, remoteBytes, pinnedTasks, taskMigrations, timeMs, chosenNodes, choice,
        binding, hostTopology, python, balancing, cpuSeconds, devices, nic);
  }

  /** This report with the executor's devices and the interface its traffic leaves by. */
  public PlacementReport withDevices(List<DeviceReport> given, NicReport through) {
    return new PlacementReport(executor, host, pid, cpus, mems, policy, bytesPerNode, homeNodes,
        localShare, remoteBytes, pinnedTasks, taskMigrations, timeMs, chosenNodes, choice,
        binding, hostTopology, python, numaBalancing, cpuS,
        given == null || given.isEmpty() ? null : List.copyOf(given), through);
  }

  /** What is sent to the driver: the JSON fields as a map. */
  public Map<String, Object> toMap() {
    return PluginJson.toMap(this);
  }

  /** A report from what the driver received. */
  public static PlacementReport fromMap(Map<?, ?> message) {
    return PluginJson.fromMap(message, PlacementReport.class);
  }

  /** The JSON line. */
  public String json() {
    return PluginJson.line(this);
  }
}
