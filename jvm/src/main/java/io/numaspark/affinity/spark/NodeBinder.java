package io.numaspark.affinity.spark;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.AffinityException;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.MemoryMover;
import io.numaspark.affinity.NodeChooser;
import io.numaspark.affinity.ProcessPlacement;
import io.numaspark.affinity.Topology;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Level {@code node} from inside an executor, on any cluster: at start it takes a node slot
 * ({@link NodeChooser}: spread with every executor on the host, of every application), binds
 * every thread of the JVM to the chosen nodes' allowed CPUs and moves its memory there
 * ({@code memPolicy}). Anything the kernel refuses is one log line and the executor runs
 * unbound; it never fails a task. What it did is in every placement report ({@link
 * #chosenNodes()}, {@link #choice()}, {@link #binding()}), claiming no more than was applied.
 *
 * <p>Executors come and go (dynamic allocation, other applications, kills): ends elsewhere can
 * leave its node heavier than another by more than its own width, which no later choice
 * mends while nothing starts. {@link #rebalance()}, called every {@code rebalanceMs} by the
 * plugin, then moves it ({@link NodeChooser#rebalance}): its threads first, its pages after
 * (the log says {@code moving} before, and {@code level NODE, moved} once its pages are
 * there). An executor bound by its devices, by numactl before the JVM, or across several
 * nodes never moves.
 */
final class NodeBinder implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeBinder.class);

  private volatile NodeChooser.Choice choice;
  private volatile CpuSet cpus; // what threads are bound to; null: unbound
  private volatile CpuSet memNodes; // the nodes task threads get a policy over; null: none
  private volatile int mode = -1; // MPOL_BIND or MPOL_INTERLEAVE for task threads; -1: none
  private Topology topology; // the host's, as chosen on
  private CpuSet allowed; // the JVM's CPUs before binding
  private CpuSet mems; // the nodes its memory could use before binding (the cpuset's)
  private boolean movable; // may rebalance(): bound by the chooser alone, memory its own
  private boolean viaCgroup; // memory confined through its cgroup's cpuset.mems
  private Path lockDir;
  private int moves;
  private String policyName;
  private volatile String binding;
  private volatile String bindingBase = "";
  private final AtomicBoolean rebound = new AtomicBoolean();
  private final AtomicInteger policyThreads = new AtomicInteger();
  private final AtomicInteger policyGeneration = new AtomicInteger(); // one more per move
  private final ThreadLocal<Integer> hasPolicy = new ThreadLocal<>(); // the generation it set
  private volatile boolean policyRefused;

  /** Chooses, binds and moves; never throws. */
  static NodeBinder start(AffinityConf conf, CpuSet allowed, int executorCores) {
    return start(conf, allowed, executorCores, null);
  }

  /** The same on {@code topology} (null: this host's, from sysfs); for tests. */
  static NodeBinder start(AffinityConf conf, CpuSet allowed, int executorCores,
      Topology topology) {
    return start(conf, allowed, executorCores, topology, ExecutorDevices.none());
  }

  /**
   * The same for an executor Spark gave {@code devices}: those of the resources {@code
   * deviceResource} names choose its node (a slot of the node they hang off; devices on two
   * nodes, both), the others are only reported.
   */
  static NodeBinder start(AffinityConf conf, CpuSet allowed, int executorCores,
      Topology topology, ExecutorDevices devices) {
    NodeBinder binder = new NodeBinder();
    try {
      binder.apply(conf, allowed, executorCores, topology, devices);
    } catch (RuntimeException | LinkageError | IOException e) {
      binder.unbound(e.getMessage() == null ? e.toString() : e.getMessage());
    }
    return binder;
  }

  private void unbound(String why) {
    binding = "unbound: " + why;
    cpus = null;
    mode = -1;
    if (choice != null) { // not bound there: the slot goes to another executor
      choice.close();
      choice = null;
    }
    LOG.warn("numaspark affinity: level node, running unbound: {}", why);
  }

  private void apply(AffinityConf conf, CpuSet allowed, int cores, Topology given,
      ExecutorDevices devices) throws IOException {
    if (!Affinity.available()) {
      unbound("no native library (JNA) for sched_setaffinity");
      return;
    }
    Topology topology = given != null ? given : Topology.fromSysfs();
    if (topology.nodes().isEmpty()) {
      unbound("no NUMA nodes in /sys/devices/system/node");
      return;
    }
    this.topology = topology;
    this.allowed = allowed;
    this.lockDir = Path.of(conf.lockDir());
    choice = choose(conf, allowed, cores, topology, devices);
    StringBuilder done = new StringBuilder();
    if (choice.cpus().equals(allowed)) {
      done.append("already confined to CPUs ").append(allowed)
          .append(": threads left as they are");
    } else {
      int bound;
      try {
        bound = bindAll(choice.cpus());
      } catch (AffinityException refused) {
        try {
          bindAll(allowed); // the threads bound before the refusal get their whole set back
        } catch (AffinityException | IOException again) {
          // refused too: they stay where they were bound
        }
        throw refused;
      }
      cpus = choice.cpus();
      done.append("every thread (").append(bound).append(" now) bound to CPUs ")
          .append(cpus);
    }
    ProcessPlacement before = ProcessPlacement.read();
    mems = before.mems();
    CpuSet to = choice.nodes().and(before.mems());
    if (!before.policy().startsWith("default")) {
      // numactl (numaspark's own clusters) or the launcher set a policy before the JVM
      // started: it holds every thread and mapping; overriding it would undo the plan
      done.append("; memory left to its policy ").append(before.policy())
          .append(" (set before the JVM started)");
      bindingBase = done.toString();
      binding = bindingBase;
      LOG.info("numaspark affinity: level node, {}; {}", choice.why(), binding);
      return;
    }
    if (to.isEmpty()) {
      done.append("; memory not moved: nodes ").append(choice.nodes())
          .append(" not in this cpuset's mems ").append(before.mems());
    } else if (before.mems().isSubsetOf(to)) {
      done.append("; memory already confined to nodes ").append(before.mems());
    } else {
      done.append("; ").append(move(before, before.mems(), to));
    }
    movable = cpus != null && devices.nodes().isEmpty() && !to.isEmpty();
    policyName = conf.memPolicy().name().toLowerCase(Locale.ROOT);
    if (conf.memPolicy() != AffinityConf.MemPolicy.PREFERRED && !to.isEmpty()) {
      String cgroup = conf.memPolicy() == AffinityConf.MemPolicy.BIND ? cgroupMems(to) : null;
      if (cgroup != null) {
        viaCgroup = true;
        done.append("; ").append(cgroup);
      } else {
        memNodes = to;
        mode = conf.memPolicy() == AffinityConf.MemPolicy.BIND ? MemoryMover.MPOL_BIND
            : MemoryMover.MPOL_INTERLEAVE;
      }
    }
    bindingBase = done.toString();
    binding = describe();
    LOG.info("numaspark affinity: level node, {}; {}", choice.why(), binding);
  }

  /** A node slot, of its devices' node(s) when it has devices that bind; they are named. */
  private static NodeChooser.Choice choose(AffinityConf conf, CpuSet allowed, int cores,
      Topology topology, ExecutorDevices devices) throws IOException {
    NodeChooser.Choice chosen = NodeChooser.choose(topology, allowed, cores,
        Path.of(conf.lockDir()), devices.nodes());
    if (devices.binds().isEmpty()) {
      return chosen;
    }
    if (devices.nodes().size() > 1) {
      LOG.warn("numaspark affinity: this executor's devices sit on nodes {} ({}): bound to all "
          + "of them", devices.nodes(), devices.describe());
    }
    return chosen.because(chosen.why() + "; devices: " + devices.describe());
  }

  /** Binds every thread now in /proc/self/task; returns how many. */
  private static int bindAll(CpuSet cpus) throws IOException {
    int bound = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
      for (Path task : tasks) {
        int tid = Integer.parseInt(task.getFileName().toString());
        try {
          Affinity.bind(tid, cpus);
          bound++;
        } catch (AffinityException e) {
          if (Files.exists(task)) {
            throw e; // refused: the caller runs unbound
          } // the thread ended meanwhile
        }
      }
    }
    return bound;
  }

  /**
   * Moves this executor when ends elsewhere left its node heavier than the lightest by more
   * than its width ({@link NodeChooser#rebalance}): its slot, then every thread, then its
   * memory (the cgroup's cpuset.mems first where it confined it there; the task threads'
   * policy at their next task). Returns whether it moved; never throws: a refusal is logged
   * and the executor stays where the refusal left it, said in its binding.
   */
  synchronized boolean rebalance() {
    NodeChooser.Choice from = choice;
    if (!movable || from == null || cpus == null) {
      return false;
    }
    NodeChooser.Choice to;
    try {
      to = NodeChooser.rebalance(topology, allowed, lockDir, from, false);
    } catch (IOException | RuntimeException e) {
      LOG.debug("numaspark affinity: not rebalanced: {}", e.toString());
      return false;
    }
    if (to == null) {
      return false;
    }
    long began = System.nanoTime();
    choice = to;
    moves++;
    LOG.info("numaspark affinity: moving from node {} to node {}: {}", from.nodes(), to.nodes(),
        to.why());
    StringBuilder done = new StringBuilder("moved from node " + from.nodes() + " (move "
        + moves + "): ");
    try {
      int bound = bindAll(to.cpus());
      cpus = to.cpus();
      rebound.set(false); // threads started during the walk: caught at the next task
      done.append("every thread (").append(bound).append(" now) bound to CPUs ").append(cpus);
      CpuSet memTo = to.nodes().and(mems);
      if (viaCgroup && !memTo.isEmpty()) { // never an empty cpuset.mems: no page could fault
        String cgroup = cgroupMems(memTo);
        done.append("; ").append(cgroup != null ? cgroup : "cgroup cpuset.mems not rewritten");
      }
      done.append("; ").append(memTo.isEmpty() ? "memory not moved: nodes " + to.nodes()
          + " not in this cpuset's mems " + mems : move(ProcessPlacement.read(), mems, memTo));
      if (mode >= 0) {
        memNodes = memTo;
        policyGeneration.incrementAndGet(); // each task thread sets it again at its next task
      }
    } catch (IOException | RuntimeException | LinkageError e) {
      done.append("; the move stopped there: ").append(e.getMessage());
      LOG.warn("numaspark affinity: the move to node {} stopped: {}", to.nodes(), e.toString());
    }
    done.append(String.format(Locale.ROOT, " (%.2f s)", (System.nanoTime() - began) / 1e9));
    bindingBase = done.toString();
    binding = describe();
    LOG.info("numaspark affinity: level NODE, moved to node {}; {}", to.nodes(), binding);
    return true;
  }

  /** migrate_pages from {@code from} to {@code to}, measured in numa_maps. */
  private static String move(ProcessPlacement before, CpuSet from, CpuSet to)
      throws IOException {
    long there = bytesOn(before, to);
    try {
      long left = MemoryMover.migratePages(from, to);
      ProcessPlacement after = ProcessPlacement.read();
      long moved = Math.max(0, bytesOn(after, to) - there);
      return (moved >> 20) + " MB migrated to node(s) " + to + " (" + (bytesOn(after, to) >> 20)
          + " of " + (after.residentBytes() >> 20) + " MB resident there"
          + (left > 0 ? ", " + left + " pages could not move" : "") + ")";
    } catch (AffinityException e) {
      LOG.warn("numaspark affinity: memory not moved: {}", e.getMessage());
      return "memory not moved: " + e.getMessage();
    }
  }

  private static long bytesOn(ProcessPlacement placement, CpuSet nodes) {
    long bytes = 0;
    for (int node : nodes.toArray()) {
      bytes += placement.bytesPerNode().getOrDefault(node, 0L);
    }
    return bytes;
  }

  /**
   * Writes {@code to} into this JVM's cgroup's cpuset.mems (v2: {@code 0::PATH}; v1: the
   * cpuset hierarchy), only when it is writable and this JVM is the cgroup's only process
   * (never restricting a worker or another process). Returns what was done, null when not.
   */
  private static String cgroupMems(CpuSet to) {
    try {
      Path dir = null;
      for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
        String[] parts = line.split(":", 3);
        if (parts.length == 3 && parts[0].equals("0") && parts[1].isEmpty()) {
          dir = Path.of("/sys/fs/cgroup", parts[2]);
        } else if (parts.length == 3 && List.of(parts[1].split(",")).contains("cpuset")) {
          dir = Path.of("/sys/fs/cgroup/cpuset", parts[2]);
          break;
        }
      }
      if (dir == null) {
        return null;
      }
      Path mems = dir.resolve("cpuset.mems");
      Path procs = dir.resolve("cgroup.procs");
      if (!Files.isWritable(mems) || !Files.isReadable(procs)) {
        return null;
      }
      List<String> members = Files.readAllLines(procs).stream().map(String::strip)
          .filter(s -> !s.isEmpty()).toList();
      if (!members.equals(List.of(String.valueOf(ProcessHandle.current().pid())))) {
        return null; // shared with other processes: not ours to restrict
      }
      Files.writeString(mems, to.toString(), StandardCharsets.US_ASCII);
      return "cgroup " + dir + " cpuset.mems set to " + to + " (every thread's pages)";
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private String describe() {
    if (mode < 0) {
      return bindingBase;
    }
    String policy = policyName + ":" + memNodes;
    if (policyRefused) {
      return bindingBase + "; " + policy + " refused for task threads";
    }
    return bindingBase + "; " + policy + " set on " + policyThreads.get() + " task thread(s) "
        + "(the pages they fault in; other threads' pages follow first touch)";
  }

  /** On each task's thread as it starts: the late re-bind once, the memory policy once. */
  void onTaskStart() {
    // Threads started later inherit their creator's affinity, but a thread created while
    // bindAll walked /proc/self/task (by a thread not yet bound) kept the whole set: by the
    // first task, Spark's start-up threads exist, so catch them here once.
    if (cpus != null && rebound.compareAndSet(false, true)) {
      try {
        int late = rebindLate(cpus);
        if (late > 0) {
          bindingBase += "; " + late + " thread(s) started meanwhile bound at the first task";
          binding = describe();
        }
      } catch (IOException | RuntimeException | LinkageError e) {
        LOG.debug("numaspark affinity: re-bind skipped: {}", e.toString());
      }
    }
    int generation = policyGeneration.get();
    Integer set = hasPolicy.get();
    if (mode >= 0 && !policyRefused && (set == null || set != generation)) {
      hasPolicy.set(generation);
      try {
        MemoryMover.setThreadPolicy(mode, memNodes);
        if (set == null) {
          policyThreads.incrementAndGet();
        }
      } catch (RuntimeException | LinkageError e) {
        policyRefused = true;
        LOG.warn("numaspark affinity: memory policy not set: {}", e.getMessage());
      }
      binding = describe();
    }
  }

  private static int rebindLate(CpuSet cpus) throws IOException {
    int late = 0;
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
      for (Path task : tasks) {
        int tid = Integer.parseInt(task.getFileName().toString());
        try {
          if (!Affinity.affinityOf(tid).isSubsetOf(cpus)) {
            Affinity.bind(tid, cpus);
            late++;
          }
        } catch (AffinityException e) {
          // ended meanwhile, or refused: it keeps its set
        }
      }
    }
    return late;
  }

  /** Whether {@link #rebalance()} may move it (bound by the chooser alone, its memory its own). */
  boolean movable() {
    return movable;
  }

  /** The CPUs it bound every thread to; null when it left them as they were. */
  CpuSet boundCpus() {
    return cpus;
  }

  String chosenNodes() {
    return choice == null ? null : choice.nodes().toString();
  }

  String choice() {
    return choice == null ? null : choice.why();
  }

  String binding() {
    return binding;
  }

  @Override
  public synchronized void close() { // after a move in progress: its new slot goes back
    movable = false;
    if (choice != null) {
      choice.close();
    }
  }
}
