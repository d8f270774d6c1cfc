package io.numaspark.affinity.spark.ui;

import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.spark.DeviceReport;
import io.numaspark.affinity.spark.PlacementReport;
import io.numaspark.affinity.spark.PythonProcess;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * One row of the NUMA page: what an executor's latest report says, with what the page shows
 * worked out here (so the page's script only draws it):
 *
 * <ul>
 *   <li>{@code nodes}: the host's NUMA nodes its allowed CPUs lie on (null when its host's
 *       topology is unknown);
 *   <li>{@code cpu_count}: how many CPUs it may run on;
 *   <li>{@code resident_bytes}: its resident pages, its Python processes' with the JVM's;
 *   <li>{@code python_processes}, {@code python_workers} ({@code worker} role),
 *       {@code python_cpu_s} (their CPU time);
 *   <li>{@code devices}: each device Spark gave it, {@code gpu 0 on node 1};
 *   <li>{@code report}: the report itself, without its host's topology.
 * </ul>
 */
final class NumaRow {
  private NumaRow() {}

  static Map<String, Object> of(PlacementReport report, Map<String, String> hostNodes) {
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("executor", report.executor());
    row.put("host", report.host());
    row.put("pid", report.pid());
    row.put("nodes", nodes(report.cpus(), hostNodes));
    row.put("cpus", report.cpus());
    row.put("cpu_count", cpuCount(report.cpus()));
    row.put("policy", report.policy());
    row.put("home_nodes", report.homeNodes());
    row.put("chosen_nodes", report.chosenNodes());
    row.put("local_share", report.localShare());
    row.put("remote_bytes", report.remoteBytes());
    row.put("resident_bytes", residentBytes(report));
    row.put("pinned_tasks", report.pinnedTasks());
    row.put("task_migrations", report.taskMigrations());
    List<PythonProcess> python = report.python() == null ? List.of() : report.python();
    row.put("python_processes", python.size());
    row.put("python_workers", python.stream().filter(p -> "worker".equals(p.role())).count());
    row.put("python_cpu_s", python.stream().mapToDouble(PythonProcess::cpuS).sum());
    row.put("cpu_s", report.cpuS());
    row.put("devices", devices(report.devices()));
    row.put("time_ms", report.timeMs());
    Map<String, Object> fields = report.toMap();
    fields.remove("host_topology");
    row.put("report", fields);
    return row;
  }

  /** The nodes whose CPUs meet {@code cpus}, in the list format; null when unknown. */
  static String nodes(String cpus, Map<String, String> hostNodes) {
    if (hostNodes == null || cpus == null || cpus.isEmpty()) {
      return null;
    }
    try {
      CpuSet allowed = CpuSet.parse(cpus);
      TreeSet<Integer> on = new TreeSet<>();
      hostNodes.forEach((node, nodeCpus) -> {
        if (!nodeCpus.isEmpty() && !CpuSet.parse(nodeCpus).and(allowed).isEmpty()) {
          on.add(Integer.parseInt(node));
        }
      });
      return CpuSet.of(on).toString();
    } catch (RuntimeException e) {
      return null; // a malformed list: the page shows the node as unknown
    }
  }

  private static Integer cpuCount(String cpus) {
    try {
      return cpus == null ? null : CpuSet.parse(cpus).size();
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static long residentBytes(PlacementReport report) {
    long bytes = sum(report.bytesPerNode());
    if (report.python() != null) {
      for (PythonProcess process : report.python()) {
        bytes += sum(process.bytesPerNode());
      }
    }
    return bytes;
  }

  private static long sum(Map<String, Long> perNode) {
    return perNode == null ? 0 : perNode.values().stream().mapToLong(Long::longValue).sum();
  }

  private static List<String> devices(List<DeviceReport> given) {
    List<String> said = new ArrayList<>();
    if (given != null) {
      for (DeviceReport device : given) {
        said.add(device.resource() + " " + device.address()
            + (device.node() == null ? " (node unknown)" : " on node " + device.node()));
      }
    }
    return said;
  }
}
