package io.numaspark.affinity.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.FakeSysfs;
import io.numaspark.affinity.NodeChooser;
import io.numaspark.affinity.ThreadPolicy;
import io.numaspark.affinity.Topology;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Level node from inside, without Spark: on this host's own topology (one node here: binding
 * is a no-op but the slot is held, as under numactl) and on a synthetic two-node split of its
 * CPUs, which binds every thread of this test JVM for real (its whole set is given back).
 */
class NodeBinderTest {
  private static AffinityConf nodeLevel(Path locks, String memPolicy) {
    return AffinityConf.from(Map.of(AffinityConf.PREFIX + "level", "node",
        AffinityConf.PREFIX + "lockDir", locks.toString(),
        AffinityConf.PREFIX + "memPolicy", memPolicy), name -> null);
  }

  @Test
  void aJvmAlreadyOnOneNodeHoldsASlotAndBindsNothing(@TempDir Path dir) throws Exception {
    assumeTrue(Affinity.available(), "needs JNA's native part");
    CpuSet allowed = Affinity.currentThreadAffinity();
    Topology here = Topology.fromSysfs();
    assumeTrue(here.nodes().size() == 1, "one NUMA node");
    try (NodeBinder binder = NodeBinder.start(nodeLevel(dir, "preferred"), allowed, 1)) {
      assertEquals(here.nodes().keySet().iterator().next().toString(), binder.chosenNodes());
      assertTrue(binder.choice().startsWith("slot 0 of node "), binder.choice());
      assertTrue(binder.binding().startsWith("already confined to CPUs " + allowed),
          binder.binding());
      assertTrue(binder.binding().contains("memory already confined"), binder.binding());
      binder.onTaskStart();
      assertEquals(allowed, Affinity.currentThreadAffinity());
    }
  }

  @Test
  void everyThreadIsBoundToTheChosenNodesCpus(@TempDir Path dir) throws Exception {
    assumeTrue(Affinity.available(), "needs JNA's native part");
    CpuSet allowed = Affinity.currentThreadAffinity();
    assumeTrue(allowed.size() >= 2, "two CPUs to split");
    int[] cpus = allowed.toArray();
    CpuSet first = CpuSet.of(cpus[0]);
    CpuSet rest = allowed.minus(first);
    Topology split = new Topology(List.of(first, rest), Map.of(0, first, 1, rest));
    List<Integer> tids = new ArrayList<>();
    try (NodeBinder binder = NodeBinder.start(nodeLevel(dir, "bind"), allowed, 1, split)) {
      assertEquals("0", binder.chosenNodes());
      assertTrue(binder.binding().startsWith("every thread ("), binder.binding());
      assertTrue(binder.binding().contains("bound to CPUs " + first), binder.binding());
      try (var tasks = Files.list(Path.of("/proc/self/task"))) {
        tasks.forEach(task -> tids.add(Integer.parseInt(task.getFileName().toString())));
      }
      for (int tid : tids) {
        try {
          assertEquals(first, Affinity.affinityOf(tid), "thread " + tid);
        } catch (io.numaspark.affinity.AffinityException ended) {
          // it ended meanwhile
        }
      }
      Thread later = new Thread(() -> { });
      later.start(); // inherits: nothing is late
      later.join();
      binder.onTaskStart(); // the task thread's memory policy (bind over node 0), once
      binder.onTaskStart();
      // Refused passes only where this machine refuses every program a memory policy
      // (numactl's own set_mempolicy refused too: a seccomp profile, a kernel without NUMA);
      // anywhere else bind:0 must be set, and this thread's numa_maps must show it.
      String machine = ThreadPolicy.refusedBecause(0);
      if (machine != null && binder.binding().contains("bind:0 refused")) {
        System.out.println("NodeBinderTest: bind cannot be proved here: " + machine);
      } else {
        assertTrue(binder.binding().contains("bind:0 set on 1 task thread(s)"),
            binder.binding() + " (this machine allows set_mempolicy)");
        assertEquals("bind:0", ThreadPolicy.of(Affinity.currentThreadId()),
            "the task thread's policy, read back from its numa_maps");
      }
      try (NodeBinder second = NodeBinder.start(nodeLevel(dir, "preferred"), allowed, 1, split)) {
        assertEquals("1", second.chosenNodes()); // node 0's slot 0 is held: node 1's
        assertTrue(second.binding().contains("bound to CPUs " + rest), second.binding());
      }
    } finally {
      Affinity.bindProcess(allowed); // this test JVM gets its whole set back
      io.numaspark.affinity.MemoryMover.setThreadPolicy(
          io.numaspark.affinity.MemoryMover.MPOL_DEFAULT, CpuSet.of());
    }
  }

