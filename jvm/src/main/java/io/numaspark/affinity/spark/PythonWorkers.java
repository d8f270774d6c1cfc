package io.numaspark.affinity.spark;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.AffinityException;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.ProcessPlacement;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The executor's Python processes (PySpark's {@code pyspark.daemon} and the workers it forks),
 * found by walking this JVM's child processes ({@code /proc/PID/task/TID/children}, down the
 * tree), kept on the executor's CPUs and read for the placement report.
 *
 * <p>Why it re-binds: Spark forks the daemon from the task thread that first needs a Python
 * worker, and a child process takes the CPU affinity (and memory policy) of the thread that
 * forks it. At level core or pu that thread is pinned to one slot, so the daemon, and every
 * worker it forks later, would run on that one core (checked: PythonWorkersTest). So every
 * thread of every Python descendant whose CPUs differ from the executor's is bound to the
 * executor's CPUs every {@code WATCH_MS} (a worker forked before the daemon was re-bound runs
 * that long where the daemon was). Memory policy needs nothing here: a task thread's policy (node
 * level, bind or interleave) is what the daemon inherits, and under numactl every thread has
 * the process's. It never fails the executor: a process gone or a refused call is skipped.
 */
final class PythonWorkers {
  static final long WATCH_MS = 250;

  private final Path proc;
  private final long self;
  private volatile CpuSet cpus; // where they belong: the executor's CPUs
  final AtomicLong rebound = new AtomicLong(); // threads bound so far

  PythonWorkers(CpuSet cpus) {
    this(Path.of("/proc"), ProcessHandle.current().pid(), cpus);
  }

  PythonWorkers(Path proc, long self, CpuSet cpus) {
    this.proc = proc;
    this.self = self;
    this.cpus = cpus;
  }

  /** One descendant: its pid, its parent, its command line (NULs as spaces). */
  record Child(long pid, long ppid, String cmdline) {}

  /** Every descendant of this JVM, parents before children. */
  List<Child> descendants() {
    List<Child> found = new ArrayList<>();
    Deque<Long> queue = new ArrayDeque<>(List.of(self));
    while (!queue.isEmpty() && found.size() < 10_000) {
      long parent = queue.poll();
      for (long pid : children(parent)) {
        String cmdline = read(proc.resolve(pid + "/cmdline")).replace('\0', ' ').strip();
        found.add(new Child(pid, parent, cmdline));
        queue.add(pid);
      }
    }
    return found;
  }

  private List<Long> children(long pid) {
    List<Long> found = new ArrayList<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(proc.resolve(pid + "/task"))) {
      for (Path task : tasks) {
        for (String word : read(task.resolve("children")).split("\\s+")) {
          if (!word.isEmpty()) {
            found.add(Long.parseLong(word));
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      // gone meanwhile: no children
    }
    return found;
  }

  private static String read(Path path) {
    try {
      return Files.readString(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  /** The Python processes among the descendants, by role (daemon, worker, driver). */
  Map<Child, String> python() {
    Map<Long, String> roles = new HashMap<>();
    Map<Long, String> cmdlines = new HashMap<>();
    Map<Child, String> found = new java.util.LinkedHashMap<>();
    for (Child child : descendants()) {
      cmdlines.put(child.pid(), child.cmdline());
      String parent = roles.get(child.ppid());
      String role = null;
      if ("daemon".equals(parent) && (child.cmdline().equals(cmdlines.get(child.ppid()))
          || runsPython(child.cmdline()))) {
        // forked: the daemon's command line (not a helper a launcher such as pyenv's shim
        // runs before it execs Python)
        role = "worker";
      } else if (child.cmdline().contains("pyspark.daemon") && child.ppid() == self) {
        role = "daemon";
      } else if (child.cmdline().contains("pyspark.worker")
          || child.cmdline().contains("pyspark.sql.worker")) {
        role = "worker";
      } else if (child.ppid() == self && runsPython(child.cmdline())) {
        role = "driver"; // local mode: the user's script, started by the driver JVM
      }
      if (role != null) {
        roles.put(child.pid(), role);
        found.put(child, role);
      }
    }
    return found;
  }

  private static boolean runsPython(String cmdline) {
    String program = cmdline.split(" ", 2)[0];
    String name = program.substring(program.lastIndexOf('/') + 1);
    return name.startsWith("python") || name.equals("pypy3");
  }

  /** Where they belong from now on: the executor moved ({@link NodeBinder#rebalance()}). */
  void moveTo(CpuSet moved) {
    cpus = moved;
  }

  /**
   * Binds every thread of every Python process whose CPUs are not the executor's to them;
   * returns how many threads it bound now.
   */
  int rebind() {
    if (cpus == null || cpus.isEmpty()) {
      return 0;
    }
    int bound = 0;
    for (Child child : python().keySet()) {
      try (DirectoryStream<Path> tasks =
          Files.newDirectoryStream(proc.resolve(child.pid() + "/task"))) {
        for (Path task : tasks) {
          int tid = Integer.parseInt(task.getFileName().toString());
          try {
            if (!Affinity.affinityOf(tid).equals(cpus)) {
              Affinity.bind(tid, cpus);
              bound++;
            }
          } catch (AffinityException e) {
            // ended meanwhile, or refused: it keeps its set
          }
        }
      } catch (IOException | RuntimeException | LinkageError e) {
        // gone meanwhile
      }
    }
    rebound.addAndGet(bound);
    return bound;
  }

  /** Each Python process's placement, read now from its {@code /proc/PID}. */
  List<PythonProcess> read() {
    List<PythonProcess> found = new ArrayList<>();
    for (Map.Entry<Child, String> entry : python().entrySet()) {
      long pid = entry.getKey().pid();
      try {
        Path dir = proc.resolve(String.valueOf(pid));
        String status = Files.readString(dir.resolve("status"), StandardCharsets.UTF_8);
        String stat = Files.readString(dir.resolve("stat"), StandardCharsets.UTF_8);
        ProcessPlacement placed = ProcessPlacement.parse(pid, status, read(dir.resolve("numa_maps")));
        String[] rest = stat.substring(stat.lastIndexOf(')') + 2).strip().split(" ");
        double cpuS = (Long.parseLong(rest[11]) + Long.parseLong(rest[12])) / CLOCK_TICKS;
        Map<String, Long> perNode = new TreeMap<>();
        placed.bytesPerNode().forEach((node, bytes) -> perNode.put(String.valueOf(node), bytes));
        found.add(new PythonProcess(pid, entry.getValue(), placed.cpus().toString(),
            placed.mems().toString(), placed.policy(), perNode,
            Math.round(cpuS * 100) / 100.0, rssBytes(status), Integer.parseInt(rest[17])));
      } catch (IOException | RuntimeException e) {
        // ended between the walk and the read
      }
    }
    return found;
  }

  /** USER_HZ, what /proc/PID/stat counts CPU time in: 100 on every Linux Java runs on. */
  private static final double CLOCK_TICKS = 100.0;

  private static long rssBytes(String status) {
    for (String line : status.split("\n")) {
      if (line.startsWith("VmRSS:")) {
        return 1024 * Long.parseLong(line.substring(6).strip().split("\\s+")[0]);
      }
    }
    return 0; // exiting: no memory left
  }
}
