package io.numaspark.affinity;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * What a placement needs of a machine: its cores (each the set of its hardware threads, SMT
 * siblings together) and its NUMA nodes with their CPUs. Read from an hwloc XML file ({@code
 * lstopo-no-graphics --of xml}) or from this machine's sysfs.
 */
public final class Topology {
  private final List<CpuSet> cores;
  private final Map<Integer, CpuSet> nodes;
  private final Map<Integer, Map<Integer, Integer>> distances;

  public Topology(List<CpuSet> cores, Map<Integer, CpuSet> nodes) {
    this(cores, nodes, Map.of());
  }

  /**
   * With the NUMA distances (node to node to the firmware's relative latency, 10 for local);
   * empty when unknown.
   */
  public Topology(List<CpuSet> cores, Map<Integer, CpuSet> nodes,
      Map<Integer, Map<Integer, Integer>> distances) {
    this.cores = List.copyOf(cores);
    this.nodes = Collections.unmodifiableMap(new TreeMap<>(nodes));
    Map<Integer, Map<Integer, Integer>> copy = new TreeMap<>();
    distances.forEach((from, row) -> copy.put(from, Collections.unmodifiableMap(
        new TreeMap<>(row))));
    this.distances = Collections.unmodifiableMap(copy);
  }

  /**
   * The distance from node {@code from} to node {@code to} (sysfs {@code nodeN/distance}, hwloc's
   * NUMALatency matrix): 10 from a node to itself, 20 to a node one hop away when the firmware
   * does not say (or gives no matrix).
   */
  public int distance(int from, int to) {
    Integer known = distances.getOrDefault(from, Map.of()).get(to);
    if (known != null) {
      return known;
    }
    return from == to ? 10 : 20;
  }

  /** The distance matrix as read (empty when unknown). */
  public Map<Integer, Map<Integer, Integer>> distances() {
    return distances;
  }

  /** Cores in hwloc's logical order (sysfs: by their first CPU). */
  public List<CpuSet> cores() {
    return cores;
  }

  /** NUMA node OS index to its CPUs (memory-only nodes have an empty set). */
  public Map<Integer, CpuSet> nodes() {
    return nodes;
  }

  public CpuSet cpus() {
    CpuSet all = CpuSet.of();
    for (CpuSet core : cores) {
      all = all.or(core);
    }
    return all;
  }

  /** The core holding {@code cpu}, or null. */
  public CpuSet coreOf(int cpu) {
    for (CpuSet core : cores) {
      if (core.contains(cpu)) {
        return core;
      }
    }
    return null;
  }

