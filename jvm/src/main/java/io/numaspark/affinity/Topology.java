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

  public Topology(List<CpuSet> cores, Map<Integer, CpuSet> nodes) {
    this.cores = List.copyOf(cores);
    this.nodes = Collections.unmodifiableMap(new TreeMap<>(nodes));
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
      if (cores.isEmpty()) { // no Core objects (some exports): one core per PU
        List<Integer> pus = new ArrayList<>();
        collectPus(root, pus);
        for (int pu : pus) {
          cores.add(CpuSet.of(pu));
        }
      }
      return new Topology(cores, nodes);
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
      long word = Long.parseLong(words[i].strip().replace("0x", ""), 16);
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

  static Topology fromSysfs(Path system) throws IOException {
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
    Path nodeDir = system.resolve("node");
    if (Files.isDirectory(nodeDir)) {
      Pattern nodeName = Pattern.compile("node(\\d+)");
      try (Stream<Path> entries = Files.list(nodeDir)) {
        for (Path entry : (Iterable<Path>) entries::iterator) {
          Matcher match = nodeName.matcher(entry.getFileName().toString());
          if (match.matches()) {
            nodes.put(
                Integer.parseInt(match.group(1)),
                CpuSet.parse(Files.readString(entry.resolve("cpulist"))));
          }
        }
      }
    }
    return new Topology(new ArrayList<>(coresByFirst.values()), nodes);
  }
}
