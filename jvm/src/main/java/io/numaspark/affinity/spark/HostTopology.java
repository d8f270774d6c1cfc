package io.numaspark.affinity.spark;

import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.Topology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The executor's host as it sees it in sysfs, sent once, in its first {@link PlacementReport}
 * ({@code host_topology}): numaspark keeps it to plan the next run on that cluster, whose
 * hosts it cannot read itself. Every CPU of the host is here, not only the executor's allowed
 * ones (a container's cpuset narrows those; its host's nodes are what a plan needs).
 *
 * @param nodes NUMA node (as text) to its CPUs (Linux list format; empty for memory only)
 * @param nodeMemoryBytes node to its memory ({@code nodeN/meminfo} MemTotal); null when no
 *     node's could be read, a node left out when its own could not
 * @param cores each core's CPUs (its SMT siblings), by their first CPU
 * @param packages package ({@code physical_package_id}) to its CPUs; null when unknown
 * @param distances node to node to the firmware's relative latency ({@code nodeN/distance});
 *     null when unknown
 */
public record HostTopology(Map<String, String> nodes, Map<String, Long> nodeMemoryBytes,
    List<String> cores, Map<String, String> packages,
    Map<String, Map<String, Integer>> distances) {

  static final Path SYSFS = Path.of("/sys/devices/system");
  private static final Pattern MEM_TOTAL = Pattern.compile("MemTotal:\\s+(\\d+)\\s*kB");

  /** This host, read from sysfs; null when it cannot be read (the report goes without it). */
  static HostTopology read() {
    try {
      return of(Topology.fromSysfs(SYSFS), SYSFS);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * {@code topology} (read from the sysfs tree {@code system}) with what it does not hold: each
   * node's memory and each CPU's package, read from the same tree where they can be.
   */
  static HostTopology of(Topology topology, Path system) {
    Map<String, String> nodes = new TreeMap<>();
    Map<String, Long> memory = new TreeMap<>();
    topology.nodes().forEach((node, cpus) -> {
      nodes.put(String.valueOf(node), cpus.toString());
      Long bytes = memTotal(system.resolve("node/node" + node + "/meminfo"));
      if (bytes != null) {
        memory.put(String.valueOf(node), bytes);
      }
    });
    List<String> cores = new ArrayList<>();
    for (CpuSet core : topology.cores()) {
      cores.add(core.toString());
    }
    Map<String, Map<String, Integer>> distances = new TreeMap<>();
    topology.distances().forEach((from, row) -> {
      Map<String, Integer> to = new TreeMap<>();
      row.forEach((node, distance) -> to.put(String.valueOf(node), distance));
      distances.put(String.valueOf(from), to);
    });
    return new HostTopology(nodes, memory.isEmpty() ? null : memory, cores,
        packages(topology.cpus(), system), distances.isEmpty() ? null : distances);
  }

  /** A node's MemTotal in bytes ({@code Node 0 MemTotal: 14510284 kB}), null if unreadable. */
  private static Long memTotal(Path meminfo) {
    try {
      Matcher found = MEM_TOTAL.matcher(Files.readString(meminfo));
      return found.find() ? Long.parseLong(found.group(1)) * 1024 : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Each CPU's {@code topology/physical_package_id}, grouped; null if any cannot be read. */
  private static Map<String, String> packages(CpuSet cpus, Path system) {
    Map<Integer, List<Integer>> byPackage = new TreeMap<>();
    for (int cpu : cpus.toArray()) {
      try {
        int id = Integer.parseInt(Files.readString(
            system.resolve("cpu/cpu" + cpu + "/topology/physical_package_id")).strip());
        byPackage.computeIfAbsent(id, k -> new ArrayList<>()).add(cpu);
      } catch (IOException | RuntimeException e) {
        return null; // a partial grouping would misplace CPUs: none rather than wrong
      }
    }
    Map<String, String> packages = new TreeMap<>();
    byPackage.forEach((id, members) -> packages.put(String.valueOf(id),
        CpuSet.of(members).toString()));
    return packages;
  }
}
