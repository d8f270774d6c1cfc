package io.numaspark.affinity.spark.ui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.numaspark.affinity.spark.NumaPlacementEvent;
import io.numaspark.affinity.spark.PlacementReport;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.status.AppHistoryServerPlugin;
import org.apache.spark.status.ElementTrackingStore;
import org.apache.spark.ui.SparkUI;
import org.junit.jupiter.api.Test;

/**
 * The NUMA page in the History Server: the replay's listener keeps each executor's newest
 * report and each host's nodes as store entries, the page is made from them (and from Spark's
 * own in-memory KVStore, in a child JVM with every Spark jar), and the plugin the
 * ServiceLoader sees never lets a failure of its real classes reach the History Server.
 */
class NumaHistoryTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Replays three batches, a bad report and another event into {@code store}. */
  static void replay(NumaHistoryListener listener) {
    PlacementReport latest = PlacementReport.fromMap(NumaPageTest.report("0", "4-7", 9000));
    listener.onOtherEvent(new NumaPlacementEvent(1, 1, List.of(
        NumaPageTest.first("0", "4-7", 1000).toMap(),
        NumaPageTest.first("driver", "0-7", 500).toMap())));
    listener.onOtherEvent(new NumaPlacementEvent(1, 2, List.of(latest.toMap(),
        Map.of("executor", "bad", "time_ms", "not a time")))); // skipped, the rest kept
    listener.onOtherEvent(new NumaPlacementEvent(1, 3,
        List.of(NumaPageTest.report("0", "0-7", 5000)))); // older than the one kept
    listener.onOtherEvent(new SparkListenerEvent() {}); // another event: passes by
  }

  /** What the page says of a replay: the driver, then executor 0 as its newest report. */
  static void assertReplayed(String json) throws Exception {
    JsonNode doc = JSON.readTree(json);
    assertEquals("history", doc.get("source").asText());
    JsonNode rows = doc.get("executors");
    assertEquals(2, rows.size());
    assertEquals("driver", rows.get(0).get("executor").asText());
    JsonNode zero = rows.get(1);
    assertEquals(9000, zero.get("time_ms").asLong());
    assertEquals("4-7", zero.get("cpus").asText());
    assertEquals("1", zero.get("nodes").asText()); // CPUs 4-7: node 1 of host1
    assertEquals(0.75, zero.get("local_share").asDouble());
  }

  @Test
  void theReplayKeepsEachExecutorsNewestReportAndItsHostsNodes() throws Exception {
    Map<String, NumaStoreEntry> store = new LinkedHashMap<>(); // by id, as a KVStore keeps them
    replay(new NumaHistoryListener(value -> {
      NumaStoreEntry entry = (NumaStoreEntry) value;
      store.put(entry.id, entry);
    }));
    assertEquals(List.of("report:0", "host:host1", "report:driver"),
        new ArrayList<>(store.keySet()));
    assertReplayed(NumaHistory.page(store.values(), "etl").json());
  }

  @Test
  void sparksOwnStoreKeepsTheEntries() throws Exception {
    String jars = System.getProperty("spark.jars");
    assumeTrue(jars != null && Files.isDirectory(Path.of(jars)), "spark.jars is not set");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath = String.join(File.pathSeparator, "target/classes", "target/test-classes",
        jars + "/*");
    Process child = new ProcessBuilder(java, "-cp", classPath, NumaStoreChild.class.getName())
        .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, child.waitFor(), out);
    assertReplayed(out.strip());
  }

  @Test
  void anApplicationWithoutReportsGetsNoPage() throws Exception {
    assertTrue(NumaHistory.page(List.of(), "plain").isEmpty());
  }

  @Test
  void theServiceLoaderFindsThePluginAndItGivesTheListener() {
    List<AppHistoryServerPlugin> found = new ArrayList<>();
    ServiceLoader.load(AppHistoryServerPlugin.class).forEach(found::add);
    NumaHistoryPlugin plugin = (NumaHistoryPlugin) found.stream()
        .filter(p -> p instanceof NumaHistoryPlugin).findFirst().orElseThrow();
    assertTrue(plugin.loaded());
    scala.collection.Seq<SparkListener> listeners = plugin.createListeners(null, null);
    assertEquals(1, listeners.size());
    assertInstanceOf(NumaHistoryListener.class, listeners.head());
    // Spark 3.5's shape (Scala 2.12's collection.Seq): the bridge method, on this same class
    scala.collection.Seq<SparkListener> old =
        ((Scala212HistoryPlugin) plugin).createListeners(null, null);
    assertEquals(1, old.size());
  }

  @Test
  void realClassesThatDoNotLinkLeaveTheHistoryServerAsItWas() {
    for (String name : new String[] {"io.numaspark.NoSuchClass", Broken.class.getName(),
        Unloadable.class.getName()}) {
      NumaHistoryPlugin plugin = new NumaHistoryPlugin(name);
      assertEquals(0, plugin.createListeners(null, null).size(), name);
      plugin.setupUI(null); // nothing thrown
      assertEquals(name.endsWith("Broken"), plugin.loaded(), name);
    }
    assertFalse(new NumaHistoryPlugin("").loaded());
  }

  @Test
  void theClassesTheServiceLoaderLoadsAreJava8Bytecode() throws Exception {
    // a History Server on Java 8 or 11 loads them too: a newer class file would fail its
    // ServiceLoader (UnsupportedClassVersionError) and so every application
    for (Class<?> loaded : List.of(NumaHistoryPlugin.class, Scala212HistoryPlugin.class)) {
      try (var in = new java.io.DataInputStream(loaded.getResourceAsStream(
          loaded.getSimpleName() + ".class"))) {
        in.readInt(); // magic
        in.readUnsignedShort(); // minor
        assertEquals(52, in.readUnsignedShort(), loaded.getName());
      }
    }
  }

  /** A real plugin built for another Spark line: its calls fail to link. */
  public static final class Broken {
    public SparkListener listener(ElementTrackingStore store) {
      throw new NoClassDefFoundError("scala/collection/immutable/Seq");
    }

    public void setupUI(SparkUI ui) {
      throw new AbstractMethodError("setupUI");
    }
  }

  /** A real plugin whose class fails as it loads. */
  public static final class Unloadable {
    static {
      if (Boolean.TRUE) {
        throw new IllegalStateException("built for Spark 3.5");
      }
    }
  }
}
