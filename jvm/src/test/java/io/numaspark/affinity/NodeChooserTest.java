package io.numaspark.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Choosing NUMA nodes for node-level executors. The multi-node logic is tested on synthetic
 * topologies and on saved real ones (../../shared/topologies, hwloc XML): this machine has one
 * NUMA node. The lock spreading is tested across real processes: the fcntl lock is released by
 * the kernel when a process dies, which no in-process test can show.
 */
class NodeChooserTest {
  private static final Path TOPOLOGIES = Path.of("../../shared/topologies");

  /** Two sockets of two dies each: 12 between dies of a socket, 32 across sockets. */
  private static Topology fourNodes(int cpusPerNode) {
    List<CpuSet> cores = new ArrayList<>();
    Map<Integer, CpuSet> nodes = new TreeMap<>();
    Map<Integer, Map<Integer, Integer>> distances = new TreeMap<>();
    for (int node = 0; node < 4; node++) {
      List<Integer> cpus = new ArrayList<>();
      for (int i = 0; i < cpusPerNode; i++) {
        cpus.add(node * cpusPerNode + i);
        cores.add(CpuSet.of(node * cpusPerNode + i));
      }
      nodes.put(node, CpuSet.of(cpus));
      Map<Integer, Integer> row = new TreeMap<>();
      for (int to = 0; to < 4; to++) {
        row.put(to, to == node ? 10 : to / 2 == node / 2 ? 12 : 32);
      }
      distances.put(node, row);
    }
    return new Topology(cores, nodes, distances);
  }

  private static Topology xml(String name) throws IOException {
    Path file = TOPOLOGIES.resolve(name);
    assumeTrue(Files.exists(file), "needs " + file);
    return Topology.fromHwlocXml(file);
  }

  @Test
  void distancesAreReadFromHwlocAndSysfs() throws IOException {
    Topology power8 = xml("power8gpudistances.xml");
    assertEquals(40, power8.distance(0, 1));
    assertEquals(10, power8.distance(1, 1));
    Topology amd = xml("16amd64-4distances.xml"); // OS indexes out of logical order
    assertEquals(8, amd.distances().size());
    assertEquals(10, amd.distance(5, 5));
    assertEquals(20, amd.distance(5, 3));
    Topology here = Topology.fromSysfs();
    for (int node : here.nodes().keySet()) {
      assertEquals(10, here.distance(node, node), "sysfs node" + node + "/distance");
    }
  }

  @Test
  void candidatesAreTheNodesWithAllowedCpus() throws IOException {
    Topology xeon = xml("24em64t-2n6c2t-pci.xml"); // node 0: even CPUs, node 1: odd ones
    assertEquals(CpuSet.parse("0-1"), NodeChooser.candidates(xeon, xeon.cpus()));
    assertEquals(CpuSet.of(1), NodeChooser.candidates(xeon, CpuSet.parse("1,3,5")));
    Topology cpusets = xml("16amd64-8n2c-cpusets.xml"); // memory-only nodes 4, 5
    assertEquals(CpuSet.parse("1-3"), NodeChooser.candidates(cpusets, cpusets.cpus()));
  }

  @Test
  void executorsSpreadOverNodesThenStack(@TempDir Path dir) throws IOException {
    Topology xeon = xml("24em64t-2n6c2t-pci.xml");
    Path locks = dir.resolve("locks");
    List<NodeChooser.Choice> held = new ArrayList<>();
    try {
      for (int i = 0; i < 5; i++) {
        held.add(NodeChooser.choose(xeon, xeon.cpus(), 4, locks));
      }
      assertEquals(List.of("0/0", "1/0", "0/1", "1/1", "0/2"),
          held.stream().map(c -> c.node() + "/" + c.slot()).toList());
      NodeChooser.Choice first = held.get(0);
      assertEquals(CpuSet.of(0), first.nodes());
      assertEquals(xeon.nodes().get(0), first.cpus());
      assertEquals("slot 0 of node 0 in " + locks + " (nodes 0-1 allowed); cores taken "
          + "before: node 0 0, node 1 0", first.why());
      // the fifth read node 0's two 4-core holders and node 1's two: a tie, the lowest node
      assertTrue(held.get(4).why().endsWith("cores taken before: node 0 8, node 1 8"),
          held.get(4).why());
      held.get(1).close(); // its slot is free again: the next one takes it
      held.set(1, NodeChooser.choose(xeon, xeon.cpus(), 4, locks));
      assertEquals("1/0", held.get(1).node() + "/" + held.get(1).slot());
      // a container allowed only node 1's CPUs: only node 1, never widened
      try (NodeChooser.Choice narrow = NodeChooser.choose(xeon, CpuSet.parse("1,3"), 4,
          locks)) {
        assertEquals(CpuSet.of(1), narrow.nodes());
        assertEquals(CpuSet.parse("1,3"), narrow.cpus());
        assertEquals(2, narrow.slot());
      }
    } finally {
      held.forEach(NodeChooser.Choice::close);
    }
    assertEquals(01777, (int) Files.getAttribute(locks, "unix:mode") & 07777); // sticky
    assertEquals("rw-rw-rw-", PosixFilePermissions.toString(
        Files.getPosixFilePermissions(locks.resolve("node-1.slot-0.lock"))));
    assertThrows(IOException.class,
        () -> NodeChooser.choose(xeon, CpuSet.parse("100"), 1, locks));
  }