  /** Reads an hwloc XML export: Core objects' PU children, NUMANode objects' cpusets. */
  public static Topology fromHwlocXml(Path path) throws IOException {
    try (InputStream in = Files.newInputStream(path)) {
      DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
      factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", false);
      factory.setFeature(
          "http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
      factory.setExpandEntityReferences(false);
      Element root = factory.newDocumentBuilder().parse(in).getDocumentElement();
      List<CpuSet> cores = new ArrayList<>();
      Map<Integer, CpuSet> nodes = new TreeMap<>();
      walk(root, cores, nodes);
      Map<Integer, Map<Integer, Integer>> distances = hwlocDistances(root);
      if (cores.isEmpty()) { // no Core objects (some exports): one core per PU
        List<Integer> pus = new ArrayList<>();
        collectPus(root, pus);
        for (int pu : pus) {
          cores.add(CpuSet.of(pu));
        }
      }
      return new Topology(cores, nodes, distances);
    } catch (javax.xml.parsers.ParserConfigurationException | org.xml.sax.SAXException e) {
      throw new IOException(path + " is not an hwloc XML file: " + e.getMessage(), e);
    }
  }

  private static void walk(Element object, List<CpuSet> cores, Map<Integer, CpuSet> nodes) {
    String type = object.getAttribute("type");
    if ("Core".equals(type)) {
      List<Integer> pus = new ArrayList<>();
      collectPus(object, pus);
      if (!pus.isEmpty()) {
        cores.add(CpuSet.of(pus));
      }
      return;
    }
    if ("NUMANode".equals(type)) {
      int index = Integer.parseInt(object.getAttribute("os_index"));
      nodes.put(index, hwlocMask(object.getAttribute("cpuset")));
    }
    for (Node child = object.getFirstChild(); child != null; child = child.getNextSibling()) {
      if (child instanceof Element element && "object".equals(element.getTagName())) {
        walk(element, cores, nodes);
      }
    }
  }

  /**
   * hwloc 2's NUMA latency matrix ({@code <distances2 type="NUMANode" name="NUMALatency"
   * indexing="os">}: OS indexes, then the values row by row); empty when there is none.
   */
  private static Map<Integer, Map<Integer, Integer>> hwlocDistances(Element root) {
    Map<Integer, Map<Integer, Integer>> matrix = new TreeMap<>();
    org.w3c.dom.NodeList lists = root.getElementsByTagName("distances2");
    for (int i = 0; i < lists.getLength(); i++) {
      Element list = (Element) lists.item(i);
      if (!"NUMANode".equals(list.getAttribute("type"))
          || !"os".equals(list.getAttribute("indexing"))
          || !(list.getAttribute("name").isEmpty()
              || "NUMALatency".equals(list.getAttribute("name")))) {
        continue;
      }
      List<Integer> indexes = numbers(list.getElementsByTagName("indexes"));
      List<Integer> values = numbers(list.getElementsByTagName("u64values"));
      int n = indexes.size();
      if (n == 0 || values.size() != n * n) {
        continue;
      }
      for (int from = 0; from < n; from++) {
        Map<Integer, Integer> row = new TreeMap<>();
        for (int to = 0; to < n; to++) {
          row.put(indexes.get(to), values.get(from * n + to));
        }
        matrix.put(indexes.get(from), row);
      }
      return matrix;
    }
    return matrix;
  }

  private static List<Integer> numbers(org.w3c.dom.NodeList elements) {
    List<Integer> numbers = new ArrayList<>();
    for (int i = 0; i < elements.getLength(); i++) {
      for (String word : elements.item(i).getTextContent().strip().split("\\s+")) {
        if (!word.isEmpty()) {
          numbers.add(Integer.parseInt(word));
        }
      }
    }
    return numbers;
  }

  private static void collectPus(Element object, List<Integer> pus) {
    if ("PU".equals(object.getAttribute("type"))) {
      pus.add(Integer.parseInt(object.getAttribute("os_index")));
      return;
    }
    for (Node child = object.getFirstChild(); child != null; child = child.getNextSibling()) {
      if (child instanceof Element element && "object".equals(element.getTagName())) {
        collectPus(element, pus);
      }
    }
  }

  /** hwloc's bitmap text: 32-bit hex words, most significant first ("0x00ff00ff,0x0000000f"). */
  static CpuSet hwlocMask(String text) {
    if (text == null || text.isEmpty()) {
      return CpuSet.of();
    }
    String[] words = text.split(",");
    List<Integer> cpus = new ArrayList<>();
    for (int i = 0; i < words.length; i++) {
      String hex = words[i].strip().replace("0x", "");
      long word = hex.isEmpty() ? 0 : Long.parseLong(hex, 16); // ",," is a zero word
      int base = (words.length - 1 - i) * 32;
      for (int bit = 0; bit < 32; bit++) {
        if ((word >> bit & 1) != 0) {
          cpus.add(base + bit);
        }
      }
    }
    return CpuSet.of(cpus);
  }

  /** Reads this machine: /sys/devices/system/cpu/cpuN/topology and .../node/nodeN/cpulist. */
  public static Topology fromSysfs() throws IOException {
    return fromSysfs(Path.of("/sys/devices/system"));
  }

  /** Reads the sysfs tree {@code system} ({@code /sys/devices/system}, or a copy in a test). */
  public static Topology fromSysfs(Path system) throws IOException {
    Pattern cpuName = Pattern.compile("cpu(\\d+)");
    Map<Integer, CpuSet> coresByFirst = new TreeMap<>();
    try (Stream<Path> entries = Files.list(system.resolve("cpu"))) {
      for (Path entry : (Iterable<Path>) entries::iterator) {
        Matcher match = cpuName.matcher(entry.getFileName().toString());
        Path siblings = entry.resolve("topology/thread_siblings_list");
        if (match.matches() && Files.exists(siblings)) {
          CpuSet core = CpuSet.parse(Files.readString(siblings));
          coresByFirst.put(core.toArray()[0], core);
        }
      }
    }
    Map<Integer, CpuSet> nodes = new TreeMap<>();
    Map<Integer, Map<Integer, Integer>> distances = new TreeMap<>();
    Map<Integer, String> rows = new TreeMap<>();
    Path nodeDir = system.resolve("node");
    if (Files.isDirectory(nodeDir)) {
      Pattern nodeName = Pattern.compile("node(\\d+)");
      try (Stream<Path> entries = Files.list(nodeDir)) {
        for (Path entry : (Iterable<Path>) entries::iterator) {
          Matcher match = nodeName.matcher(entry.getFileName().toString());
          if (match.matches()) {
            int node = Integer.parseInt(match.group(1));
            nodes.put(node, CpuSet.parse(Files.readString(entry.resolve("cpulist"))));
            Path distance = entry.resolve("distance");
            if (Files.exists(distance)) { // one row: to node 0, 1, ... of the online nodes
              distances.put(node, Map.of());
              rows.put(node, Files.readString(distance).strip());
            }
          }
        }
      }
    }
    // a row lists the distances to the online nodes in order (node numbers may have gaps)
    List<Integer> online = new ArrayList<>(nodes.keySet());
    rows.forEach((node, row) -> {
      String[] words = row.split("\\s+");
      if (words.length == online.size()) {
        Map<Integer, Integer> to = new TreeMap<>();
        for (int i = 0; i < words.length; i++) {
          to.put(online.get(i), Integer.parseInt(words[i]));
        }
        distances.put(node, to);
      } else {
        distances.remove(node);
      }
    });
    return new Topology(new ArrayList<>(coresByFirst.values()), nodes, distances);
  }
}
