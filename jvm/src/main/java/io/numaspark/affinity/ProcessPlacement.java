package io.numaspark.affinity;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where this JVM really runs, read from its own {@code /proc/self}: the CPUs and memory nodes
 * it may use ({@code status}: Cpus_allowed_list, Mems_allowed_list), the memory policy of most
 * of its mappings and its resident bytes per NUMA node ({@code numa_maps}). Plain Linux
 * files, no native call: any JVM program can ask, e.g. {@code ProcessPlacement.read()}.
 *
 * @param pid this process
 * @param cpus the CPUs it may run on
 * @param mems the memory nodes its cpuset allows
 * @param policy the numa_maps policy of most mappings: {@code default}, {@code bind:0}, ...
 * @param bytesPerNode resident bytes on each node (pages times their page size)
 */
public record ProcessPlacement(
    long pid, CpuSet cpus, CpuSet mems, String policy, Map<Integer, Long> bytesPerNode) {

  /** This JVM's placement, now. */
  public static ProcessPlacement read() throws IOException {
    return read(Path.of("/proc/self"), ProcessHandle.current().pid());
  }

  static ProcessPlacement read(Path proc, long pid) throws IOException {
    String status = Files.readString(proc.resolve("status"), StandardCharsets.UTF_8);
    String maps;
    try {
      maps = Files.readString(proc.resolve("numa_maps"), StandardCharsets.UTF_8);
    } catch (IOException e) {
      maps = ""; // a kernel without NUMA: no policy, no pages per node
    }
    return parse(pid, status, maps);
  }

  /** A placement from the text of {@code /proc/PID/status} and {@code /proc/PID/numa_maps}. */
  public static ProcessPlacement parse(long pid, String status, String numaMaps) {
    CpuSet cpus = CpuSet.parse(field(status, "Cpus_allowed_list"));
    CpuSet mems = CpuSet.parse(field(status, "Mems_allowed_list"));
    Map<String, Long> policies = new HashMap<>();
    Map<Integer, Long> bytes = new TreeMap<>();
    for (String line : numaMaps.split("\n")) {
      String[] parts = line.split(" ");
      if (parts.length < 2) {
        continue;
      }
      // two policies are two words as the kernel writes them: "prefer (many):0" (what
      // hwloc-bind --membind gives) and "weighted interleave:0-1"
      String policy = parts[1];
      int next = 2;
      if (parts.length > 2 && (policy.equals("weighted")
          || policy.equals("prefer") && parts[2].startsWith("(many)"))) {
        policy = policy + " " + parts[2];
        next = 3;
      }
      policies.merge(policy, 1L, Long::sum);
      long pageSize = 4096;
      Map<Integer, Long> pages = new HashMap<>();
      for (int i = next; i < parts.length; i++) {
        String part = parts[i];
        if (part.startsWith("kernelpagesize_kB=")) {
          pageSize = 1024L * Long.parseLong(part.substring(18));
        } else if (part.length() > 1 && part.charAt(0) == 'N' && part.indexOf('=') > 1) {
          int eq = part.indexOf('=');
          try {
            pages.put(Integer.parseInt(part.substring(1, eq)), Long.parseLong(part.substring(eq + 1)));
          } catch (NumberFormatException e) {
            // not a node count
          }
        }
      }
      for (Map.Entry<Integer, Long> node : pages.entrySet()) {
        bytes.merge(node.getKey(), node.getValue() * pageSize, Long::sum);
      }
    }
    String policy = policies.entrySet().stream()
        .max(Map.Entry.comparingByValue())
        .map(Map.Entry::getKey)
        .orElse("unknown");
    return new ProcessPlacement(pid, cpus, mems, policy, bytes);
  }

  private static String field(String status, String name) {
    for (String line : status.split("\n")) {
      if (line.startsWith(name + ":")) {
        return line.substring(name.length() + 1).strip();
      }
    }
    return "";
  }

  /** Resident bytes in all. */
  public long residentBytes() {
    return bytesPerNode.values().stream().mapToLong(Long::longValue).sum();
  }

  /**
   * The share of resident bytes on {@code nodes} (the nodes it should use); 1 when nothing is
   * resident yet.
   */
  public double shareOn(CpuSet nodes) {
    long total = residentBytes();
    if (total == 0) {
      return 1.0;
    }
    long on = bytesPerNode.entrySet().stream()
        .filter(e -> nodes.contains(e.getKey()))
        .mapToLong(Map.Entry::getValue)
        .sum();
    return (double) on / total;
  }

  /**
   * The nodes its memory should be on: those its policy names ({@code bind:0}), else the nodes
   * of its CPUs in {@code topology}.
   */
  public CpuSet homeNodes(Topology topology) {
    int colon = policy.indexOf(':');
    if (colon > 0 && !policy.startsWith("default") && !policy.startsWith("local")) {
      try {
        return CpuSet.parse(policy.substring(colon + 1));
      } catch (IllegalArgumentException e) {
        // fall back to the CPUs' nodes
      }
    }
    java.util.List<Integer> nodes = new java.util.ArrayList<>();
    for (Map.Entry<Integer, CpuSet> node : topology.nodes().entrySet()) {
      if (!node.getValue().and(cpus).isEmpty()) {
        nodes.add(node.getKey());
      }
    }
    return CpuSet.of(nodes);
  }
}
