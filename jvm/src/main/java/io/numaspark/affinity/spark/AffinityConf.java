package io.numaspark.affinity.spark;

import io.numaspark.affinity.CpuSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Every {@code spark.numaspark.affinity.*} key, parsed in this one place.
 *
 * <ul>
 *   <li>{@code level}: {@code none} (default), {@code node}, {@code core} or {@code pu}.
 *   <li>{@code slots}: this JVM's task slots, {@code ;}-separated CPU lists ({@code
 *       "0,12;1,13"}), in the order tasks take them. When absent, the environment variable
 *       named by {@code slotsEnv} gives them; when that is absent too, each core of the
 *       executor's allowed CPUs (sysfs) is a slot.
 *   <li>{@code slotsEnv}: default {@code NUMASPARK_AFFINITY_CORES}; numaspark sets it on every
 *       worker (and the local-mode driver) to the cores the placement gave that JVM, so
 *       executors on different nodes get different slots from one Spark conf.
 *   <li>{@code recordDir}: where each executor appends one JSON line per task (slot, CPU,
 *       times); default none.
 * </ul>
 *
 * At {@code core} level a slot is a whole core (its SMT siblings stay with the task); at
 * {@code pu} level each hardware thread is a slot, one thread of every core first.
 */
public record AffinityConf(Level level, List<CpuSet> cores, String source, String recordDir) {
  public static final String PREFIX = "spark.numaspark.affinity.";
  public static final String DEFAULT_ENV = "NUMASPARK_AFFINITY_CORES";

  public enum Level {
    NONE,
    NODE,
    CORE,
    PU;

    static Level parse(String text) {
      try {
        return valueOf(text.strip().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            PREFIX + "level '" + text + "': use none, node, core or pu", e);
      }
    }

    /** Whether tasks are pinned (node level leaves threads free within the node). */
    public boolean pins() {
      return this == CORE || this == PU;
    }
  }

  /**
   * Reads the keys from {@code conf} (Spark's settings) and {@code env} (the process
   * environment); {@code cores} is empty when neither names slots.
   */
  public static AffinityConf from(Map<String, String> conf, Function<String, String> env) {
    Level level = Level.parse(conf.getOrDefault(PREFIX + "level", "none"));
    String slots = conf.get(PREFIX + "slots");
    String source = PREFIX + "slots";
    if (slots == null) {
      String variable = conf.getOrDefault(PREFIX + "slotsEnv", DEFAULT_ENV);
      slots = env.apply(variable);
      source = "$" + variable;
    }
    List<CpuSet> cores = new ArrayList<>();
    if (slots != null) {
      for (String part : slots.split(";")) {
        if (!part.isBlank()) {
          cores.add(CpuSet.parse(part));
        }
      }
    }
    if (cores.isEmpty()) {
      source = "this executor's allowed cores";
    }
    return new AffinityConf(level, cores, source, conf.get(PREFIX + "recordDir"));
  }

  /** The slots at this level: whole cores, or hardware threads one per core first. */
  public List<CpuSet> slots() {
    if (level != Level.PU) {
      return cores;
    }
    List<CpuSet> pus = new ArrayList<>();
    int most = cores.stream().mapToInt(CpuSet::size).max().orElse(0);
    for (int way = 0; way < most; way++) {
      for (CpuSet core : cores) {
        int[] threads = core.toArray();
        if (way < threads.length) {
          pus.add(CpuSet.of(threads[way]));
        }
      }
    }
    return pus;
  }
}
