package io.numaspark.affinity.spark;

import io.numaspark.affinity.Affinity;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.ProcessPlacement;
import io.numaspark.affinity.Topology;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the plugin does when an executor starts at level node, timed: choose a node slot in a
 * lock directory, bind every thread to the node's CPUs, migrate the resident pages there
 * ({@link NodeBinder}), with {@code MIB} MiB of heap touched first so that there are pages to
 * move. Prints one JSON line: the resident bytes, the milliseconds, what was bound (bench/
 * binding_cost.py runs it at several sizes). On a one-node machine the slot is the only node
 * and nothing is bound or moved: the figure is then the fixed cost of choosing and reading.
 * With TOUCHNODE the heap is touched from that node's CPUs (first touch puts it there) and the
 * thread's affinity restored before binding: on several nodes the binder, choosing the least
 * used slot (node 0 when the lock directory is empty), then has TOUCHNODE's pages to migrate.
 *
 * <pre>java -cp numaspark-affinity.jar io.numaspark.affinity.spark.BindCost MIB LOCKDIR [TOUCHNODE]</pre>
 */
public final class BindCost {
  private BindCost() {}

  public static void main(String[] args) throws Exception {
    int mib = args.length > 0 ? Integer.parseInt(args[0]) : 256;
    Path locks = args.length > 1 ? Path.of(args[1]) : Files.createTempDirectory("bindcost");
    CpuSet allowed = Affinity.currentThreadAffinity();
    if (args.length > 2) {
      CpuSet touchOn = Topology.fromSysfs().nodes().get(Integer.parseInt(args[2]));
      if (touchOn == null) {
        throw new IllegalArgumentException("no NUMA node " + args[2] + " on this machine");
      }
      Affinity.bindCurrentThread(touchOn);
    }
    List<byte[]> heap = new ArrayList<>();
    for (int i = 0; i < mib; i++) {
      byte[] chunk = new byte[1 << 20];
      for (int page = 0; page < chunk.length; page += 4096) {
        chunk[page] = 1; // touched: resident, on the node this thread ran on
      }
      heap.add(chunk);
    }
    Affinity.bindCurrentThread(allowed); // as it started: the binder chooses among these
    ProcessPlacement before = ProcessPlacement.read();
    long resident = before.residentBytes();
    AffinityConf conf = AffinityConf.from(
        Map.of(AffinityConf.PREFIX + "level", "node", AffinityConf.PREFIX + "lockDir",
            locks.toString()), name -> null);
    long start = System.nanoTime();
    NodeBinder binder = NodeBinder.start(conf, allowed, 1);
    double millis = (System.nanoTime() - start) / 1e6;
    String binding = binder.binding();
    ProcessPlacement after = ProcessPlacement.read();
    binder.close();
    System.out.printf("{\"touched_mib\": %d, \"resident_bytes\": %d, \"bind_ms\": %.3f, "
        + "\"binding\": \"%s\", \"chunks\": %d, \"mib_before\": %s, "
        + "\"mib_after\": %s}%n", mib, resident, millis,
        binding == null ? "" : binding.replace("\"", "'"), heap.size(),
        mib(before.bytesPerNode()), mib(after.bytesPerNode()));
  }

  /** Resident MiB per node as a JSON object: {"0": 12, "1": 300}. */
  private static String mib(Map<Integer, Long> bytesPerNode) {
    StringBuilder json = new StringBuilder("{");
    new TreeMap<>(bytesPerNode).forEach((node, bytes) -> json
        .append(json.length() > 1 ? ", " : "").append('"').append(node).append("\": ")
        .append(bytes >> 20));
    return json.append('}').toString();
  }
}
