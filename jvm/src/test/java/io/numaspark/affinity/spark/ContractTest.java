package io.numaspark.affinity.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.ProcessPlacement;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The plugin against {@code jvm/contract.json} (Maven runs tests in jvm/): the conf keys
 * {@link AffinityConf} reads and the JSON field names of {@link TaskRecord} and {@link
 * PlacementReport} are exactly the contract's, with its JSON types. The Python side checks
 * the same file (tests/test_affinity_contract.py).
 */
class ContractTest {
  private static final String PREFIX = "spark.numaspark.affinity.";

  private static JsonNode contract() throws IOException {
    return PluginJson.MAPPER.readTree(Files.readString(Path.of("contract.json")));
  }

  private static Set<String> names(JsonNode fields, boolean withOptional) {
    Set<String> found = new TreeSet<>();
    for (JsonNode field : fields) {
      if (withOptional || !field.path("optional").asBoolean(false)) {
        found.add(field.get("name").asText());
      }
    }
    return found;
  }

  private static Set<String> names(String json) throws IOException {
    Set<String> found = new TreeSet<>();
    PluginJson.MAPPER.readTree(json).fieldNames().forEachRemaining(found::add);
    return found;
  }

  /** Every field of {@code json} has the JSON type the contract gives it. */
  private static void assertTypes(JsonNode fields, String json) throws IOException {
    JsonNode line = PluginJson.MAPPER.readTree(json);
    for (JsonNode field : fields) {
      JsonNode value = line.get(field.get("name").asText());
      if (value == null) {
        continue;
      }
      String type = field.get("type").asText();
      boolean ok = switch (type) {
        case "integer" -> value.isIntegralNumber();
        case "number" -> value.isNumber();
        case "string" -> value.isTextual();
        case "object" -> value.isObject();
        case "array" -> value.isArray();
        default -> false;
      };
      assertTrue(ok, field.get("name") + " should be " + type + ": " + value);
    }
  }

  @Test
  void confKeysAndDefaultsAreTheContracts() throws IOException {
    JsonNode conf = contract().get("conf");
    assertEquals(AffinityConf.PREFIX, conf.get("prefix").asText());
    Map<String, String> declared = new HashMap<>();
    for (JsonNode key : conf.get("keys")) {
      JsonNode fallback = key.get("default");
      declared.put(AffinityConf.PREFIX + key.get("name").asText(),
          fallback.isNull() ? null : fallback.asText());
    }
    Map<String, String> ours = new HashMap<>();
    for (AffinityConf.Key key : AffinityConf.Key.values()) {
      ours.put(key.key(), key.fallback());
    }
    assertEquals(declared, ours);
    AffinityConf defaults = AffinityConf.from(Map.of(), name -> null);
    assertEquals(AffinityConf.defaults(), defaults);
    assertEquals(AffinityConf.Key.LEVEL.fallback(),
        defaults.level().name().toLowerCase(java.util.Locale.ROOT));
    assertEquals(AffinityConf.Key.REPORT_INTERVAL_MS.fallback(),
        String.valueOf(defaults.reportIntervalMs()));
  }

