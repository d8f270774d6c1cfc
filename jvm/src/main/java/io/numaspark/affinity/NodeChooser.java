package io.numaspark.affinity;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
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

/**
 * Chooses the NUMA node(s) a process should run on, spread evenly with every other process on
 * the host that chooses through the same lock directory, whoever runs it (no Spark here).
 *
 * <p>The candidates are the nodes with CPUs in the process's allowed CPUs (a container's cpuset
 * narrows them; the allowed set is never widened). The directory holds one lock file per (node,
 * slot): {@code node-N.slot-K.lock}. A process tries slot 0 of every candidate node in node
 * order, then slot 1 of each, and so on, and holds the first exclusive lock it gets ({@code
 * FileChannel.tryLock}, an fcntl lock) for as long as it lives: the kernel releases it when the
 * process ends, however it ends, so no pid is recorded and no stale file needs cleaning. Lock
 * files are made mode 0666 and the directory 1777, so the processes of other users (YARN's
 * LinuxContainerExecutor) can lock them too.
 *
 * <p>When the cores wanted do not fit in the node's allowed CPUs, the fewest nodes that hold
 * them are taken, nearest by distance to the node whose slot was got.
 */
public final class NodeChooser {
  private NodeChooser() {}

  /** More processes than this on one host is not a real case: give up rather than loop. */
  static final int MAX_SLOTS = 4096;

  /**
   * A choice, holding its lock until {@link #close()} (or the process's end).
   *
   * @param nodes the chosen nodes (node numbers as a list)
   * @param cpus their CPUs within the allowed ones: where to bind
   * @param node the node whose slot was got
   * @param slot that slot
   * @param why how it was chosen, for a report
   */
  public record Choice(CpuSet nodes, CpuSet cpus, int node, int slot, String why,
      FileChannel channel, FileLock lock) implements AutoCloseable {
    /** The same choice, said otherwise. */
    public Choice because(String reason) {
      return new Choice(nodes, cpus, node, slot, reason, channel, lock);
    }

    /** Gives the slot back (closing the channel releases the lock). */
    @Override
    public void close() {
      try {
        channel.close();
      } catch (IOException e) {
        // released when the process ends anyway
      }
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
   * takes a slot of those nodes only (slot 0 of each, then slot 1, ...), never the next free
   * node, and binds to all of them (devices on two nodes: both), with the nearest nodes added
   * when they do not hold {@code cores}. Devices on nodes outside the allowed CPUs' (a
   * container's cpuset) cannot widen them: chosen as without devices, and the reason says so.
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
    String skipped = null;
    for (int slot = 0; slot < MAX_SLOTS; slot++) {
      boolean opened = false;
      for (int node : order.toArray()) {
        Path file = lockDir.resolve("node-" + node + ".slot-" + slot + ".lock");
        FileLock lock;
        try {
          lock = take(file, lockDir);
        } catch (AccessDeniedException e) { // another user's file without 0666: not ours
          skipped = file.getFileName().toString();
          continue;
        }
        opened = true;
        if (lock == null) {
          continue;
        }
        CpuSet base = deviceNodes.isEmpty() ? CpuSet.of(node) : deviceNodes;
        CpuSet nodes = deviceNodes.isEmpty() ? nodesFor(topology, allowed, node, cores)
            : nodesFor(topology, allowed, node, cores, deviceNodes);
        StringBuilder why = new StringBuilder("slot " + slot + " of node " + node + " in "
            + lockDir + " (nodes " + candidates + " allowed)" + byDevices);
        if (!nodes.equals(base)) {
          why.append("; ").append(cores).append(" cores need nodes ").append(nodes)
              .append(" (nearest to ").append(node).append(")");
        }
        if (skipped != null) {
          why.append("; ").append(skipped).append(" skipped: not writable");
        }
        return new Choice(nodes, cpusOf(topology, nodes, allowed), node, slot, why.toString(),
            lock.channel(), lock);
      }
      if (!opened) { // not one file of this round could be opened or made: no use going on
        throw new IOException("cannot open or create lock files in " + lockDir + " ("
            + skipped + ": permission denied)");
      }
    }
    throw new IOException("every slot of nodes " + order + " in " + lockDir + " is held");
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
