package io.numaspark.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SlotPoolTest {
  private static List<CpuSet> slots(int count) {
    List<CpuSet> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(CpuSet.of(i));
    }
    return out;
  }

  @Test
  void takesTheLowestFreeSlotAndGivesItBack() {
    SlotPool pool = new SlotPool(slots(3));
    assertEquals(0, pool.acquire());
    assertEquals(1, pool.acquire());
    pool.release(0);
    assertEquals(0, pool.acquire());
    assertEquals(2, pool.acquire());
    assertEquals(-1, pool.acquire());
    assertEquals(0, pool.free());
  }

  @Test
  void releasingAFreeSlotIsAnError() {
    SlotPool pool = new SlotPool(slots(2));
    assertThrows(IllegalStateException.class, () -> pool.release(1));
    assertThrows(IllegalStateException.class, () -> pool.release(7));
  }

  /** Many threads take and give back slots as fast as they can: no slot is ever held twice. */
  @Test
  void noSlotIsHeldByTwoThreadsUnderContention() throws Exception {
    int slotCount = 4;
    int threads = 16;
    int rounds = 20_000;
    SlotPool pool = new SlotPool(slots(slotCount));
    AtomicIntegerArray holders = new AtomicIntegerArray(slotCount);
    AtomicLong taken = new AtomicLong();
    AtomicLong refused = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService service = Executors.newFixedThreadPool(threads);
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      futures.add(service.submit(() -> {
        start.await();
        for (int i = 0; i < rounds; i++) {
          int slot = pool.acquire();
          if (slot < 0) {
            refused.incrementAndGet();
            continue;
          }
          if (holders.incrementAndGet(slot) != 1) {
            throw new AssertionError("slot " + slot + " held by two threads");
          }
          taken.incrementAndGet();
          Thread.onSpinWait();
          holders.decrementAndGet(slot);
          pool.release(slot);
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> future : futures) {
      future.get(60, TimeUnit.SECONDS);
    }
    service.shutdown();
    assertEquals(slotCount, pool.free());
    assertEquals((long) threads * rounds, taken.get() + refused.get());
    assertTrue(taken.get() > 0);
  }
}
