package io.numaspark.affinity.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The driver's batches of placement reports, and their trip through Spark's own JSON mapper
 * (the event-log writer's {@code JsonProtocol}, the History Server's reader), in a child JVM
 * with every Spark jar: what Spark writes for a {@link NumaPlacementEvent} reads back as the
 * same event.
 */
class EventLogPosterTest {
  private static Map<String, Object> report(String executor, long timeMs, boolean first) {
    Map<String, Object> report = new java.util.TreeMap<>(Map.of("executor", executor,
        "host", "host1", "cpus", "0-1", "time_ms", timeMs, "local_share", 0.75,
        "bytes_per_node", Map.of("0", 3L << 20, "1", 1L << 20)));
    if (first) {
      report.put("host_topology", Map.of("nodes", Map.of("0", "0", "1", "1")));
    }
    return report;
  }

  @Test
  void aBatchHoldsEachExecutorsFirstReportAndThenItsLatest() {
    List<NumaPlacementEvent> posted = new ArrayList<>();
    EventLogPoster poster = new EventLogPoster(posted::add);
    poster.add(report("1", 1, true));
    poster.add(report("1", 2, false));
    poster.add(report("1", 3, false));
    poster.add(report("2", 4, true));
    poster.flush();
    poster.flush(); // nothing new: no event
    poster.add(report("1", 5, false));
    poster.add(report("1", 6, false));
    poster.close();
    assertEquals(2, posted.size());
    List<Object> times = posted.get(0).reports().stream().map(r -> r.get("time_ms")).toList();
    assertEquals(List.of(1L, 4L, 3L), times);
    assertEquals(List.of(6L), posted.get(1).reports().stream().map(r -> r.get("time_ms"))
        .toList());
    assertEquals(NumaPlacementEvent.VERSION, posted.get(0).version());
  }

  @Test
  void aPostThatFailsNeverReachesTheCaller() {
    EventLogPoster poster = new EventLogPoster(event -> {
      throw new IllegalStateException("listener bus stopped");
    });
    poster.add(report("1", 1, true));
    poster.close(); // logs one warning, throws nothing
  }

  @Test
  void sparksOwnJsonMapperWritesTheEventAndReadsItBack() throws Exception {
    String jars = System.getProperty("spark.jars");
    assumeTrue(jars != null && Files.isDirectory(Path.of(jars)), "spark.jars is not set");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = String.join(File.pathSeparator, "target/classes", "target/test-classes",
        jars + "/*");
    Process child = new ProcessBuilder(java, "-cp", classPath, JsonProtocolChild.class.getName())
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    List<String> lines = new String(child.getInputStream().readAllBytes(),
        StandardCharsets.UTF_8).lines().toList();
    assertEquals(0, child.waitFor(), String.join("\n", lines));
    assertEquals(2, lines.size(), String.join("\n", lines));
    String json = lines.get(0);
    assertTrue(json.startsWith("{\"Event\":\"io.numaspark.affinity.spark.NumaPlacementEvent\""),
        json);
    assertTrue(json.contains("\"time_ms\":1795438078846") && json.contains("\"version\":1")
        && json.contains("\"host_topology\":{\"nodes\":{\"0\":\"0-1\"}}"), json);
    String read = lines.get(1);
    assertTrue(read.startsWith(NumaPlacementEvent.class.getName() + " 1795438078846 ["), read);
    assertTrue(read.contains("executor=driver") && read.contains("local_share=0.75"), read);
    // nested objects read back as JDK maps, not Scala's (a History Server's listener reads them)
    assertTrue(read.contains("bytes_per_node={0=3145728}"), read);
  }
}
