package io.numaspark.affinity.spark;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.ProcessPlacement;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the plugin does when an executor starts at level node, timed: choose a node slot in a
 * lock directory, bind every thread to the node's CPUs, migrate the resident pages there
 * ({@link NodeBinder}), with {@code MIB} MiB of heap touched first so that there are pages to
 * move. Prints one JSON line: the resident bytes, the milliseconds, what was bound (bench/
 * binding_cost.py runs it at several sizes). On a one-node machine the slot is the only node
 * and nothing is bound or moved: the figure is then the fixed cost of choosing and reading.
 *
 * <pre>java -cp numaspark-affinity.jar io.numaspark.affinity.spark.BindCost MIB LOCKDIR</pre>
 */
public final class BindCost {
  private BindCost() {}

  public static void main(String[] args) throws Exception {
    int mib = args.length > 0 ? Integer.parseInt(args[0]) : 256;
    Path locks = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("bindcost");
    List<byte[]> heap = new ArrayList<>();
    for (int i = 0; i < mib; i++) {
      byte[] chunk = new byte[1 << 20];
      for (int page = 0; page < chunk.length; page += 4096) {
        chunk[page] = 1; // touched: resident, on the node this thread ran on
      }
      heap.add(chunk);
    }
    long resident = ProcessPlacement.read().residentBytes();
    AffinityConf conf = AffinityConf.from(
        Map.of(AffinityConf.PREFIX + "level", "node", AffinityConf.PREFIX + "lockDir",
            locks.toString()), name -> null);
    CpuSet allowed = Affinity.currentThreadAffinity();
    long start = System.nanoTime();
    NodeBinder binder = NodeBinder.start(conf, allowed, 1);
    double millis = (System.nanoTime() - start) / 1e6;
    String binding = binder.binding();
    binder.close();
    System.out.printf("{\"touched_mib\": %d, \"resident_bytes\": %d, \"bind_ms\": %.3f, "
        + "\"binding\": \"%s\", \"chunks\": %d}%n", mib, resident, millis,
        binding == null ? "" : binding.replace("\"", "'"), heap.size());
  }
}
