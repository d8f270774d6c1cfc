package io.numaspark.affinity;

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;

/**
 * Binds threads and processes to CPUs and reads where they run, through the C library's
 * {@code sched_setaffinity}, {@code sched_getaffinity} and {@code sched_getcpu} (Linux), called
 * with JNA. Failures throw {@link AffinityException} with the errno and what to do.
 */
public final class Affinity {
  private Affinity() {}

  /** The C library functions we need; {@code throws LastErrorException} maps errno. */
  interface CLib extends Library {
    int sched_setaffinity(int pid, NativeLong size, Pointer mask) throws LastErrorException;

    int sched_getaffinity(int pid, NativeLong size, Pointer mask) throws LastErrorException;

    int sched_getcpu() throws LastErrorException;

    NativeLong syscall(NativeLong number, Object... args) throws LastErrorException;

    int getpid();
  }

  private static final class Holder {
    static final CLib C = Native.load("c", CLib.class);
  }

  /** Bytes of a CPU mask: enough for 8192 CPUs, as glibc's larger cpu_set_t sizes allow. */
  private static final int MASK_BYTES = 1024;

  static CLib c() {
    try {
      return Holder.C;
    } catch (LinkageError e) {
      throw new AffinityException(
          "cannot load the C library through JNA (" + e + "): CPU affinity is unavailable", e);
    }
  }

  /** True when the native calls work on this machine (Linux with JNA's native part). */
  public static boolean available() {
    try {
      c().sched_getcpu();
      return true;
    } catch (RuntimeException | LinkageError e) {
      return false;
    }
  }

  /** The Linux thread id of the calling thread (what /proc/self/task/TID names). */
  public static int currentThreadId() {
    String arch = System.getProperty("os.arch");
    long number =
        switch (arch) {
          case "amd64", "x86_64" -> 186;
          case "aarch64" -> 178;
          case "ppc64le", "ppc64" -> 207;
          case "riscv64" -> 178;
          default -> throw new AffinityException("gettid: unknown architecture " + arch);
        };
    return c().syscall(new NativeLong(number)).intValue();
  }

  /** The CPU the calling thread runs on now. */
  public static int currentCpu() {
    try {
      return c().sched_getcpu();
    } catch (LastErrorException e) {
      throw new AffinityException("sched_getcpu failed: errno " + e.getErrorCode(), e);
    }
  }

  /** The CPUs the calling thread may run on. */
  public static CpuSet currentThreadAffinity() {
    return affinityOf(0);
  }

  /** The CPUs thread (or process) {@code tid} may run on. */
  public static CpuSet affinityOf(int tid) {
    Memory mask = new Memory(MASK_BYTES);
    mask.clear();
    try {
      c().sched_getaffinity(tid, new NativeLong(MASK_BYTES), mask);
    } catch (LastErrorException e) {
      throw new AffinityException(
          "sched_getaffinity(" + tid + ") failed: errno " + e.getErrorCode(), e);
    }
    return CpuSet.fromBits(BitSet.valueOf(mask.getByteArray(0, MASK_BYTES)));
  }

  /** Binds the calling thread to {@code cpus}. */
  public static void bindCurrentThread(CpuSet cpus) {
    bind(0, cpus);
  }

  /**
   * Binds every thread of this process to {@code cpus} (threads started later inherit the set
   * of the thread that starts them).
   */
  public static void bindProcess(CpuSet cpus) {
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
      for (Path task : tasks) {
        try {
          bind(Integer.parseInt(task.getFileName().toString()), cpus);
        } catch (AffinityException e) {
          if (Files.exists(task)) {
            throw e;
          } // the thread ended meanwhile
        }
      }
    } catch (IOException e) {
      throw new AffinityException("cannot list /proc/self/task: " + e.getMessage(), e);
    }
  }

  /** Binds thread (or process main thread) {@code tid}; 0 is the calling thread. */
  public static void bind(int tid, CpuSet cpus) {
    if (cpus.isEmpty()) {
      throw new AffinityException("cannot bind to an empty CPU set");
    }
    if (cpus.last() >= MASK_BYTES * 8) {
      throw new AffinityException("CPU " + cpus.last() + " is beyond the supported 8191");
    }
    Memory mask = new Memory(MASK_BYTES);
    mask.clear();
    byte[] bytes = cpus.toBits().toByteArray();
    mask.write(0, bytes, 0, bytes.length);
    try {
      c().sched_setaffinity(tid, new NativeLong(MASK_BYTES), mask);
    } catch (LastErrorException e) {
      String why =
          switch (e.getErrorCode()) {
            case 22 -> "no CPU of " + cpus + " is allowed here (cgroup cpuset or numactl)";
            case 1 -> "not permitted to change thread " + tid + "'s affinity";
            case 3 -> "no thread " + tid;
            default -> "errno " + e.getErrorCode();
          };
      throw new AffinityException("sched_setaffinity(" + cpus + ") failed: " + why, e);
    }
  }
}
