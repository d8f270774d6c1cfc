package io.numaspark.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProcessPlacementTest {
  private static final String STATUS = "Name:\tjava\nCpus_allowed_list:\t0-3\n"
      + "Mems_allowed_list:\t0-1\nThreads:\t40\n";
  // two nodes: a bound heap on node 1, a default mapping split, a 2 MB huge page on node 0
  private static final String MAPS = String.join("\n",
      "7f00 bind:1 anon=10 dirty=10 N1=10 kernelpagesize_kB=4",
      "7f10 bind:1 anon=20 dirty=20 N1=20 kernelpagesize_kB=4",
      "7f20 default file=/usr/lib/libc.so mapped=3 N0=2 N1=1 kernelpagesize_kB=4",
      "7f30 bind:1 anon=1 N0=1 kernelpagesize_kB=2048", "");

  @Test
  void readsCpusPolicyAndBytesPerNode() {
    ProcessPlacement p = ProcessPlacement.parse(42, STATUS, MAPS);
    assertEquals("0-3", p.cpus().toString());
    assertEquals("0-1", p.mems().toString());
    assertEquals("bind:1", p.policy()); // the policy of most mappings
    assertEquals(Map.of(0, 2 * 4096L + 2048 * 1024L, 1, 31 * 4096L), p.bytesPerNode());
    assertEquals(p.bytesPerNode().get(0) + p.bytesPerNode().get(1), p.residentBytes());
  }

  @Test
  void homeNodesComeFromThePolicyElseFromTheCpus() {
    Topology twoNodes = new Topology(List.of(CpuSet.of(0), CpuSet.of(1), CpuSet.of(2),
        CpuSet.of(3)), Map.of(0, CpuSet.parse("0-1"), 1, CpuSet.parse("2-3")));
    ProcessPlacement bound = ProcessPlacement.parse(42, STATUS, MAPS);
    assertEquals("1", bound.homeNodes(twoNodes).toString());
    assertEquals(31 * 4096.0 / bound.residentBytes(), bound.shareOn(CpuSet.of(1)), 1e-9);
    ProcessPlacement free = ProcessPlacement.parse(7, STATUS.replace("0-3", "2-3"),
        "7f00 default anon=5 N1=5 kernelpagesize_kB=4\n");
    assertEquals("1", free.homeNodes(twoNodes).toString());
    assertEquals(1.0, free.shareOn(CpuSet.of(1)), 1e-9);
  }

  @Test
  void aPolicyOfTwoWordsIsOnePolicy() {
    Topology twoNodes = new Topology(List.of(CpuSet.of(0), CpuSet.of(1), CpuSet.of(2),
        CpuSet.of(3)), Map.of(0, CpuSet.parse("0-1"), 1, CpuSet.parse("2-3")));
    ProcessPlacement many = ProcessPlacement.parse(42, STATUS, String.join("\n",
        "7f00 prefer (many):1 anon=10 dirty=10 N1=10 kernelpagesize_kB=4",
        "7f10 prefer (many):1 anon=2 dirty=2 N0=2 kernelpagesize_kB=4",
        "7f20 default file=/usr/lib/libc.so mapped=3 N0=3 kernelpagesize_kB=4", ""));
    assertEquals("prefer (many):1", many.policy());
    assertEquals("1", many.homeNodes(twoNodes).toString());
    assertEquals(Map.of(0, 5 * 4096L, 1, 10 * 4096L), many.bytesPerNode());
    ProcessPlacement weighted = ProcessPlacement.parse(42, STATUS,
        "7f00 weighted interleave:0-1 anon=4 N0=2 N1=2 kernelpagesize_kB=4\n");
    assertEquals("weighted interleave:0-1", weighted.policy());
    assertEquals("0-1", weighted.homeNodes(twoNodes).toString());
  }

  @Test
  void noNumaMapsMeansNothingKnownAndNothingRemote() {
    ProcessPlacement p = ProcessPlacement.parse(1, STATUS, "");
    assertEquals("unknown", p.policy());
    assertEquals(0, p.residentBytes());
    assertTrue(p.shareOn(CpuSet.of(0)) == 1.0);
    assertEquals("0-3", p.cpus().toString());
  }
}
