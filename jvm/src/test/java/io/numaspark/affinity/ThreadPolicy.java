package io.numaspark.affinity;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * For tests: a thread's memory policy as the kernel shows it, and whether this machine lets a
 * thread have one at all, each found without the code under test.
 */
public final class ThreadPolicy {
  private ThreadPolicy() {}

  /**
   * The policy of most of thread {@code tid}'s mappings in {@code /proc/self/task/TID/numa_maps}
   * ({@code bind:0}, {@code interleave:0-1}, {@code default}): a mapping without a policy of its
   * own shows the policy of the thread whose numa_maps is read, so a policy that
   * {@code set_mempolicy} gave one thread shows there and not in another thread's.
   */
  public static String of(int tid) throws IOException {
    return ProcessPlacement.read(Path.of("/proc/self/task/" + tid),
        ProcessHandle.current().pid()).policy();
  }

  /**
   * Why this machine refuses {@code set_mempolicy} to any program, or null when it allows it:
   * {@code numactl --membind=NODE true} (numactl's own call, not ours) exits 0 when the
   * kernel and this process's seccomp profile allow a memory policy. Without numactl, a process
   * under no seccomp filter ({@code Seccomp: 0}) on a kernel with NUMA nodes is allowed.
   */
  public static String refusedBecause(int node) throws IOException, InterruptedException {
    Path numactl = Path.of("/usr/bin/numactl");
    if (Files.isExecutable(numactl)) {
      Process probe = new ProcessBuilder(numactl.toString(), "--membind=" + node, "true")
          .redirectErrorStream(true).start();
      String said = new String(probe.getInputStream().readAllBytes()).strip();
      if (!probe.waitFor(60, TimeUnit.SECONDS)) {
        probe.destroyForcibly();
        return "numactl --membind=" + node + " did not end in 60 s";
      }
      return probe.exitValue() == 0 ? null
          : "numactl --membind=" + node + " is refused too (exit " + probe.exitValue() + ": "
              + said + ")";
    }
    if (!Files.isDirectory(Path.of("/sys/devices/system/node/node" + node))) {
      return "no NUMA node " + node + " in sysfs (a kernel without NUMA)";
    }
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("Seccomp:") && !line.substring(8).strip().equals("0")) {
        return "no numactl to probe with, and a seccomp filter (" + line.strip()
            + ") may refuse set_mempolicy";
      }
    }
    return null;
  }
}
