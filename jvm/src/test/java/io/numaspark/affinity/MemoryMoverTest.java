package io.numaspark.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

  @Test
  void aThreadPolicyIsSetAndResetOnTheCallingThread() throws IOException {
    assumeTrue(Affinity.available(), "needs JNA's native part");
    ProcessPlacement here = ProcessPlacement.read();
    try {
      MemoryMover.setThreadPolicy(MemoryMover.MPOL_BIND, here.mems());
      MemoryMover.setThreadPolicy(MemoryMover.MPOL_DEFAULT, CpuSet.of());
    } catch (AffinityException e) { // a seccomp profile
      assertTrue(e.getMessage().contains("not permitted"), e.getMessage());
    }
  }
}