  @Test
  void aBadValueIsOneWarningAndItsDefault() {
    Map<String, String> conf = Map.of(PREFIX + "level", "socket", PREFIX + "slots", "3-1",
        PREFIX + "reportIntervalMs", "5s", PREFIX + "slot", "0", PREFIX + "recordDir", " ");
    List<String> warnings = new ArrayList<>();
    AffinityConf parsed = AffinityConf.parse(conf, name -> "2,3", (problem, instead) ->
        warnings.add(problem + "; " + instead));
    assertEquals(4, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).contains(PREFIX + "slot is not"), warnings.get(0));
    assertTrue(warnings.get(1).contains("level 'socket': use none, node, core or pu; using none"),
        warnings.get(1));
    assertTrue(warnings.get(2).contains("slots '3-1'"), warnings.get(2));
    assertTrue(warnings.get(3).contains("'5s'") && warnings.get(3).endsWith("using 5000"),
        warnings.get(3));
    assertEquals(AffinityConf.Level.NONE, parsed.level());
    assertEquals(List.of(CpuSet.parse("2-3")), parsed.cores()); // the variable's, instead
    assertEquals("$NUMASPARK_AFFINITY_CORES", parsed.source());
    assertEquals(5000, parsed.reportIntervalMs());
    assertNull(parsed.recordDir());
    assertEquals(AffinityConf.DEFAULT_LOCK_DIR, parsed.lockDir());
    assertEquals(AffinityConf.MemPolicy.PREFERRED, parsed.memPolicy());
    List<String> policyWarnings = new ArrayList<>();
    AffinityConf bind = AffinityConf.parse(Map.of(PREFIX + "memPolicy", "Bind",
        PREFIX + "lockDir", "/run/numa"), name -> null, (p, i) -> policyWarnings.add(p));
    assertEquals(AffinityConf.MemPolicy.BIND, bind.memPolicy());
    assertEquals("/run/numa", bind.lockDir());
    AffinityConf.parse(Map.of(PREFIX + "memPolicy", "local"), name -> null,
        (p, i) -> policyWarnings.add(p + "; " + i));
    assertEquals(List.of(PREFIX + "memPolicy 'local': use preferred, bind or interleave; "
        + "using preferred"), policyWarnings);
    IllegalArgumentException strict = assertThrows(IllegalArgumentException.class,
        () -> AffinityConf.from(Map.of(PREFIX + "reportIntervalMs", "-1"), name -> null));
    assertTrue(strict.getMessage().startsWith(PREFIX + "reportIntervalMs '-1'"),
        strict.getMessage());
    AffinityConf good = AffinityConf.from(Map.of(PREFIX + "reportIntervalMs", "0",
        PREFIX + "placementFile", "/tmp/p.jsonl", PREFIX + "slots", ""), name -> "0");
    assertEquals(0, good.reportIntervalMs());
    assertEquals("/tmp/p.jsonl", good.placementFile());
    assertEquals(List.of(), good.cores()); // named but empty: the allowed cores, not $VAR
  }

  private static TaskRecord fullTask() {
    return new TaskRecord(0L, 0, 0, 0, "driver", 28715, "core", 1, "1", "why", 28844, 1, null,
        1795438077463L, null, null).ended(1, 1795438078846L, "success");
  }

  @Test
  void taskRecordFieldsAreTheContracts() throws IOException {
    JsonNode fields = contract().get("task_record").get("fields");
    String full = fullTask().json();
    assertEquals(names(fields, true), names(full));
    assertTypes(fields, full);
    TaskRecord bare = new TaskRecord(null, null, null, null, "0", 1, "none", null, null, null,
        -1, -1, null, 5, null, null).ended(-1, 6, "failed");
    assertEquals(names(fields, false), names(bare.json()));
  }

  @Test
  void aTaskLineIsTheOneRecordedBefore() {
    // the first line of tests/fixtures/runs/wordcount-core/affinity/affinity-driver-28715.jsonl
    TaskRecord record = new TaskRecord(0L, 0, 0, 0, "driver", 28715, "core", 1, "1", null,
        28844, 1, null, 1795438077463L, null, null).ended(1, 1795438078846L, "success");
    assertEquals("{\"cpu_end\":1,\"cpu_start\":1,\"cpus\":\"1\",\"end_ms\":1795438078846,"
        + "\"executor\":\"driver\",\"level\":\"core\",\"outcome\":\"success\",\"partition\":0,"
        + "\"pid\":28715,\"slot\":1,\"stage\":0,\"stage_attempt\":0,"
        + "\"start_ms\":1795438077463,\"task\":0,\"tid\":28844}", record.json());
    assertTrue(!record.migrated() && record.ended(0, 1, "success").migrated());
  }

  private static PlacementReport report() {
    ProcessPlacement where = ProcessPlacement.parse(42, "Cpus_allowed_list:\t0-3\n"
        + "Mems_allowed_list:\t0-1\n", "7f00 bind:1 anon=10 N0=2 N1=8 kernelpagesize_kB=4\n");
    return PlacementReport.of("3", "host1", where, CpuSet.of(1), 2, 1, 1795438078846L, "1",
        "slot 0 of node 1 in /tmp/numaspark-affinity (nodes 0-1 allowed)",
        "every thread (40) bound to CPUs 2-3; 0 MB migrated to node(s) 1", host(),
        List.of(worker())).withHost("1", 12.5).withDevices(List.of(
            new DeviceReport("gpu", "0", "0000:3b:00.0", 1, null),
            new DeviceReport("gpu", "7", null, null, "unknown: no gpu 7")),
        new NicReport("eth0", 0, "0000:18:00.0", "route to the driver's address 10.0.0.1",
            null));
  }

  /** A Python worker of the executor: 10 pages, 9 on its home node 1. */
  static PythonProcess worker() {
    return new PythonProcess(43, "worker", "2-3", "0-1", "default",
        Map.of("0", 4096L, "1", 9 * 4096L), 1.5, 10 * 4096L, 1);
  }

  /** A first report's host: two nodes of two 2-thread cores, one package each. */
  static HostTopology host() {
    return new HostTopology(Map.of("0", "0,2", "1", "1,3"),
        Map.of("0", 1L << 30, "1", 1L << 30), List.of("0,2", "1,3"),
        Map.of("0", "0,2", "1", "1,3"),
        Map.of("0", Map.of("0", 10, "1", 21), "1", Map.of("0", 21, "1", 10)));
  }

  @Test
  void placementEventFieldsAreTheContracts() throws IOException {
    JsonNode contract = contract().get("placement_event");
    assertEquals(NumaPlacementEvent.class.getName(), contract.get("event").asText());
    NumaPlacementEvent event = new NumaPlacementEvent(NumaPlacementEvent.VERSION, 5,
        List.of(report().toMap()));
    String json = new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(event);
    assertEquals(names(contract.get("fields"), true), names(json));
    assertTypes(contract.get("fields"), json);
  }

  @Test
  void placementReportFieldsAreTheContracts() throws IOException {
    JsonNode fields = contract().get("placement_report").get("fields");
    PlacementReport report = report();
    assertEquals(names(fields, true), names(report.json()));
    assertTypes(fields, report.json());
    ProcessPlacement where = ProcessPlacement.parse(42, "Cpus_allowed_list:\t0-3\n"
        + "Mems_allowed_list:\t0\n", "");
    PlacementReport bare = PlacementReport.of("3", "host1", where, CpuSet.of(0), 0, 0, 5);
    assertEquals(names(fields, false), names(bare.json())); // below node level: none of them
    // the JVM's 8 of 10 pages on node 1 and its Python worker's 9 of 10: 17 of 20
    assertEquals(0.85, report.localShare(), 1e-9);
    assertEquals(3 * 4096, report.remoteBytes());
    JsonNode python = PluginJson.MAPPER.readTree(report.json()).get("python").get(0);
    assertEquals(Set.of("pid", "role", "cpus", "mems", "policy", "bytes_per_node", "cpu_s",
        "rss_bytes", "threads"), names(python.toString()));
    assertEquals(Map.of("0", 2 * 4096L, "1", 8 * 4096L), report.bytesPerNode());
    // the host's parts by their contract names; a part not read is left out, not null
    JsonNode host = PluginJson.MAPPER.readTree(report.json()).get("host_topology");
    assertEquals(Set.of("nodes", "node_memory_bytes", "cores", "packages", "distances"),
        names(host.toString()));
    assertEquals(21, host.get("distances").get("0").get("1").asInt());
    HostTopology partial = new HostTopology(Map.of("0", "0-3"), null, List.of("0", "1"), null,
        null);
    assertEquals(Set.of("nodes", "cores"), names(PluginJson.line(partial)));
    // the devices and the interface by their contract names; an unknown part left out
    JsonNode line = PluginJson.MAPPER.readTree(report.json());
    assertEquals(Set.of("resource", "address", "pci_busid", "node"),
        names(line.get("devices").get(0).toString()));
    assertEquals(Set.of("resource", "address", "unknown"),
        names(line.get("devices").get(1).toString()));
    assertEquals(Set.of("name", "node", "pci_busid", "route"), names(line.get("nic").toString()));
  }

  @Test
  void theReportTravelsAsPlainValuesAndComesBackWhole() throws IOException {
    PlacementReport report = report();
    Map<String, Object> message = report.toMap();
    assertEquals(names(report.json()), new TreeSet<>(message.keySet()));
    try (ObjectOutputStream out = new ObjectOutputStream(new ByteArrayOutputStream())) {
      out.writeObject(message); // what PluginContext.send does with it
    }
    assertEquals(report, PlacementReport.fromMap(message));
    new AffinityDriverPlugin().receive(message); // no placement file: kept, not written
  }

  @Test
  void aLineThatCannotBeWrittenIsLostWithoutFailingTheTask() {
    assumeTrue(Files.isWritable(Path.of("/dev/full")), "needs /dev/full");
    TaskRecorder recorder = new TaskRecorder(JsonLines.open(Path.of("/dev/full"), "test lines"));
    for (int i = 0; i < 3; i++) {
      recorder.write(fullTask()); // one warning, for the first: the log is not flooded
    }
    assertEquals(3, recorder.lost());
    recorder.close();
    assertEquals(0, TaskRecorder.open(null, "0").lost());
  }
}
