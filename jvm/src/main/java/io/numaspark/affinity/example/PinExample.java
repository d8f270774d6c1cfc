package io.numaspark.affinity.example;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.Topology;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The README's example: pin this thread to one CPU (the last allowed one, or the argument)
 * and show it from the kernel's side, /proc/self/task/TID/status.
 *
 * <pre>java -cp numaspark-affinity-0.1.0.jar io.numaspark.affinity.example.PinExample [CPU]</pre>
 */
public final class PinExample {
  private PinExample() {}

  public static void main(String[] args) throws Exception {
    CpuSet allowed = Affinity.currentThreadAffinity();
    Topology machine = Topology.fromSysfs();
    System.out.println("allowed CPUs " + allowed + "; cores " + machine.cores()
        + "; NUMA nodes " + machine.nodes());
    int cpu = args.length > 0 ? Integer.parseInt(args[0]) : allowed.last();
    Affinity.bindCurrentThread(CpuSet.of(cpu));
    long spin = 0;
    for (int i = 0; i < 50_000_000; i++) {
      spin += i; // run a little so the scheduler moves the thread onto its CPU
    }
    int tid = Affinity.currentThreadId();
    System.out.println("thread " + tid + " bound to " + Affinity.currentThreadAffinity()
        + ", running on CPU " + Affinity.currentCpu() + " (" + (spin > 0) + ")");
    for (String line : Files.readAllLines(Path.of("/proc/self/task/" + tid + "/status"))) {
      if (line.startsWith("Cpus_allowed_list")) {
        System.out.println("/proc/self/task/" + tid + "/status: " + line);
      }
    }
  }
}
