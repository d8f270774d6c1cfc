package io.numaspark.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.numaspark.affinity.spark.AffinityConf;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CpuSetTest {
  @Test
  void parsesAndWritesTheLinuxListFormat() {
    CpuSet set = CpuSet.parse("0-3,8,10-11\n");
    assertEquals(7, set.size());
    assertEquals("0-3,8,10-11", set.toString());
    assertEquals("", CpuSet.parse("").toString());
    assertEquals("5", CpuSet.of(5).toString());
    assertTrue(CpuSet.parse("1,2").isSubsetOf(set));
    assertFalse(CpuSet.parse("4").isSubsetOf(set));
    assertThrows(IllegalArgumentException.class, () -> CpuSet.parse("3-1"));
    assertThrows(IllegalArgumentException.class, () -> CpuSet.parse("a"));
  }

  @Test
  void hwlocBitmapsReadMostSignificantWordFirst() {
    assertEquals("0-7,32", Topology.hwlocMask("0x00000001,0x000000ff").toString());
  }

  @Test
  void confGivesCoresOrThreadsOnePerCoreFirst() {
    Map<String, String> conf = Map.of("spark.numaspark.affinity.level", "pu");
    AffinityConf parsed = AffinityConf.from(conf, name -> "0,12;1,13");
    assertEquals(List.of(CpuSet.of(0), CpuSet.of(1), CpuSet.of(12), CpuSet.of(13)),
        parsed.slots());
    AffinityConf core = AffinityConf.from(
        Map.of("spark.numaspark.affinity.level", "core",
            "spark.numaspark.affinity.slots", "2,3;4,5"), name -> null);
    assertEquals(List.of(CpuSet.parse("2-3"), CpuSet.parse("4-5")), core.slots());
    assertEquals("spark.numaspark.affinity.slots", core.source());
    assertThrows(IllegalArgumentException.class,
        () -> AffinityConf.from(Map.of("spark.numaspark.affinity.level", "socket"), n -> null));
  }

  @Test
  void bindsAndReadsTheCurrentThread() throws Exception {
    CpuSet allowed = Affinity.currentThreadAffinity();
    int cpu = allowed.last();
    java.util.concurrent.atomic.AtomicReference<Throwable> failure =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread worker = new Thread(() -> {
      try {
        Affinity.bindCurrentThread(CpuSet.of(cpu));
        assertEquals(CpuSet.of(cpu), Affinity.currentThreadAffinity());
        for (int i = 0; i < 10_000_000 && Affinity.currentCpu() != cpu; i++) {
          Thread.onSpinWait();
        }
        assertEquals(cpu, Affinity.currentCpu());
      } catch (Throwable e) {
        failure.set(e);
      }
    });
    worker.start();
    worker.join();
    if (failure.get() != null) {
      throw new AssertionError("in the bound thread", failure.get());
    }
    assertEquals(allowed, Affinity.currentThreadAffinity()); // other threads keep their set
    AffinityException refused = assertThrows(AffinityException.class,
        () -> Affinity.bindCurrentThread(CpuSet.of(8000)));
    assertTrue(refused.getMessage().contains("allowed"), refused.getMessage());
  }
}
