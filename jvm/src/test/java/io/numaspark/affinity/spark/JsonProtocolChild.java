package io.numaspark.affinity.spark;

import java.util.List;
import java.util.Map;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.util.JsonProtocol;

/**
 * Run in a child JVM with every Spark jar on its class path ({@link EventLogPosterTest}):
 * writes a {@link NumaPlacementEvent} with Spark's own JSON mapper, reads the line back with
 * it, and prints the line, then the class, time and reports of what was read.
 */
public final class JsonProtocolChild {
  private JsonProtocolChild() {}

  public static void main(String[] args) {
    NumaPlacementEvent event = new NumaPlacementEvent(NumaPlacementEvent.VERSION,
        1795438078846L, List.of(
            Map.of("executor", "1", "local_share", 0.75, "bytes_per_node", Map.of("0", 3L << 20),
                "host_topology", Map.of("nodes", Map.of("0", "0-1"))),
            Map.of("executor", "driver", "cpus", "0-1")));
    String json = JsonProtocol.sparkEventToJsonString(event);
    System.out.println(json);
    SparkListenerEvent back = JsonProtocol.sparkEventFromJson(json);
    NumaPlacementEvent read = (NumaPlacementEvent) back;
    System.out.println(back.getClass().getName() + " " + read.timeMs() + " " + read.reports());
  }
}
