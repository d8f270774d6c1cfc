package io.numaspark.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * migrate_pages and set_mempolicy called for real. This machine may have one NUMA node: moving
 * from its nodes to themselves moves nothing, but the call, its masks and its errno handling
 * are the real ones.
 */
class MemoryMoverTest {
  @Test
  void migratingToTheNodesItIsOnMovesNothingAndDoesNotFail() throws IOException {
    assumeTrue(Affinity.available(), "needs JNA's native part");
    ProcessPlacement here = ProcessPlacement.read();
    long before = here.residentBytes();
    try {
      long left = MemoryMover.migratePages(here.mems(), here.mems());
      assertEquals(0, left, "pages that could not move");
      ProcessPlacement after = ProcessPlacement.read();
      assertEquals(here.bytesPerNode().keySet(), after.bytesPerNode().keySet());
      assertTrue(after.residentBytes() > before / 2);
    } catch (AffinityException e) { // a seccomp profile: refused, said why, not thrown raw
      assertTrue(e.getMessage().startsWith("migrate_pages failed: not permitted"),
          e.getMessage());
    }
  }

  @Test
  void aNodeThatDoesNotExistIsRefusedWithItsReason() {
    assumeTrue(Affinity.available(), "needs JNA's native part");
    AffinityException refused = assertThrows(AffinityException.class,
        () -> MemoryMover.migratePages(CpuSet.of(0), CpuSet.of(1000)));
    assertTrue(refused.getMessage().startsWith("migrate_pages failed: "), refused.getMessage());
    assertThrows(AffinityException.class,
        () -> MemoryMover.migratePages(CpuSet.of(0), CpuSet.of()));
  }

  /**
   * The policy is read back from the kernel: this thread's {@code /proc/self/task/TID/numa_maps}
   * shows {@code bind:N} on its mappings after the call and {@code default} after the reset. On
   * a one-node machine the policy is over node 0 only, which places nothing differently, but
   * it is still the thread's policy and shows as one. A refusal passes only where the machine
   * refuses every program a memory policy ({@link ThreadPolicy#refusedBecause}: numactl's own
   * call refused too, a seccomp profile or a kernel without NUMA); it is then said, not hidden.
   */
  @Test
  void aThreadPolicyIsSetAndResetOnTheCallingThread() throws Exception {
    assumeTrue(Affinity.available(), "needs JNA's native part");
    int node = ProcessPlacement.read().mems().toArray()[0];
    int tid = Affinity.currentThreadId();
    String machine = ThreadPolicy.refusedBecause(node);
    assertEquals("default", ThreadPolicy.of(tid), "the policy before the call");
    try {
      MemoryMover.setThreadPolicy(MemoryMover.MPOL_BIND, CpuSet.of(node));
    } catch (AffinityException e) {
      assertNotNull(machine, "set_mempolicy refused where this machine allows it: "
          + e.getMessage());
      assertTrue(e.getMessage().startsWith("set_mempolicy failed: "), e.getMessage());
      System.out.println("MemoryMoverTest: the thread policy cannot be proved here: " + machine);
      return;
    }
    try {
      assertEquals("bind:" + node, ThreadPolicy.of(tid), "this thread's policy, read back");
    } finally {
      MemoryMover.setThreadPolicy(MemoryMover.MPOL_DEFAULT, CpuSet.of());
    }
    assertEquals("default", ThreadPolicy.of(tid), "the policy after the reset");
  }
}
