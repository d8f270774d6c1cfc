package io.numaspark.affinity;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Chooses the NUMA node(s) a process should run on, spread evenly with every other process on
 * the host that chooses through the same lock directory, whoever runs it (no Spark here).
 *
 * <p>The candidates are the nodes with CPUs in the process's allowed CPUs (a container's cpuset
 * narrows them; the allowed set is never widened). The directory holds one lock file per (node,
 * slot): {@code node-N.slot-K.lock}. A slot is held by whoever holds its file's exclusive lock
 * ({@code FileChannel.tryLock}, an fcntl lock) for as long as it lives: the kernel releases it
 * when the process ends, however it ends, so no stale file needs cleaning. The holder writes its
 * width into the file ({@code cores=N}, then {@code pid=P}); a file whose lock is free is a
 * freed slot, whatever it says.
 *
 * <p>A new process takes a slot on the candidate node whose holders take the fewest cores,
 * every application's holders counted, each by its width (a 4-core executor weighs 4; a holder
 * whose file names no width, 1); ties go to the lowest node number, so an empty host fills
 * node 0, then node 1, ...; within the node, the lowest free slot. With devices, only their
 * nodes are candidates. Reading the holders and taking the slot are one step for every other
 * chooser: the whole choice holds the directory's {@code choose.lock} (an fcntl lock of its
 * own, held only for the choice). A process whose cores span several nodes counts on its
 * slot's node only. Lock files are made mode 0666 and the directory 1777, so the processes of
 * other users (YARN's LinuxContainerExecutor) can lock them too.
 *
 * <p>When the cores wanted do not fit in the node's allowed CPUs, the fewest nodes that hold
 * them are taken, nearest by distance to the node whose slot was got.
 */
public final class NodeChooser {
  private NodeChooser() {}

  /** More processes than this on one host is not a real case: give up rather than loop. */
  static final int MAX_SLOTS = 4096;

  /** The lock file of the choice itself, in the lock directory. */
  static final String CHOOSE_LOCK = "choose.lock";

  /** How long a chooser waits for another's choice before choosing without the guard. */
  static final long CHOOSE_WAIT_MS = 10_000;

  /** The line of a slot file that gives its holder's width: {@code cores=4}. */
  static final String WIDTH_KEY = "cores=";

  private static final Pattern SLOT_FILE = Pattern.compile("node-(\\d+)\\.slot-(\\d+)\\.lock");

  /** One choice at a time in this JVM (the choice lock is a process's: threads share it). */
  private static final ReentrantLock IN_JVM = new ReentrantLock();

  /**
   * The slot files this JVM holds (absolute) and their widths: counted from here and never
   * opened again while held, since closing any channel of a file drops every fcntl lock the
   * process holds on it.
   */
  private static final Map<Path, Holding> HELD = new ConcurrentHashMap<>();

  private record Holding(FileChannel channel, int width) {}

  /** For tests only: a pause between reading the holders and taking a slot (0: none). */
  static volatile long readToTakePauseMs;

  /**
   * A choice, holding its lock until {@link #close()} (or the process's end).
   *
   * @param nodes the chosen nodes (node numbers as a list)
   * @param cpus their CPUs within the allowed ones: where to bind
   * @param node the node whose slot was got
   * @param slot that slot
   * @param why how it was chosen, for a report
   * @param channel the slot file's channel, open while the slot is held
   * @param lock its exclusive lock
   * @param file the slot file (absolute)
   */
  public record Choice(CpuSet nodes, CpuSet cpus, int node, int slot, String why,
      FileChannel channel, FileLock lock, Path file) implements AutoCloseable {
    /** The same choice, said otherwise. */
    public Choice because(String reason) {
      return new Choice(nodes, cpus, node, slot, reason, channel, lock, file);
    }

    /** Gives the slot back (closing the channel releases the lock). */
    @Override
    public void close() {
      closeQuietly(channel);
      HELD.computeIfPresent(file, (path, held) -> held.channel() == channel ? null : held);
    }
  }

  /** The nodes with CPUs among {@code allowed}, as a set of node numbers. */
  public static CpuSet candidates(Topology topology, CpuSet allowed) {
    List<Integer> nodes = new ArrayList<>();
    topology.nodes().forEach((node, cpus) -> {
      if (!cpus.and(allowed).isEmpty()) {
        nodes.add(node);
      }
    });
    return CpuSet.of(nodes);
  }

  /**
   * The fewest candidate nodes, starting with {@code start}, whose allowed CPUs hold {@code
   * cores}; among as many, the nearest to {@code start} (least summed distance), then the lowest
   * numbers. All candidates when even they do not hold them.
   */
  public static CpuSet nodesFor(Topology topology, CpuSet allowed, int start, int cores) {
    CpuSet candidates = candidates(topology, allowed);
    Map<Integer, CpuSet> nodes = topology.nodes();
    int[] others = candidates.minus(CpuSet.of(start)).stream()
        .boxed().sorted(Comparator.comparingInt((Integer n) -> topology.distance(start, n))
            .thenComparingInt(n -> n))
        .mapToInt(Integer::intValue).toArray();
    int own = nodes.get(start).and(allowed).size();
    if (own >= cores) {
      return CpuSet.of(start);
    }
    if (others.length > 20) { // too many subsets to try: the nearest until they hold them
      List<Integer> taken = new ArrayList<>(List.of(start));
      int held = own;
      for (int other : others) {
        if (held >= cores) {
          break;
        }
        taken.add(other);
        held += nodes.get(other).and(allowed).size();
      }
      return CpuSet.of(taken);
    }
    long best = -1;
    int bestCount = Integer.MAX_VALUE;
    long bestDistance = Long.MAX_VALUE;
    for (long mask = 1; mask < 1L << others.length; mask++) {
      int count = Long.bitCount(mask);
      if (count > bestCount) {
        continue;
      }
      int held = own;
      long distance = 0;
      for (int i = 0; i < others.length; i++) {
        if ((mask >> i & 1) != 0) {
          held += nodes.get(others[i]).and(allowed).size();
          distance += topology.distance(start, others[i]);
        }
      }
      if (held >= cores && (count < bestCount || distance < bestDistance)) {
        best = mask;
        bestCount = count;
        bestDistance = distance;
      }
    }
    if (best < 0) {
      return candidates; // they cannot hold them: all the allowed nodes
    }
    List<Integer> taken = new ArrayList<>(List.of(start));
    for (int i = 0; i < others.length; i++) {
      if ((best >> i & 1) != 0) {
        taken.add(others[i]);
      }
    }
    return CpuSet.of(taken);
  }

  /** The CPUs of {@code nodes} within {@code allowed}. */
  public static CpuSet cpusOf(Topology topology, CpuSet nodes, CpuSet allowed) {
    CpuSet cpus = CpuSet.of();
    for (int node : nodes.toArray()) {
      cpus = cpus.or(topology.nodes().getOrDefault(node, CpuSet.of()));
    }
    return cpus.and(allowed);
  }

  /**
   * Takes a slot in {@code lockDir} (created mode 1777 when missing) and chooses the nodes for
   * {@code cores} cores; throws IOException when the directory cannot be used or the host has no
   * candidate node.
   */
  public static Choice choose(Topology topology, CpuSet allowed, int cores, Path lockDir)
      throws IOException {
    return choose(topology, allowed, cores, lockDir, CpuSet.of());
  }

  /**
   * The same for a process whose devices hang off {@code deviceNodes} (empty: none known): it
   * takes a slot of those nodes only (the least loaded of them), never another node, and binds
   * to all of them (devices on two nodes: both), with the nearest nodes added when they do not
   * hold {@code cores}. Devices on nodes outside the allowed CPUs' (a container's cpuset)
   * cannot widen them: chosen as without devices, and the reason says so.
   */
  public static Choice choose(Topology topology, CpuSet allowed, int cores, Path lockDir,
      CpuSet deviceNodes) throws IOException {
    CpuSet candidates = candidates(topology, allowed);
    if (candidates.isEmpty()) {
      throw new IOException("no NUMA node has a CPU of the allowed " + allowed);
    }
    CpuSet order = candidates;
    String byDevices = "";
    if (!deviceNodes.isEmpty() && deviceNodes.isSubsetOf(candidates)) {
      order = deviceNodes;
      byDevices = deviceNodes.size() > 1
          ? "; its devices sit on nodes " + deviceNodes + ": bound to all of them"
          : "; by its devices' node " + deviceNodes;
    } else if (!deviceNodes.isEmpty()) {
      byDevices = "; its devices' node(s) " + deviceNodes + " are not among the allowed "
          + "nodes " + candidates + ": chosen as without devices";
      deviceNodes = CpuSet.of();
    }
    ensureDirectory(lockDir);
    IN_JVM.lock(); // threads of one JVM (tests) choose one at a time: the fcntl lock is per process
    try (Guard guard = Guard.take(lockDir)) {
      Map<Integer, Integer> taken = coresTaken(lockDir, order);
      int node = order.stream().boxed()
          .min(Comparator.comparingInt((Integer n) -> taken.getOrDefault(n, 0))
              .thenComparingInt(n -> n))
          .orElseThrow();
      long pause = readToTakePauseMs;
      if (pause > 0) {
        try {
          Thread.sleep(pause);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      Taken got = takeOn(lockDir, node, cores);
      CpuSet base = deviceNodes.isEmpty() ? CpuSet.of(node) : deviceNodes;
      CpuSet nodes = deviceNodes.isEmpty() ? nodesFor(topology, allowed, node, cores)
          : nodesFor(topology, allowed, node, cores, deviceNodes);
      StringBuilder why = new StringBuilder("slot " + got.slot() + " of node " + node + " in "
          + lockDir + " (nodes " + candidates + " allowed)");
      if (order.size() > 1) {
        why.append("; cores taken before: ").append(describe(order, taken));
      }
      why.append(byDevices);
      if (!nodes.equals(base)) {
        why.append("; ").append(cores).append(" cores need nodes ").append(nodes)
            .append(" (nearest to ").append(node).append(")");
      }
      if (got.skipped() != null) {
        why.append("; ").append(got.skipped()).append(" skipped: not writable");
      }
      if (guard.unguarded != null) {
        why.append("; ").append(guard.unguarded);
      }
      return got.choice(nodes, cpusOf(topology, nodes, allowed), node, why.toString());
    } finally {
      IN_JVM.unlock();
    }
  }

  /** A slot got: its lock, its number, a slot file skipped on the way (not writable). */
  private record Taken(FileLock lock, int slot, String skipped, Path file) {
    Choice choice(CpuSet nodes, CpuSet cpus, int node, String why) {
      return new Choice(nodes, cpus, node, slot, why, lock.channel(), lock, file);
    }
  }

  /**
   * The lowest free slot of {@code node} in {@code lockDir}, locked and claimed for a holder of
   * {@code cores} (its width written, counted in {@link #HELD}); the caller holds the guard.
   */
  private static Taken takeOn(Path lockDir, int node, int cores) throws IOException {
    String skipped = null;
    for (int slot = 0; slot < MAX_SLOTS; slot++) {
      Path file = slotFile(lockDir, node, slot);
      if (HELD.containsKey(key(file))) {
        continue; // this JVM's own: never opened twice (closing it would drop the lock)
      }
      FileLock lock;
      try {
        lock = take(file, lockDir);
      } catch (AccessDeniedException e) { // another user's file without 0666: not ours
        if (!Files.exists(file)) {
          throw new IOException("cannot open or create lock files in " + lockDir + " ("
              + file.getFileName() + ": permission denied)", e);
        }
        skipped = file.getFileName().toString();
        continue;
      }
      if (lock == null) {
        continue;
      }
      claim(lock.channel(), cores);
      HELD.put(key(file), new Holding(lock.channel(), Math.max(1, cores)));
      return new Taken(lock, slot, skipped, key(file));
    }
    throw new IOException("every slot of node " + node + " in " + lockDir + " is held");
  }

  /**
   * Moves {@code held} to the least loaded node when executors that ended since it chose
   * (idle removal, a kill, a decommission) left its node heavier than that one by more than
   * its own width: then moving it makes the nodes' loads strictly closer, so moves end. Under
   * the same host-wide {@code choose.lock} as a choice, so of several holders of a heavy node
   * only the first moves, and the next reads the loads it left. Returns the new choice (its
   * slot taken on the other node, {@code held}'s slot given back), or null when no move
   * improves the balance, the choice lock could not be had, or {@code held} spans several
   * nodes (its cores need them) or was chosen by its devices (set {@code pinned}).
   */
  public static Choice rebalance(Topology topology, CpuSet allowed, Path lockDir, Choice held,
      boolean pinned) throws IOException {
    if (pinned || held.nodes().size() != 1) {
      return null;
    }
    CpuSet candidates = candidates(topology, allowed);
    Holding mine = HELD.get(held.file());
    if (candidates.size() < 2 || mine == null || mine.channel() != held.channel()) {
      return null;
    }
    IN_JVM.lock();
    try (Guard guard = Guard.take(lockDir)) {
      if (guard.unguarded != null) {
        return null; // moving without the guard could race another's choice: wait for it
      }
      Map<Integer, Integer> taken = coresTaken(lockDir, candidates);
      int width = mine.width();
      int node = candidates.stream().boxed()
          .min(Comparator.comparingInt((Integer n) -> taken.getOrDefault(n, 0))
              .thenComparingInt(n -> n))
          .orElseThrow();
      int own = taken.getOrDefault(held.node(), 0);
      if (own - taken.getOrDefault(node, 0) <= width
          || cpusOf(topology, CpuSet.of(node), allowed).size() < width) {
        return null;
      }
      Taken got = takeOn(lockDir, node, width);
      String why = "slot " + got.slot() + " of node " + node + " in " + lockDir + " (nodes "
          + candidates + " allowed); moved from slot " + held.slot() + " of node "
          + held.node() + ", whose holders took " + own + " cores against node " + node + "'s "
          + taken.getOrDefault(node, 0) + " (" + describe(candidates, taken) + ")";
      held.close(); // under the guard: the next chooser reads the loads after the move
      CpuSet nodes = CpuSet.of(node);
      return got.choice(nodes, cpusOf(topology, nodes, allowed), node, why);
    } finally {
      IN_JVM.unlock();
    }
  }

  /** {@code node 0 2, node 1 1}: the cores each node's holders take, as the choice read them. */
  private static String describe(CpuSet nodes, Map<Integer, Integer> taken) {
    StringBuilder text = new StringBuilder();
    for (int node : nodes.toArray()) {
      if (text.length() > 0) {
        text.append(", ");
      }
      text.append("node ").append(node).append(' ').append(taken.getOrDefault(node, 0));
    }
    return text.toString();
  }

  /** {@code lockDir/node-N.slot-K.lock}. */
  static Path slotFile(Path lockDir, int node, int slot) {
    return lockDir.resolve("node-" + node + ".slot-" + slot + ".lock");
  }

  private static Path key(Path file) {
    return file.toAbsolutePath().normalize();
  }

  /**
   * The cores taken on each of {@code nodes} by the holders of slots in {@code lockDir}: every
   * process of every application that holds a slot's lock now, each weighing the width its
   * file says ({@code cores=N}; 1 when it says none: an older plugin's, or one that could not
   * write it). A file whose lock is free is a freed slot, whatever it contains. Each file is
   * tested with a shared lock, released at once; this JVM's own slots are counted from memory,
   * never opened again. A file this user cannot read counts as nothing (not known).
   */
  static Map<Integer, Integer> coresTaken(Path lockDir, CpuSet nodes) throws IOException {
    Map<Integer, Integer> taken = new TreeMap<>();
    List<Path> files = new ArrayList<>();
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(lockDir)) {
      entries.forEach(files::add);
    } catch (IOException e) {
      return taken; // unreadable (a directory of another user without r): spread by slots alone
    }
    for (Path file : files) {
      Matcher name = SLOT_FILE.matcher(file.getFileName().toString());
      if (!name.matches()) {
        continue;
      }
      int node = Integer.parseInt(name.group(1));
      if (!nodes.contains(node)) {
        continue;
      }
      Holding mine = HELD.get(key(file));
      int width = mine != null ? mine.width() : holderWidth(file);
      if (width > 0) {
        taken.merge(node, width, Integer::sum);
      }
    }
    return taken;
  }

  /** The width of {@code file}'s holder; 0 when its lock is free (or it cannot be read). */
  static int holderWidth(Path file) {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      FileLock probe;
      try {
        probe = channel.tryLock(0, Long.MAX_VALUE, true);
      } catch (OverlappingFileLockException e) {
        probe = null; // locked by this JVM outside the chooser: held
      }
      if (probe != null) {
        probe.release();
        return 0; // free: a freed slot, whatever the file says
      }
      return widthIn(channel);
    } catch (IOException e) {
      return 0;
    }
  }

  /** The {@code cores=N} line of a slot file; 1 when it has none. */
  private static int widthIn(FileChannel channel) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(256);
    while (buffer.hasRemaining() && channel.read(buffer, buffer.position()) > 0) {
      // read what there is, up to 256 bytes
    }
    String text = new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII);
    for (String line : text.split("\n")) {
      if (line.startsWith(WIDTH_KEY)) {
        try {
          return Math.max(1, Integer.parseInt(line.substring(WIDTH_KEY.length()).strip()));
        } catch (NumberFormatException e) {
          return 1;
        }
      }
    }
    return 1;
  }

  /**
   * Writes the holder's width into its slot file ({@code cores=N}, then {@code pid=P} for a
   * person reading the directory), replacing what a former holder wrote. A file that cannot be
   * written keeps its slot: its holder then weighs 1.
   */
  private static void claim(FileChannel channel, int cores) {
    byte[] text = (WIDTH_KEY + Math.max(1, cores) + "\npid=" + ProcessHandle.current().pid()
        + "\n").getBytes(StandardCharsets.US_ASCII);
    try {
      channel.truncate(0);
      channel.write(ByteBuffer.wrap(text), 0);
    } catch (IOException e) {
      // the lock is what holds the slot; the width is only read by the next chooser
    }
  }

  /**
   * For tests: holds slot {@code slot} of {@code node} in {@code lockDir} for a process of
   * {@code cores} cores, as a chooser that got it would (its width written); null when held.
   */
  public static FileLock hold(Path lockDir, int node, int slot, int cores) throws IOException {
    ensureDirectory(lockDir);
    FileLock lock = take(slotFile(lockDir, node, slot), lockDir);
    if (lock != null) {
      claim(lock.channel(), cores);
    }
    return lock;
  }

  /**
   * The host-wide lock of one choice ({@code choose.lock} in the lock directory, an fcntl lock
   * held from reading the holders to taking a slot), so that two processes choosing at once
   * do not both read the same loads. Where it cannot be had (the file cannot be made or
   * opened; a process holds it past {@link #CHOOSE_WAIT_MS}), the choice goes on without it and
   * says so ({@link #unguarded}).
   */
  private static final class Guard implements AutoCloseable {
    private final FileChannel channel;
    final String unguarded;

    private Guard(FileChannel channel, String unguarded) {
      this.channel = channel;
      this.unguarded = unguarded;
    }

    static Guard take(Path lockDir) {
      Path file = lockDir.resolve(CHOOSE_LOCK);
      FileChannel channel;
      try {
        channel = open(file);
      } catch (IOException e) {
        return new Guard(null, "chosen without " + CHOOSE_LOCK + " (" + e + ")");
      }
      long deadline = System.nanoTime() + CHOOSE_WAIT_MS * 1_000_000L;
      try {
        while (true) {
          if (channel.tryLock() != null) {
            return new Guard(channel, null);
          }
          if (System.nanoTime() > deadline) {
            break;
          }
          Thread.sleep(2);
        }
      } catch (IOException | OverlappingFileLockException e) {
        closeQuietly(channel);
        return new Guard(null, "chosen without " + CHOOSE_LOCK + " (" + e + ")");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      closeQuietly(channel);
      return new Guard(null, "chosen without " + CHOOSE_LOCK + " (held by another process past "
          + CHOOSE_WAIT_MS + " ms)");
    }

    @Override
    public void close() {
      if (channel != null) {
        closeQuietly(channel); // releases the choice lock
      }
    }
  }

  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      // released when the process ends anyway
    }
  }

  /**
   * The exclusive lock of {@code file} (its channel left open while it is held); null when
   * another process, or this JVM, holds it. AccessDeniedException: another user's file.
   */
  private static FileLock take(Path file, Path lockDir) throws IOException {
    FileChannel channel;
    try {
      channel = open(file);
    } catch (AccessDeniedException e) {
      throw e;
    } catch (IOException e) {
      throw new IOException("cannot open or create lock files in " + lockDir + " ("
          + file.getFileName() + ": " + e + ")", e);
    }
    try {
      FileLock lock = channel.tryLock();
      if (lock == null) {
        channel.close();
      }
      return lock;
    } catch (OverlappingFileLockException e) { // held by this JVM already (another chooser)
      channel.close();
      return null;
    } catch (IOException e) {
      channel.close();
      throw e;
    }
  }

  /** {@code deviceNodes}, with the nearest to {@code start} added when they lack cores. */
  static CpuSet nodesFor(Topology topology, CpuSet allowed, int start, int cores,
      CpuSet deviceNodes) {
    if (cpusOf(topology, deviceNodes, allowed).size() >= cores) {
      return deviceNodes;
    }
    return deviceNodes.or(nodesFor(topology, allowed, start, cores));
  }

  /** The lock directory, made mode 1777 when this process creates it. */
  static void ensureDirectory(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      return;
    }
    Path parent = dir.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    try {
      Files.createDirectory(dir);
    } catch (FileAlreadyExistsException e) {
      if (Files.isDirectory(dir)) {
        return; // another process made it meanwhile
      }
      throw e;
    }
    try {
      setMode(dir, 01777); // umask took bits away; sticky: no one removes another's file
    } catch (IOException e) {
      // still usable by this user; other users' executors will say they cannot use it
    }
  }

  /**
   * A lock file opened for writing (an exclusive fcntl lock needs it). An existing file is
   * opened without O_CREAT: with fs.protected_regular, O_CREAT on another user's file in a
   * sticky world-writable directory is refused even when its mode allows writing.
   */
  static FileChannel open(Path file) throws IOException {
    try {
      return FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
    } catch (NoSuchFileException e) {
      try {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW,
            StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
          setMode(file, 0666); // set after creation: the umask would take bits away
        } catch (IOException notOurs) {
          // still ours to lock; another user's executor will skip this slot
        }
        return channel;
      } catch (FileAlreadyExistsException raced) {
        return FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
      }
    }
  }

  private static void setMode(Path path, int mode) throws IOException {
    try {
      Files.setAttribute(path, "unix:mode", mode); // chmod: the only way to the sticky bit
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(
          (mode & 0777) == 0777 ? "rwxrwxrwx" : "rw-rw-rw-"));
    }
  }
}