  @Test
  void devicesChooseTheirNodesSlots(@TempDir Path dir) throws IOException {
    Topology four = fourNodes(4); // synthetic: never skipped for a missing file
    Path locks = dir.resolve("locks");
    List<NodeChooser.Choice> held = new ArrayList<>();
    try {
      // two executors whose GPUs hang off node 1: both take node 1's slots, not node 0's
      held.add(NodeChooser.choose(four, four.cpus(), 4, locks, CpuSet.of(1)));
      held.add(NodeChooser.choose(four, four.cpus(), 4, locks, CpuSet.of(1)));
      assertEquals(List.of("1/0", "1/1"), held.stream().map(c -> c.node() + "/" + c.slot())
          .toList());
      assertEquals(CpuSet.of(1), held.get(1).nodes());
      assertEquals(four.nodes().get(1), held.get(1).cpus());
      assertEquals("slot 1 of node 1 in " + locks + " (nodes 0-3 allowed); by its devices' "
          + "node 1", held.get(1).why());
      held.add(NodeChooser.choose(four, four.cpus(), 4, locks)); // no devices: the free node
      assertEquals("0/0", held.get(2).node() + "/" + held.get(2).slot());
      // devices on two nodes: bound to both, and said so
      held.add(NodeChooser.choose(four, four.cpus(), 4, locks, CpuSet.of(2, 3)));
      assertEquals(CpuSet.parse("2-3"), held.get(3).nodes());
      assertEquals(CpuSet.parse("8-15"), held.get(3).cpus());
      assertTrue(held.get(3).why().endsWith("its devices sit on nodes 2-3: bound to all of "
          + "them"), held.get(3).why());
      // a container allowed node 0 only: its GPU's node 1 cannot widen it
      held.add(NodeChooser.choose(four, four.nodes().get(0), 4, locks, CpuSet.of(1)));
      assertEquals(CpuSet.of(0), held.get(4).nodes());
      assertTrue(held.get(4).why().contains("its devices' node(s) 1 are not among the allowed "
          + "nodes 0: chosen as without devices"), held.get(4).why());
      // more cores than the device's node holds: the nearest node added
      held.add(NodeChooser.choose(four, four.cpus(), 6, locks, CpuSet.of(2)));
      assertEquals(CpuSet.parse("2-3"), held.get(5).nodes());
      assertTrue(held.get(5).why().contains("6 cores need nodes 2-3"), held.get(5).why());
    } finally {
      held.forEach(NodeChooser.Choice::close);
    }
  }

  @Test
  void aDirectoryNoLockFileCanBeMadeInIsSaidAtOnce() throws IOException {
    Topology xeon = xml("24em64t-2n6c2t-pci.xml");
    Path locks = Path.of("/proc/self"); // a directory where no one, root included, creates
    IOException refused = assertThrows(IOException.class,
        () -> NodeChooser.choose(xeon, xeon.cpus(), 1, locks));
    assertTrue(refused.getMessage().startsWith("cannot open or create lock files in "
        + locks), refused.getMessage());
  }