  @Test
  void anExecutorMovesWhenEndsElsewhereLeaveItsNodeTwoAhead(@TempDir Path dir)
      throws Exception {
    // on a synthetic two-node split of this machine's CPUs: this JVM's binder on node 0 beside
    // another holder there; node 1's one holder ends (an idle removal): 2 against 0, and the
    // binder moves every thread to node 1's CPUs. The memory stays: node 1 is not a node of
    // this machine (the guest's churn proof moves pages between real nodes)
    assumeTrue(Affinity.available(), "needs JNA's native part");
    CpuSet allowed = Affinity.currentThreadAffinity();
    assumeTrue(allowed.size() >= 2, "two CPUs to split");
    CpuSet first = CpuSet.of(allowed.toArray()[0]);
    CpuSet rest = allowed.minus(first);
    Topology split = new Topology(List.of(first, rest), Map.of(0, first, 1, rest));
    Path locks = dir.resolve("locks");
    java.nio.channels.FileLock onNode1 = NodeChooser.hold(locks, 1, 0, 1);
    try (NodeBinder binder = NodeBinder.start(nodeLevel(locks, "preferred"), allowed, 1,
        split)) {
      assertEquals("0", binder.chosenNodes());
      java.nio.channels.FileLock beside = NodeChooser.hold(locks, 0, 1, 1);
      try {
        assertFalse(binder.rebalance(), "2 against 1: stays");
        onNode1.channel().close();
        assertTrue(binder.rebalance(), "2 against 0: moves");
        assertEquals("1", binder.chosenNodes());
        assertEquals(rest, binder.boundCpus());
        assertEquals(rest, Affinity.currentThreadAffinity());
        assertTrue(binder.choice().startsWith("slot 0 of node 1 in "), binder.choice());
        assertTrue(binder.binding().startsWith("moved from node 0 (move 1): every thread ("),
            binder.binding());
        assertTrue(binder.binding().contains("memory not moved"), binder.binding());
        assertFalse(binder.rebalance(), "1 against 1: stays");
      } finally {
        beside.channel().close();
      }
    } finally {
      onNode1.channel().close();
      Affinity.bindProcess(allowed);
    }
  }

  @Test
  void anExecutorsGpusChooseItsNode(@TempDir Path dir) throws Exception {
    assumeTrue(Affinity.available(), "needs JNA's native part");
    CpuSet allowed = Affinity.currentThreadAffinity();
    assumeTrue(allowed.size() >= 2, "two CPUs to split");
    CpuSet first = CpuSet.of(allowed.toArray()[0]);
    CpuSet rest = allowed.minus(first);
    Topology split = new Topology(List.of(first, rest), Map.of(0, first, 1, rest));
    Path sys = FakeSysfs.write(dir.resolve("root")); // GPU 0 on node 1, 1 on node 0, 2 on none
    AffinityConf conf = nodeLevel(dir.resolve("locks"), "preferred");
    List<NodeBinder> binders = new ArrayList<>();
    try {
      for (String gpus : List.of("0", "0", "0,1", "2")) {
        ExecutorDevices devices = ExecutorDevices.read(
            Map.of("gpu", List.of(gpus.split(","))), conf.deviceResources(), sys);
        binders.add(NodeBinder.start(conf, allowed, 1, split, devices));
      }
      // two executors with GPU 0: both on node 1, in its slots 0 and 1
      assertEquals(List.of("1", "1", "0-1", "0"), binders.stream()
          .map(NodeBinder::chosenNodes).toList());
      assertTrue(binders.get(1).choice().startsWith("slot 1 of node 1 in "),
          binders.get(1).choice());
      assertTrue(binders.get(1).choice().endsWith("by its devices' node 1; devices: gpu 0 "
          + "(0000:3b:00.0) on node 1"), binders.get(1).choice());
      assertTrue(binders.get(1).binding().contains("bound to CPUs " + rest),
          binders.get(1).binding());
      // GPUs on both nodes: bound to both, and the choice says so
      assertTrue(binders.get(2).choice().contains("its devices sit on nodes 0-1: bound to all "
          + "of them; devices: gpu 0 (0000:3b:00.0) on node 1, gpu 1 (0000:5e:00.0) on node 0"),
          binders.get(2).choice());
      // a GPU of no known node: the next free slot (node 0's slot 0 is the 0-1 one's), as
      // without devices, and why
      assertTrue(binders.get(3).choice().startsWith("slot 1 of node 0 in "),
          binders.get(3).choice());
      assertTrue(binders.get(3).choice().endsWith("gpu 2 (0000:af:00.0): node unknown "
          + "(numa_node -1: the firmware gives it no node)"), binders.get(3).choice());
    } finally {
      binders.forEach(NodeBinder::close);
      Affinity.bindProcess(allowed); // this test JVM gets its whole set back
    }
  }

  @Test
  void aPolicyNumactlSetIsLeftAsItIs(@TempDir Path dir) throws Exception {
    assumeTrue(Affinity.available(), "needs JNA's native part");
    Path numactl = Path.of("/usr/bin/numactl");
    assumeTrue(Files.isExecutable(numactl), "needs numactl");
    int node = Topology.fromSysfs().nodes().keySet().iterator().next();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = String.join(File.pathSeparator, "target/classes",
        "target/test-classes", System.getProperty("java.class.path"));
    Process child = new ProcessBuilder(numactl.toString(), "--cpunodebind=" + node,
        "--membind=" + node, java, "-cp", classPath, NodeBinderChild.class.getName(),
        dir.toString(), "bind").redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(child.getInputStream().readAllBytes()).strip();
    assertEquals(0, child.waitFor());
    // numaspark's own clusters: numactl confined it; the plugin holds a slot, changes nothing
    assertEquals(node + "|already confined to CPUs " + Topology.fromSysfs().nodes().get(node)
        .and(Affinity.currentThreadAffinity()) + ": threads left as they are; memory left to "
        + "its policy bind:" + node + " (set before the JVM started)", out);
  }

  @Test
  void aLockDirectoryThatCannotBeMadeRunsUnbound() {
    CpuSet allowed = CpuSet.of(0);
    try (NodeBinder binder = NodeBinder.start(nodeLevel(Path.of("/proc/numaspark-no"),
        "preferred"), allowed, 1)) {
      assertTrue(binder.binding().startsWith("unbound: "), binder.binding());
      assertNull(binder.chosenNodes());
      binder.onTaskStart(); // never throws
    }
  }
}
