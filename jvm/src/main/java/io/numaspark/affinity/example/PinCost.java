package io.numaspark.affinity.example;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.SlotPool;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What the plugin does per task, timed: take a slot, pin the thread to it, read the CPU; at the
 * end read the CPU, give the thread its whole set back, return the slot. Prints the median and
 * the spread of microseconds per task over several rounds (bench/affinity.py runs it).
 *
 * <pre>java -cp numaspark-affinity-0.1.0.jar io.numaspark.affinity.example.PinCost [TASKS]</pre>
 */
public final class PinCost {
  private PinCost() {}

  public static void main(String[] args) {
    int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
    CpuSet allowed = Affinity.currentThreadAffinity();
    List<CpuSet> slots = new ArrayList<>();
    allowed.stream().forEach(cpu -> slots.add(CpuSet.of(cpu)));
    SlotPool pool = new SlotPool(slots);
    double[] rounds = new double[11];
    for (int round = -3; round < rounds.length; round++) { // 3 warm-up rounds for the JIT
      long start = System.nanoTime();
      for (int i = 0; i < tasks; i++) {
        int slot = pool.acquire();
        Affinity.bindCurrentThread(pool.cpus(slot));
        Affinity.currentCpu();
        Affinity.currentCpu();
        Affinity.bindCurrentThread(allowed);
        pool.release(slot);
      }
      if (round >= 0) {
        rounds[round] = (System.nanoTime() - start) / 1e3 / tasks;
      }
    }
    Arrays.sort(rounds);
    System.out.printf("{\"tasks_per_round\": %d, \"rounds\": %d, \"median_us\": %.3f, "
        + "\"min_us\": %.3f, \"max_us\": %.3f}%n", tasks, rounds.length,
        rounds[rounds.length / 2], rounds[0], rounds[rounds.length - 1]);
  }
}