  @Test
  void coresBeyondANodeTakeTheFewestNearestNodes() throws IOException {
    Topology four = fourNodes(4); // nodes 0,1 | 2,3: 12 within a socket, 32 across
    CpuSet all = four.cpus();
    assertEquals(CpuSet.of(2), NodeChooser.nodesFor(four, all, 2, 4));
    assertEquals(CpuSet.parse("2-3"), NodeChooser.nodesFor(four, all, 2, 5)); // its sibling
    // 9: its sibling and one node across, as near as each other: the lowest number
    assertEquals(CpuSet.parse("0,2-3"), NodeChooser.nodesFor(four, all, 3, 9));
    assertEquals(CpuSet.parse("0-3"), NodeChooser.nodesFor(four, all, 0, 99)); // all there is
    // a cpuset leaves node 0 four CPUs, node 1 one, node 2 none, node 3 three
    CpuSet narrowed = CpuSet.parse("0-3,4,12-14");
    assertEquals(CpuSet.of(0), NodeChooser.nodesFor(four, narrowed, 0, 4));
    assertEquals(CpuSet.of(0, 1), NodeChooser.nodesFor(four, narrowed, 0, 5)); // the nearest
    // 7: nearest-first would take 0, 1 and 3; the fewest are 0 and 3
    assertEquals(CpuSet.of(0, 3), NodeChooser.nodesFor(four, narrowed, 0, 7));
    assertEquals(CpuSet.parse("0-1,3"), NodeChooser.nodesFor(four, narrowed, 0, 8));
  }

  private static Process child(Path locks, String... more) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = String.join(File.pathSeparator, "target/classes", "target/test-classes",
        System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(java, "-Xshare:auto",
        "-XX:TieredStopAtLevel=1", "-cp", classPath, NodeChooserChild.class.getName(),
        locks.toString()));
    command.addAll(List.of(more));
    return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  /** A child holding slots ("N:K:C,...": slot K of node N for C cores), once it holds them. */
  private static Process holder(Path locks, String slots) throws IOException {
    Process holder = child(locks, "hold", slots);
    assertEquals("held", firstLine(holder));
    return holder;
  }

  private static void let(List<Process> children) throws InterruptedException, IOException {
    for (Process child : children) {
      child.getOutputStream().close(); // its stdin: it lets go and exits
      if (!child.waitFor(30, TimeUnit.SECONDS)) {
        child.destroyForcibly();
      }
    }
  }

  private static String firstLine(Process process) throws IOException {
    BufferedReader out = new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    assertTrue(line != null, "the child said nothing (exit " + (process.isAlive() ? "-"
        : process.exitValue()) + ")");
    return line;
  }

