package io.numaspark.affinity.spark.ui;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.numaspark.affinity.spark.PlacementReport;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The NUMA page of one application: the latest placement report of each executor (and of the
 * driver), with its host's nodes from whichever report carried them, served as a small static
 * HTML page ({@code numa-page.html}), its script ({@code numa-page.js}, a file of its own: Spark
 * 4's Content-Security-Policy refuses inline scripts) and the JSON it fetches; nothing comes
 * from anywhere else. The servlet
 * of each Spark line ({@link JakartaNumaServlet}, {@link JavaxNumaServlet}) only hands a path
 * to {@link #respond(String)}, so everything the page says is tested without a server.
 *
 * <p>Fed live by the driver plugin as reports arrive, and in the History Server from the
 * event log's {@code NumaPlacementEvent}s ({@link NumaHistory}).
 */
public final class NumaPage {
  /** The shape of the JSON document: 1. */
  public static final int VERSION = 1;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String HTML = resource("numa-page.html");
  private static final String SCRIPT = resource("numa-page.js");

  private final String application;
  private final String source;
  private final Map<String, PlacementReport> latest = new HashMap<>();
  private final Map<String, Map<String, String>> hostNodes = new HashMap<>();

  /** What one request gets: its status, content type and body. */
  public record Response(int status, String contentType, byte[] body) {}

  /**
   * A page for {@code application} (its name, shown as the title); {@code source} says where
   * the reports come from: {@code live} (the page refreshes itself) or {@code history}.
   */
  public NumaPage(String application, String source) {
    this.application = application;
    this.source = source;
  }

  /** A report, kept when it is the executor's newest; its host's topology kept whenever sent. */
  public synchronized void add(PlacementReport report) {
    String executor = String.valueOf(report.executor());
    PlacementReport before = latest.get(executor);
    if (before == null || before.timeMs() <= report.timeMs()) {
      latest.put(executor, report);
    }
    if (report.hostTopology() != null && report.hostTopology().nodes() != null) {
      hostNodes.put(report.host(), Map.copyOf(report.hostTopology().nodes()));
    }
  }

  /** The NUMA nodes of {@code host} (node to its CPUs), as an executor's first report said. */
  public synchronized void addHostNodes(String host, Map<String, String> nodes) {
    hostNodes.put(host, Map.copyOf(nodes));
  }

  /** Whether no report has arrived. */
  public synchronized boolean isEmpty() {
    return latest.isEmpty();
  }

  /** The JSON document: the page's rows ({@link NumaRow}), the driver first, then by id. */
  public String json() {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("version", VERSION);
    doc.put("application", application);
    doc.put("source", source);
    doc.put("time_ms", System.currentTimeMillis());
    List<Map<String, Object>> rows = new ArrayList<>();
    synchronized (this) {
      latest.values().stream().sorted(Comparator.comparing(NumaPage::order))
          .forEach(r -> rows.add(NumaRow.of(r, hostNodes.get(r.host()))));
    }
    doc.put("executors", rows);
    try {
      return JSON.writeValueAsString(doc);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("the NUMA page's JSON cannot be written", e);
    }
  }

  /** The page's HTML: self-contained, its script {@code page.js} beside it. */
  public static String html() {
    return HTML;
  }

  /** The page's script: it fetches {@code json} beside the page and draws the table. */
  public static String script() {
    return SCRIPT;
  }

  /**
   * The answer for {@code path} under the page's own path: {@code ""} or {@code /} the HTML,
   * {@code /page.js} its script, {@code /json} the JSON, anything else 404.
   */
  public Response respond(String path) {
    String at = path == null ? "" : path;
    if (at.isEmpty() || at.equals("/")) {
      return new Response(200, "text/html; charset=utf-8", html().getBytes(StandardCharsets.UTF_8));
    }
    if (at.equals("/page.js")) {
      return new Response(200, "text/javascript; charset=utf-8",
          script().getBytes(StandardCharsets.UTF_8));
    }
    if (at.equals("/json") || at.equals("/json/")) {
      return new Response(200, "application/json; charset=utf-8",
          json().getBytes(StandardCharsets.UTF_8));
    }
    return new Response(404, "text/plain; charset=utf-8",
        ("no such NUMA page: " + at + "\n").getBytes(StandardCharsets.UTF_8));
  }

  /** The driver first, then executors by number, then any other id by name. */
  private static String order(PlacementReport report) {
    String id = String.valueOf(report.executor());
    if (id.equals("driver")) {
      return "0";
    }
    return id.chars().allMatch(Character::isDigit) && id.length() < 18
        ? String.format("1%018d", Long.parseLong(id)) : "2" + id;
  }

  private static String resource(String name) {
    try (InputStream in = NumaPage.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException(name + " is not in the plugin's jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
