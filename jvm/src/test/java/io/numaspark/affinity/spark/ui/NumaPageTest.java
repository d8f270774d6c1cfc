package io.numaspark.affinity.spark.ui;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.numaspark.affinity.spark.PlacementReport;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What the NUMA page serves: its JSON from placement reports (each executor's newest, its
 * host's nodes from the first report, the figures the page draws), its paths, and an HTML page
 * that needs nothing from anywhere else.
 */
class NumaPageTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A report as an executor sends it (its JSON fields). */
  static Map<String, Object> report(String executor, String cpus, long timeMs) {
    Map<String, Object> fields = new HashMap<>(Map.of("executor", executor, "host", "host1",
        "pid", 4242, "cpus", cpus, "mems", "0-1", "policy", "bind:1", "home_nodes", "1",
        "local_share", 0.75, "remote_bytes", 256L << 20, "time_ms", timeMs));
    fields.put("bytes_per_node", Map.of("0", 256L << 20, "1", 768L << 20));
    fields.put("pinned_tasks", 12);
    fields.put("task_migrations", 3);
    return fields;
  }

  static PlacementReport first(String executor, String cpus, long timeMs) {
    Map<String, Object> fields = report(executor, cpus, timeMs);
    fields.put("host_topology", Map.of("nodes", Map.of("0", "0-3", "1", "4-7", "2", "")));
    return PlacementReport.fromMap(fields);
  }

  private static JsonNode rows(NumaPage page) throws Exception {
    JsonNode doc = JSON.readTree(page.json());
    assertEquals(NumaPage.VERSION, doc.get("version").asInt());
    return doc.get("executors");
  }

  @Test
  void eachExecutorsNewestReportWithTheNodesItsCpusLieOn() throws Exception {
    NumaPage page = new NumaPage("etl", "live");
    page.add(first("1", "4-7", 1000));
    Map<String, Object> later = report("1", "4-7", 3000);
    later.put("python", List.of(
        Map.of("pid", 7, "role", "daemon", "cpu_s", 0.5, "bytes_per_node", Map.of("1", 1L << 20)),
        Map.of("pid", 8, "role", "worker", "cpu_s", 2.25, "bytes_per_node", Map.of("1", 1L << 20)),
        Map.of("pid", 9, "role", "worker", "cpu_s", 1.0)));
    later.put("devices", List.of(Map.of("resource", "gpu", "address", "0", "node", 1),
        Map.of("resource", "gpu", "address", "7", "unknown", "no gpu 7")));
    page.add(PlacementReport.fromMap(later));
    page.add(PlacementReport.fromMap(report("1", "0-7", 2000))); // older: not kept
    page.add(first("10", "2-5", 1500));
    page.add(first("2", "0-1", 1500));
    page.add(first("driver", "0-7", 500));

    JsonNode rows = rows(page);
    List<String> order = List.of("driver", "1", "2", "10");
    for (int i = 0; i < order.size(); i++) {
      assertEquals(order.get(i), rows.get(i).get("executor").asText());
    }
    JsonNode one = rows.get(1);
    assertEquals("1", one.get("nodes").asText()); // from the first report's topology
    assertEquals("4-7", one.get("cpus").asText());
    assertEquals(4, one.get("cpu_count").asInt());
    assertEquals(0.75, one.get("local_share").asDouble());
    assertEquals(256L << 20, one.get("remote_bytes").asLong());
    assertEquals((1024L << 20) + (2L << 20), one.get("resident_bytes").asLong());
    assertEquals(12, one.get("pinned_tasks").asInt());
    assertEquals(3, one.get("task_migrations").asInt());
    assertEquals(3, one.get("python_processes").asInt());
    assertEquals(2, one.get("python_workers").asInt());
    assertEquals(3.75, one.get("python_cpu_s").asDouble());
    assertEquals("gpu 0 on node 1", one.get("devices").get(0).asText());
    assertEquals("gpu 7 (node unknown)", one.get("devices").get(1).asText());
    assertEquals(3000, one.get("report").get("time_ms").asLong());
    assertFalse(one.get("report").has("host_topology"));
    assertEquals("0-1", rows.get(3).get("nodes").asText()); // executor 10: CPUs 2-5
    assertEquals("0-1", rows.get(0).get("nodes").asText());
  }

  @Test
  void nodesAreUnknownWithoutTheHostsTopology() throws Exception {
    NumaPage page = new NumaPage("etl", "history");
    assertTrue(page.isEmpty());
    page.add(PlacementReport.fromMap(report("0", "0-1", 1)));
    JsonNode row = rows(page).get(0);
    assertTrue(row.get("nodes").isNull());
    assertEquals(0, row.get("python_processes").asInt());
    assertEquals(0, row.get("devices").size());
    page.addHostNodes("host1", Map.of("0", "0-1", "1", "2-3"));
    assertEquals("0", rows(page).get(0).get("nodes").asText());
    assertNull(NumaRow.nodes("0-1", null));
    assertNull(NumaRow.nodes("not a list", Map.of("0", "0-1")));
  }

  @Test
  void thePageIsAtItsRootAndItsJsonBesideIt() throws Exception {
    NumaPage page = new NumaPage("etl", "live");
    page.add(first("0", "0-1", 1));
    for (String path : new String[] {"", "/", null}) {
      NumaPage.Response html = page.respond(path);
      assertEquals(200, html.status());
      assertTrue(html.contentType().startsWith("text/html"));
    }
    NumaPage.Response json = page.respond("/json");
    assertEquals(200, json.status());
    assertTrue(json.contentType().startsWith("application/json"));
    JsonNode doc = JSON.readTree(new String(json.body(), StandardCharsets.UTF_8));
    assertEquals("etl", doc.get("application").asText());
    assertEquals("live", doc.get("source").asText());
    NumaPage.Response script = page.respond("/page.js");
    assertEquals(200, script.status());
    assertTrue(script.contentType().startsWith("text/javascript"));
    assertEquals(404, page.respond("/jobs").status());
  }

  @Test
  void thePageNeedsNothingFromElsewhere() {
    String html = NumaPage.html();
    String script = NumaPage.script();
    assertTrue(html.length() + script.length() < 12_000, "a small page");
    Matcher refs = Pattern.compile("(?i)(src|href|action)\\s*=\\s*\"([^\"]*)\"").matcher(html);
    List<String> found = new java.util.ArrayList<>();
    while (refs.find()) {
      found.add(refs.group(2));
    }
    assertEquals(List.of("../", "json", "page.js"), found.stream().sorted().toList());
    assertFalse(Pattern.compile("(?i)<(link|iframe|img|object|embed)\\b").matcher(html).find());
    // Spark 4 serves its UI with a Content-Security-Policy that refuses inline scripts
    assertFalse(Pattern.compile("(?i)<script(?![^>]*\\bsrc=\"page\\.js\")").matcher(html).find());
    assertFalse(Pattern.compile("(?i)(@import|url\\()").matcher(html + script).find());
    assertFalse(Pattern.compile("(?i)(https?:|//[a-z])").matcher(script).find(), "an address");
    assertFalse(script.contains("innerHTML") || script.contains("eval("), "text, never markup");
    assertTrue(script.contains("base + \"json\""), "it reads the JSON beside the page");
  }
}
