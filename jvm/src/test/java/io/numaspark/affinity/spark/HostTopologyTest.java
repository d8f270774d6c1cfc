package io.numaspark.affinity.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.Topology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host topology an executor's first report carries, read from a sysfs tree written here
 * the way the kernel lays it out (two packages, one node each, 2-way SMT, CPUs numbered as on
 * Intel servers: a core's siblings are n and n+4), and from this machine's own sysfs.
 */
class HostTopologyTest {

  /** cpuN/topology/{thread_siblings_list,physical_package_id}; nodeN/{cpulist,distance,meminfo}. */
  private static Path twoNodes(Path sys) throws IOException {
    for (int cpu = 0; cpu < 8; cpu++) {
      Path topology = Files.createDirectories(sys.resolve("cpu/cpu" + cpu + "/topology"));
      int first = cpu % 4;
      Files.writeString(topology.resolve("thread_siblings_list"), first + "," + (first + 4));
      Files.writeString(topology.resolve("physical_package_id"), (first / 2) + "\n");
    }
    Files.createDirectories(sys.resolve("cpu/cpufreq")); // not a CPU: ignored
    String[] cpulists = {"0-1,4-5", "2-3,6-7"};
    String[] distances = {"10 21", "21 10"};
    for (int node = 0; node < 2; node++) {
      Path dir = Files.createDirectories(sys.resolve("node/node" + node));
      Files.writeString(dir.resolve("cpulist"), cpulists[node] + "\n");
      Files.writeString(dir.resolve("distance"), distances[node] + "\n");
      Files.writeString(dir.resolve("meminfo"), "Node " + node + " MemTotal:       "
          + (node + 1) * 1024 + " kB\nNode " + node + " MemFree:        12 kB\n");
    }
    return sys;
  }

  @Test
  void everyPartIsReadFromSysfs(@TempDir Path tmp) throws IOException {
    Path sys = twoNodes(tmp);
    HostTopology host = HostTopology.of(Topology.fromSysfs(sys), sys);
    assertEquals(Map.of("0", "0-1,4-5", "1", "2-3,6-7"), host.nodes());
    assertEquals(Map.of("0", 1024L * 1024, "1", 2048L * 1024), host.nodeMemoryBytes());
    assertEquals(List.of("0,4", "1,5", "2,6", "3,7"), host.cores());
    assertEquals(Map.of("0", "0-1,4-5", "1", "2-3,6-7"), host.packages());
    assertEquals(Map.of("0", Map.of("0", 10, "1", 21), "1", Map.of("0", 21, "1", 10)),
        host.distances());
  }

  @Test
  void aPartThatCannotBeReadIsLeftOut(@TempDir Path tmp) throws IOException {
    Path sys = twoNodes(tmp);
    Files.delete(sys.resolve("cpu/cpu5/topology/physical_package_id"));
    Files.delete(sys.resolve("node/node1/meminfo"));
    Files.writeString(sys.resolve("node/node0/meminfo"), "garbage\n");
    Files.delete(sys.resolve("node/node0/distance"));
    Files.delete(sys.resolve("node/node1/distance"));
    HostTopology host = HostTopology.of(Topology.fromSysfs(sys), sys);
    assertNull(host.packages()); // one CPU's package unknown: none rather than a wrong grouping
    assertNull(host.nodeMemoryBytes());
    assertNull(host.distances());
    assertEquals(4, host.cores().size());
    assertEquals("{\"cores\":[\"0,4\",\"1,5\",\"2,6\",\"3,7\"],"
        + "\"nodes\":{\"0\":\"0-1,4-5\",\"1\":\"2-3,6-7\"}}", PluginJson.line(host));
  }

  @Test
  void thisMachinesHostIsEveryOnlineCpu() throws IOException {
    HostTopology host = HostTopology.read();
    assertNotNull(host, "this machine's sysfs could not be read");
    CpuSet online = CpuSet.parse(Files.readString(Path.of("/sys/devices/system/cpu/online")));
    CpuSet inNodes = CpuSet.of();
    for (String cpus : host.nodes().values()) {
      inNodes = inNodes.or(CpuSet.parse(cpus));
    }
    assertEquals(online, inNodes);
    assertEquals(host.nodes().keySet(), host.nodeMemoryBytes().keySet());
    assertEquals(host.nodes().keySet(), host.distances().keySet());
  }
}