  @Test
  void processesSpreadAndADeadOnesSlotIsFreeAgain(@TempDir Path dir) throws Exception {
    Path locks = dir.resolve("locks");
    List<Process> children = new ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        children.add(child(locks)); // started together: they race for the locks
      }
      Map<String, Process> bySlot = new TreeMap<>();
      for (Process child : children) {
        bySlot.put(firstLine(child), child);
      }
      // "NODE SLOT": slot 0 of both nodes, then slot 1 of node 0: spread 2 + 1
      assertEquals(List.of("0 0", "0 1", "1 0"), new ArrayList<>(bySlot.keySet()));
      Process onNode1 = bySlot.get("1 0");
      onNode1.destroyForcibly(); // SIGKILL: no shutdown hook, no close: the kernel releases
      assertTrue(onNode1.waitFor(30, TimeUnit.SECONDS));
      Process next = child(locks);
      children.add(next);
      assertEquals("1 0", firstLine(next));
      Process another = child(locks);
      children.add(another);
      assertEquals("1 1", firstLine(another)); // node 0 holds 2, node 1 one

    } finally {
      let(children);
    }
  }

  @Test
  void twoProcessesChoosingAtOnceEndOnTwoNodes(@TempDir Path dir) throws Exception {
    // Each child waits for the same file, then chooses within a millisecond of the other, and
    // pauses 300 ms between reading the holders and taking its slot: without the choice lock
    // both would read an empty host and take node 0. Three rounds, a fresh directory each.
    for (int round = 0; round < 3; round++) {
      Path locks = dir.resolve("locks" + round);
      Path go = dir.resolve("go" + round);
      List<Process> children = new ArrayList<>();
      try {
        for (int i = 0; i < 2; i++) {
          children.add(child(locks, "choose", "1", "300", go.toString()));
        }
        Thread.sleep(1500); // both JVMs up and polling
        Files.createFile(go);
        List<String> got = new ArrayList<>();
        for (Process child : children) {
          got.add(firstLine(child));
        }
        got.sort(null);
        assertEquals(List.of("0 0", "1 0"), got, "round " + round);
      } finally {
        let(children);
      }
    }
  }

  @Test
  void afterChurnTheNextGoesToTheNodeWithFewerHolders(@TempDir Path dir) throws Exception {
    // the lopsided case: executors came and went until node 0 holds slots 1 and 2 and
    // node 1 slot 1; the next takes node 1's slot 0, not node 0's freed slot 0 (3 against 1)
    Path locks = dir.resolve("locks");
    List<Process> children = new ArrayList<>();
    try {
      children.add(holder(locks, "0:1:1,0:2:1"));
      children.add(holder(locks, "1:1:1"));
      Process next = child(locks);
      children.add(next);
      assertEquals("1 0", firstLine(next));
      // now 2 against 2: the lowest node, its lowest free slot
      Process then = child(locks);
      children.add(then);
      assertEquals("0 0", firstLine(then));
    } finally {
      let(children);
    }
  }

  @Test
  void aRemovalThatUnbalancesTheNodesMovesOneOfTheHeavierNodesHolders(@TempDir Path dir)
      throws Exception {
    // the churn proof's case (the guest, 2026-12-06): 2/1, then node 1's executor removed
    // (idle): 2/0, which no choice mends while nothing starts. Of node 0's two holders, both
    // asking every 5 ms, exactly one moves (the choice lock), into the freed slot
    Path locks = dir.resolve("locks");
    List<Process> children = new ArrayList<>();
    try {
      Process first = child(locks, "rebalance");
      children.add(first);
      assertEquals("0 0", firstLine(first));
      Process onNode1 = holder(locks, "1:0:1");
      children.add(onNode1);
      Process second = child(locks, "rebalance");
      children.add(second);
      assertEquals("0 1", firstLine(second)); // 1 against 1: the lowest node
      Thread.sleep(500); // 2 against 1: one apart, nobody moves
      assertEquals(List.of(0, 0, 1), holdersByNode(locks));
      onNode1.destroyForcibly(); // SIGKILL: 2 against 0
      assertTrue(onNode1.waitFor(30, TimeUnit.SECONDS));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (!holdersByNode(locks).equals(List.of(0, 1)) && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertEquals(List.of(0, 1), holdersByNode(locks));
      Thread.sleep(500); // 1 against 1: no more moves
      assertEquals(List.of(0, 1), holdersByNode(locks));
      let(List.of(first, second)); // their stdin closed: what each printed is all there is
      List<String> said = new ArrayList<>();
      for (Process child : List.of(first, second)) {
        said.addAll(new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8)).lines().toList());
      }
      assertEquals(List.of("moved 1 0"), said);
    } finally {
      let(children);
    }
  }

  @Test
  void aMoveWeighsWidthsAndNeverMakesTheBalanceWorse(@TempDir Path dir) throws Exception {
    // this JVM, 2 cores on node 0 beside a 1-core holder: 3 against node 1's 1 is two apart,
    // but moving 2 cores would make it 1 against 3: it stays. With node 1 empty (3 against 0)
    // it moves: 1 against 2
    Path locks = dir.resolve("locks");
    List<Process> children = new ArrayList<>();
    try {
      children.add(holder(locks, "0:1:1"));
      Process onNode1 = holder(locks, "1:0:1");
      children.add(onNode1);
      CpuSet all = CpuSet.parse("0-3");
      try (NodeChooser.Choice mine = NodeChooser.choose(NodeChooserChild.TWO_NODES, all, 2,
          locks)) {
        assertEquals("0/0", mine.node() + "/" + mine.slot());
        assertEquals(null, NodeChooser.rebalance(NodeChooserChild.TWO_NODES, all, locks, mine,
            false));
        onNode1.destroyForcibly();
        assertTrue(onNode1.waitFor(30, TimeUnit.SECONDS));
        assertEquals(null, NodeChooser.rebalance(NodeChooserChild.TWO_NODES, all, locks, mine,
            true), "chosen by its devices: never moved");
        try (NodeChooser.Choice moved = NodeChooser.rebalance(NodeChooserChild.TWO_NODES, all,
            locks, mine, false)) {
          assertEquals("1/0", moved.node() + "/" + moved.slot());
          assertEquals(CpuSet.parse("2-3"), moved.cpus());
          assertTrue(moved.why().contains("moved from slot 0 of node 0, whose holders took 3 "
              + "cores against node 1's 0"), moved.why());
          assertEquals(0, NodeChooser.holderWidth(locks.resolve("node-0.slot-0.lock")),
              "the old slot is free");
          assertEquals(List.of(0, 1), holdersByNode(locks));
        }
      }
    } finally {
      let(children);
    }
  }

  /** The node of each held slot file in {@code locks}, sorted (free files left out). */
  private static List<Integer> holdersByNode(Path locks) throws IOException {
    List<Integer> nodes = new ArrayList<>();
    try (var files = Files.list(locks)) {
      for (Path file : files.toList()) {
        String name = file.getFileName().toString();
        if (name.startsWith("node-") && NodeChooser.holderWidth(file) > 0) {
          nodes.add(Integer.parseInt(name.substring(5, name.indexOf('.'))));
        }
      }
    }
    nodes.sort(null);
    return nodes;
  }

  @Test
  void holdersWeighTheirCores(@TempDir Path dir) throws Exception {
    // node 0: one 4-core executor; node 1: three 1-core ones. Counting executors, node 0 has
    // fewer; counting cores, node 1 (3 against 4): the next 1-core executor goes there
    Path locks = dir.resolve("locks");
    List<Process> children = new ArrayList<>();
    try {
      children.add(holder(locks, "0:0:4"));
      children.add(holder(locks, "1:0:1,1:1:1,1:2:1"));
      Process next = child(locks);
      children.add(next);
      assertEquals("1 3", firstLine(next));
    } finally {
      let(children);
    }
  }

  @Test
  void aDeadHolderNoLongerCounts(@TempDir Path dir) throws Exception {
    Path locks = dir.resolve("locks");
    List<Process> children = new ArrayList<>();
    try {
      Process wide = holder(locks, "0:0:4");
      children.add(wide);
      children.add(holder(locks, "1:0:1"));
      try (NodeChooser.Choice alive = NodeChooser.choose(NodeChooserChild.TWO_NODES,
          CpuSet.parse("0-3"), 1, locks)) {
        assertEquals("1/1", alive.node() + "/" + alive.slot()); // 4 against 1
      }
      wide.destroyForcibly(); // SIGKILL: the kernel releases its lock, its file stays
      assertTrue(wide.waitFor(30, TimeUnit.SECONDS));
      assertTrue(Files.readString(locks.resolve("node-0.slot-0.lock")).startsWith("cores=4\n"));
      try (NodeChooser.Choice after = NodeChooser.choose(NodeChooserChild.TWO_NODES,
          CpuSet.parse("0-3"), 1, locks)) {
        assertEquals("0/0", after.node() + "/" + after.slot()); // 0 against 1: the dead one's
        assertTrue(after.why().endsWith("cores taken before: node 0 0, node 1 1"), after.why());
      }
    } finally {
      let(children);
    }
  }

  @Test
  void aHolderWritesItsWidthAndAFreedFilesContentCountsForNothing(@TempDir Path dir)
      throws Exception {
    Path locks = dir.resolve("locks");
    Files.createDirectories(locks);
    // a file left by a holder that ended: its lock is free, whatever it says
    Files.writeString(locks.resolve("node-0.slot-0.lock"), "cores=99\npid=1\n");
    Topology four = fourNodes(4);
    try (NodeChooser.Choice wide = NodeChooser.choose(four, four.cpus(), 3, locks)) {
      assertEquals("0/0", wide.node() + "/" + wide.slot());
      assertEquals("cores=3\npid=" + ProcessHandle.current().pid() + "\n",
          Files.readString(locks.resolve("node-0.slot-0.lock")));
      try (NodeChooser.Choice next = NodeChooser.choose(four, four.cpus(), 1, locks)) {
        assertEquals("1/0", next.node() + "/" + next.slot());
        assertTrue(next.why().contains("cores taken before: node 0 3, node 1 0, node 2 0, "
            + "node 3 0"), next.why());
      }
    }
    // an older plugin's holder wrote nothing: it weighs 1
    Process old = child(locks, "hold", "2:0:1");
    try {
      assertEquals("held", firstLine(old));
      Files.writeString(locks.resolve("node-2.slot-0.lock"), ""); // as an older plugin left it
      assertEquals(1, NodeChooser.coresTaken(locks, CpuSet.of(2)).get(2));
    } finally {
      let(List.of(old));
    }
  }

  @Test
  void theChoiceLockIsReleasedAfterEachChoice(@TempDir Path dir) throws Exception {
    Path locks = dir.resolve("locks");
    try (NodeChooser.Choice held = NodeChooser.choose(NodeChooserChild.TWO_NODES,
        CpuSet.parse("0-3"), 1, locks)) {
      // another process chooses at once: it did not wait for the choice lock
      long start = System.nanoTime();
      Process other = child(locks);
      try {
        assertEquals("1 0", firstLine(other));
      } finally {
        let(List.of(other));
      }
      assertTrue(System.nanoTime() - start < NodeChooser.CHOOSE_WAIT_MS * 1_000_000L);
      assertEquals(0, held.slot());
      assertEquals("rw-rw-rw-", PosixFilePermissions.toString(
          Files.getPosixFilePermissions(locks.resolve(NodeChooser.CHOOSE_LOCK))));
    }
  }
}
