package io.numaspark.affinity;

import com.sun.jna.LastErrorException;
import com.sun.jna.Memory;
import com.sun.jna.NativeLong;
import com.sun.jna.Pointer;

/**
 * Moves this process's memory between NUMA nodes and sets a thread's memory policy, through the
 * kernel's {@code migrate_pages(2)} and {@code set_mempolicy(2)} (raw system calls through JNA:
 * glibc does not wrap them, libnuma may be missing). A refusal (EPERM from a container's seccomp
 * profile, ENOSYS) throws {@link AffinityException} saying why.
 *
 * <p>What a running JVM can and cannot do with them: {@code migrate_pages} moves the pages
 * resident now, of every mapping; {@code set_mempolicy} sets the policy of the calling thread
 * only (the pages it faults in later), so GC and JIT threads keep theirs; an {@code mbind} of the
 * heap would be dropped when HotSpot commits heap with {@code mmap(MAP_FIXED)}.
 */
public final class MemoryMover {
  private MemoryMover() {}

  /** set_mempolicy modes (linux/mempolicy.h). */
  public static final int MPOL_DEFAULT = 0;
  public static final int MPOL_PREFERRED = 1;
  public static final int MPOL_BIND = 2;
  public static final int MPOL_INTERLEAVE = 3;

  /** Bits of a node mask: the kernel reads maxnode - 1 of them. */
  private static final int MASK_BITS = 1024;

  private static long number(String call) {
    String arch = System.getProperty("os.arch");
    boolean migrate = call.equals("migrate_pages");
    return switch (arch) {
      case "amd64", "x86_64" -> migrate ? 256 : 238;
      case "aarch64", "riscv64" -> migrate ? 238 : 237; // the generic table
      case "ppc64le", "ppc64" -> migrate ? 258 : 261;
      default -> throw new AffinityException(call + ": unknown architecture " + arch);
    };
  }

  private static Memory mask(CpuSet nodes) {
    if (!nodes.isEmpty() && nodes.last() >= MASK_BITS) {
      throw new AffinityException("node " + nodes.last() + " is beyond " + (MASK_BITS - 1));
    }
    Memory mask = new Memory(MASK_BITS / 8);
    mask.clear();
    byte[] bytes = nodes.toBits().toByteArray();
    mask.write(0, bytes, 0, bytes.length);
    return mask;
  }

  private static String why(String call, LastErrorException e) {
    return call + " failed: " + switch (e.getErrorCode()) {
      case 1 -> "not permitted (EPERM: a container's seccomp profile or missing CAP_SYS_NICE)";
      case 38 -> "not implemented by this kernel (ENOSYS)";
      case 22 -> "invalid nodes (EINVAL: a node not allowed here)";
      case 18 -> "a node is not allowed by this cpuset (EXDEV)";
      default -> "errno " + e.getErrorCode();
    };
  }

  /**
   * Moves this process's pages on nodes {@code from} to nodes {@code to} ({@code
   * migrate_pages(0, maxnode, from, to)}); returns the number of pages that could not be moved
   * (0: all of them). Pages already on {@code to} stay.
   */
  public static long migratePages(CpuSet from, CpuSet to) {
    if (to.isEmpty()) {
      throw new AffinityException("migrate_pages: no node to move to");
    }
    try {
      NativeLong left = Affinity.c().syscall(new NativeLong(number("migrate_pages")),
          new NativeLong(0), new NativeLong(MASK_BITS + 1), mask(from), mask(to));
      return left.longValue();
    } catch (LastErrorException e) {
      throw new AffinityException(why("migrate_pages", e), e);
    } catch (LinkageError e) {
      throw new AffinityException("migrate_pages: no native library (" + e + ")", e);
    }
  }

  /** Sets the calling thread's memory policy: {@code mode} (MPOL_*) over {@code nodes}. */
  public static void setThreadPolicy(int mode, CpuSet nodes) {
    try {
      Pointer mask = mode == MPOL_DEFAULT ? Pointer.NULL : mask(nodes);
      Affinity.c().syscall(new NativeLong(number("set_mempolicy")), new NativeLong(mode), mask,
          new NativeLong(mode == MPOL_DEFAULT ? 0 : MASK_BITS + 1));
    } catch (LastErrorException e) {
      throw new AffinityException(why("set_mempolicy", e), e);
    } catch (LinkageError e) {
      throw new AffinityException("set_mempolicy: no native library (" + e + ")", e);
    }
  }
}
