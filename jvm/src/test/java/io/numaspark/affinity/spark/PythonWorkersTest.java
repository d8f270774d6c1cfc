package io.numaspark.affinity.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.CpuSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Real processes: a stand-in for PySpark's daemon (a Python process whose command line names
 * {@code pyspark.daemon}, which forks a worker), started by this JVM from a thread pinned to
 * one CPU, as Spark starts the daemon from a task thread pinned at level core.
 */
class PythonWorkersTest {
  private static final String DAEMON = "import os, time\nos.fork()\ntime.sleep(30)\n";
  // the system's Python, not a shim on PATH (pyenv's forks helpers of its own before it execs)
  private static final String PYTHON =
      Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";

  private static Process daemonFrom(CpuSet pinned) throws Exception {
    CpuSet before = Affinity.currentThreadAffinity();
    Affinity.bindCurrentThread(pinned);
    try {
      return new ProcessBuilder(PYTHON, "-c", DAEMON, "pyspark.daemon").start();
    } finally {
      Affinity.bindCurrentThread(before);
    }
  }

  private static Map<PythonWorkers.Child, String> both(PythonWorkers workers) throws Exception {
    long deadline = System.currentTimeMillis() + 10_000;
    Map<PythonWorkers.Child, String> found = workers.python();
    while (found.size() < 2 && System.currentTimeMillis() < deadline) {
      Thread.sleep(50);
      found = workers.python();
    }
    return found;
  }

  /** Every thread of every process listed, and the CPUs each may run on. */
  private static Set<CpuSet> threadCpus(Map<PythonWorkers.Child, String> found)
      throws IOException {
    Set<CpuSet> cpus = new HashSet<>();
    for (PythonWorkers.Child child : found.keySet()) {
      try (var tasks = Files.newDirectoryStream(Path.of("/proc/" + child.pid() + "/task"))) {
        for (Path task : tasks) {
          cpus.add(Affinity.affinityOf(Integer.parseInt(task.getFileName().toString())));
        }
      }
    }
    return cpus;
  }

  @Test
  void aDaemonForkedFromAPinnedThreadIsBoundBackToTheExecutorsCpus() throws Exception {
    assumeTrue(Affinity.available(), "needs the native library");
    CpuSet allowed = Affinity.currentThreadAffinity();
    assumeTrue(allowed.size() >= 2, "needs two CPUs to tell one core from the executor's");
    CpuSet one = CpuSet.of(allowed.toArray()[0]);
    Process daemon = daemonFrom(one);
    try {
      PythonWorkers workers = new PythonWorkers(allowed);
      Map<PythonWorkers.Child, String> found = both(workers);
      assertEquals(List.of("daemon", "worker"), List.copyOf(found.values()), found.toString());
      // the defect: the daemon and its worker inherit the pinned thread's one CPU
      assertEquals(Set.of(one), threadCpus(found));
      assertTrue(workers.rebind() >= 2);
      assertEquals(Set.of(allowed), threadCpus(found));
      assertEquals(0, workers.rebind()); // already there: nothing to do
      List<PythonProcess> listed = workers.read();
      assertEquals(2, listed.size());
      for (PythonProcess process : listed) {
        assertEquals(allowed.toString(), process.cpus());
        assertTrue(process.rssBytes() > 0 && process.threads() >= 1, process.toString());
        assertTrue(!process.bytesPerNode().isEmpty() && !process.policy().equals("unknown"),
            process.toString());
      }
      assertEquals(daemon.pid(), listed.get(0).pid());
      assertEquals("daemon", listed.get(0).role());
    } finally {
      daemon.descendants().forEach(ProcessHandle::destroyForcibly);
      daemon.destroyForcibly().waitFor();
    }
  }

  @Test
  void withNoCpusToKeepThemOnTheyAreOnlyListed() throws Exception {
    assumeTrue(Affinity.available(), "needs the native library");
    CpuSet allowed = Affinity.currentThreadAffinity();
    assumeTrue(allowed.size() >= 2, "needs two CPUs");
    CpuSet one = CpuSet.of(allowed.last());
    Process daemon = daemonFrom(one);
    try {
      PythonWorkers listing = new PythonWorkers(null); // level none: nothing pins a thread
      Map<PythonWorkers.Child, String> found = both(listing);
      assertEquals(2, found.size());
      assertEquals(0, listing.rebind());
      assertEquals(Set.of(one), threadCpus(found));
      assertEquals(2, listing.read().size());
    } finally {
      daemon.descendants().forEach(ProcessHandle::destroyForcibly);
      daemon.destroyForcibly().waitFor();
    }
  }
}
