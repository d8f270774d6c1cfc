package io.numaspark.affinity.spark;

import io.numaspark.affinity.CpuSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.spark.SparkConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * Every {@code spark.numaspark.affinity.*} key, parsed in this one place ({@link Key} lists
 * them; {@code jvm/contract.json} is the same list for the Python side, checked by a test).
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
 *   <li>{@code reportIntervalMs}: how often each executor reports where it runs (default
 *       5000; 0: only at start and end).
 *   <li>{@code placementFile}: where the driver appends every report; default none.
 *   <li>{@code eventLogIntervalMs}: with Spark's event log on, how often the driver writes the
 *       reports that arrived into it as one event (default 30000; 0: only at the end).
 *   <li>{@code lockDir}: at {@code node} level, the host-local directory of lock files by which
 *       the executors of every application on a host spread over its NUMA nodes (default
 *       {@code /tmp/numaspark-affinity}; on Kubernetes a hostPath every executor pod mounts).
 *   <li>{@code memPolicy}: at {@code node} level, where the executor's memory goes: {@code
 *       preferred} (default: pages moved to the chosen nodes, later ones placed there by first
 *       touch), {@code bind} or {@code interleave}.
 *   <li>{@code deviceResource}: at {@code node} level, the Spark resources (comma-separated
 *       names; default {@code gpu}; {@code none}: no resource) whose devices choose the node:
 *       an executor given such devices takes a slot of the node they hang off ({@link
 *       ExecutorDevices}).
 *   <li>{@code rebalanceMs}: at {@code node} level, how often an executor checks whether
 *       executors that ended elsewhere left its node heavier than another by more than its own
 *       width, and then moves there (default 200; 0: never moves a running executor).
 * </ul>
 *
 * At {@code core} level a slot is a whole core (its SMT siblings stay with the task); at
 * {@code pu} level each hardware thread is a slot, one thread of every core first.
 *
 * <p>The plugins read Spark's conf with {@link #of(SparkConf)}: a bad value is logged once per
 * JVM as a warning and its default used, so a typo never fails a task. {@link #from} is the
 * strict form (a bad value throws), for tests and other callers.
 *
 * @param level the binding level
 * @param cores the slots as given (cores), empty when none are named
 * @param source where the slots came from (a key, {@code $VARIABLE}, or the allowed cores)
 * @param recordDir the task records' directory, null for none
 * @param reportIntervalMs milliseconds between placement reports, 0 for start and end only
 * @param placementFile the driver's file of placement reports, null for none
 * @param lockDir the host-local directory of node-slot lock files (node level)
 * @param memPolicy where the executor's memory goes at node level
 * @param eventLogIntervalMs milliseconds between the driver's batches of reports in the event
 *     log, 0 for one at the end
 * @param deviceResources the Spark resource names whose devices choose the node (lower case)
 * @param rebalanceMs milliseconds between an executor's checks of the nodes' balance (node
 *     level), 0 for never
 */
public record AffinityConf(Level level, List<CpuSet> cores, String source, String recordDir,
    long reportIntervalMs, String placementFile, String lockDir, MemPolicy memPolicy,
    long eventLogIntervalMs, List<String> deviceResources, long rebalanceMs) {
  public static final String PREFIX = "spark.numaspark.affinity.";
  public static final String DEFAULT_LOCK_DIR = "/tmp/numaspark-affinity";
  public static final String DEFAULT_ENV = "NUMASPARK_AFFINITY_CORES";
  public static final long DEFAULT_REPORT_INTERVAL_MS = 5000;
  public static final long DEFAULT_EVENT_LOG_INTERVAL_MS = 30000;
  public static final String DEFAULT_DEVICE_RESOURCE = "gpu";
  public static final long DEFAULT_REBALANCE_MS = 200;
  private static final Pattern RESOURCE_NAME = Pattern.compile("[a-z][a-z0-9_.-]*");
  private static final String ALLOWED_CORES = "this executor's allowed cores";
  private static final Logger LOG = LoggerFactory.getLogger(AffinityConf.class);
  private static final Set<String> WARNED = ConcurrentHashMap.newKeySet();

  /** The keys, each with its default (null: unset); nothing else reads a key by its name. */
  public enum Key {
    LEVEL("level", "none"),
    SLOTS("slots", null),
    SLOTS_ENV("slotsEnv", DEFAULT_ENV),
    RECORD_DIR("recordDir", null),
    REPORT_INTERVAL_MS("reportIntervalMs", String.valueOf(DEFAULT_REPORT_INTERVAL_MS)),
    PLACEMENT_FILE("placementFile", null),
    LOCK_DIR("lockDir", DEFAULT_LOCK_DIR),
    MEM_POLICY("memPolicy", "preferred"),
    EVENT_LOG_INTERVAL_MS("eventLogIntervalMs", String.valueOf(DEFAULT_EVENT_LOG_INTERVAL_MS)),
    DEVICE_RESOURCE("deviceResource", DEFAULT_DEVICE_RESOURCE),
    REBALANCE_MS("rebalanceMs", String.valueOf(DEFAULT_REBALANCE_MS));

    private final String suffix;
    private final String fallback;

    Key(String suffix, String fallback) {
      this.suffix = suffix;
      this.fallback = fallback;
    }

    /** The whole key, {@code spark.numaspark.affinity.NAME}. */
    public String key() {
      return PREFIX + suffix;
    }

    /** The default as text, null when the key has none (unset). */
    public String fallback() {
      return fallback;
    }

    static Key named(String key) {
      for (Key known : values()) {
        if (known.key().equals(key)) {
          return known;
        }
      }
      return null;
    }
  }

  public enum Level {
    NONE,
    NODE,
    CORE,
    PU;

    static Level parse(String text) {
      return valueOf(text.strip().toUpperCase(Locale.ROOT));
    }

    /** Whether tasks are pinned (node level leaves threads free within the node). */
    public boolean pins() {
      return this == CORE || this == PU;
    }
  }

  /**
   * Where a node-level executor's memory goes: {@code preferred} (its pages moved to the chosen
   * nodes; later ones land there by first touch from its bound threads), {@code bind} (only
   * there) or {@code interleave} (spread over them).
   */
  public enum MemPolicy {
    PREFERRED,
    BIND,
    INTERLEAVE;

    static MemPolicy parse(String text) {
      return valueOf(text.strip().toUpperCase(Locale.ROOT));
    }
  }

  /** Every key at its default, no slots named (what a plugin runs with if all else fails). */
  public static AffinityConf defaults() {
    return new AffinityConf(Level.NONE, List.of(), ALLOWED_CORES, null,
        DEFAULT_REPORT_INTERVAL_MS, null, DEFAULT_LOCK_DIR, MemPolicy.PREFERRED,
        DEFAULT_EVENT_LOG_INTERVAL_MS, List.of(DEFAULT_DEVICE_RESOURCE), DEFAULT_REBALANCE_MS);
  }

  /**
   * Strict: reads the keys from {@code conf} (Spark's settings, whole keys) and {@code env}
   * (the process environment); a bad value or an unknown key under the prefix throws
   * {@link IllegalArgumentException} saying which. {@code cores} is empty when neither names
   * slots.
   */
  public static AffinityConf from(Map<String, String> conf, Function<String, String> env) {
    return parse(conf, env, (problem, instead) -> {
      throw new IllegalArgumentException(problem);
    });
  }

  /**
   * What the plugins run with: the keys of Spark's {@code conf} and this process's
   * environment. A bad value is logged as one warning (once per JVM: the driver and a
   * local-mode executor share one) and its default used.
   */
  public static AffinityConf of(SparkConf spark) {
    Map<String, String> settings = new HashMap<>();
    for (Tuple2<String, String> pair : spark.getAllWithPrefix(PREFIX)) {
      settings.put(PREFIX + pair._1(), pair._2());
    }
    return parse(settings, System::getenv, AffinityConf::warnOnce);
  }

  private static void warnOnce(String problem, String instead) {
    String line = problem + "; " + instead;
    if (WARNED.add(line)) {
      LOG.warn("numaspark affinity: {}", line);
    }
  }

  /** What a bad value does: say what is wrong, and what is used instead. */
  @FunctionalInterface
  interface Problems {
    void bad(String problem, String instead);
  }

  /** Every key of {@code conf}; each bad one goes to {@code bad} (one line) and is defaulted. */
  static AffinityConf parse(Map<String, String> conf, Function<String, String> env,
      Problems bad) {
    for (String key : conf.keySet()) {
      if (key.startsWith(PREFIX) && Key.named(key) == null) {
        bad.bad(key + " is not a numaspark affinity key (known: "
            + Arrays.stream(Key.values()).map(k -> k.suffix).toList() + ")", "ignored");
      }
    }
    Level level = Level.NONE;
    String levelText = conf.get(Key.LEVEL.key());
    if (levelText != null) {
      try {
        level = Level.parse(levelText);
      } catch (IllegalArgumentException e) {
        bad.bad(Key.LEVEL.key() + " '" + levelText + "': use none, node, core or pu",
            "using " + Key.LEVEL.fallback());
      }
    }
    String source = Key.SLOTS.key();
    String variable = conf.getOrDefault(Key.SLOTS_ENV.key(), Key.SLOTS_ENV.fallback());
    List<CpuSet> cores = cpuLists(conf.get(Key.SLOTS.key()), source,
        "using $" + variable + " instead", bad);
    if (cores == null) {
      source = "$" + variable;
      cores = cpuLists(env.apply(variable), source, "using " + ALLOWED_CORES, bad);
    }
    if (cores == null || cores.isEmpty()) {
      cores = List.of();
      source = ALLOWED_CORES;
    }
    long interval = millis(conf, Key.REPORT_INTERVAL_MS, bad);
    long eventLogInterval = millis(conf, Key.EVENT_LOG_INTERVAL_MS, bad);
    MemPolicy memPolicy = MemPolicy.PREFERRED;
    String policyText = conf.get(Key.MEM_POLICY.key());
    if (policyText != null) {
      try {
        memPolicy = MemPolicy.parse(policyText);
      } catch (IllegalArgumentException e) {
        bad.bad(Key.MEM_POLICY.key() + " '" + policyText + "': use preferred, bind or "
            + "interleave", "using " + Key.MEM_POLICY.fallback());
      }
    }
    String lockDir = path(conf.get(Key.LOCK_DIR.key()));
    return new AffinityConf(level, cores, source, path(conf.get(Key.RECORD_DIR.key())),
        interval, path(conf.get(Key.PLACEMENT_FILE.key())),
        lockDir == null ? DEFAULT_LOCK_DIR : lockDir, memPolicy, eventLogInterval,
        resourceNames(conf.get(Key.DEVICE_RESOURCE.key()), bad),
        millis(conf, Key.REBALANCE_MS, bad));
  }

  /** {@code deviceResource}'s names ({@code none} or blank: none); bad: reported, the default. */
  private static List<String> resourceNames(String text, Problems bad) {
    if (text == null) {
      return List.of(DEFAULT_DEVICE_RESOURCE);
    }
    List<String> names = new ArrayList<>();
    for (String part : text.split(",")) {
      String name = part.strip().toLowerCase(Locale.ROOT);
      if (name.isEmpty() || name.equals("none")) {
        continue;
      }
      if (!RESOURCE_NAME.matcher(name).matches()) {
        bad.bad(Key.DEVICE_RESOURCE.key() + " '" + text + "': give Spark resource names, "
            + "comma-separated (gpu, or none)", "using " + DEFAULT_DEVICE_RESOURCE);
        return List.of(DEFAULT_DEVICE_RESOURCE);
      }
      names.add(name);
    }
    return List.copyOf(names);
  }

  /** A key's milliseconds (0 or more); a bad value is reported and its default used. */
  private static long millis(Map<String, String> conf, Key key, Problems bad) {
    String text = conf.get(key.key());
    if (text != null) {
      try {
        long value = Long.parseLong(text.strip());
        if (value >= 0) {
          return value;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      bad.bad(key.key() + " '" + text + "': not a number of milliseconds (0 or more)",
          "using " + key.fallback());
    }
    return Long.parseLong(key.fallback());
  }

  /** {@code ;}-separated CPU lists; null when {@code text} is null or bad (reported). */
  private static List<CpuSet> cpuLists(String text, String where, String instead,
      Problems bad) {
    if (text == null) {
      return null;
    }
    List<CpuSet> cores = new ArrayList<>();
    try {
      for (String part : text.split(";")) {
        if (!part.isBlank()) {
          cores.add(CpuSet.parse(part));
        }
      }
      return cores;
    } catch (IllegalArgumentException e) {
      bad.bad(where + " '" + text + "': not ;-separated CPU lists (" + e.getMessage() + ")",
          instead);
      return null;
    }
  }

  private static String path(String text) {
    return text == null || text.isBlank() ? null : text;
  }

  /** The slots at this level: whole cores, or hardware threads one per core first. */
  public List<CpuSet> slots() {
    return slots(level, cores);
  }

  /** The slots of {@code cores} at {@code level}. */
  public static List<CpuSet> slots(Level level, List<CpuSet> cores) {
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
