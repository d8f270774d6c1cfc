package io.numaspark.affinity.spark;

import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.PciDevices;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The devices Spark gave this executor ({@code PluginContext.resources()}: each resource's
 * addresses, as its discovery script printed them, on any cluster manager), each mapped to its
 * PCI function and NUMA node ({@link PciDevices}). The resources {@code deviceResource} names
 * bind the executor at level node ({@link NodeBinder}: a slot of their node); every resource is
 * reported ({@code devices}). An address that names no device, or a device whose node is not
 * known, is reported with why and binds nothing: the executor is placed as without it.
 *
 * @param reports every address of every resource, in resource then address order
 * @param binding the resource names that bind (from the conf)
 */
record ExecutorDevices(List<DeviceReport> reports, List<String> binding) {

  /** None: no resources, or they could not be read. */
  static ExecutorDevices none() {
    return new ExecutorDevices(List.of(), List.of());
  }

  /**
   * {@code resources} (name to addresses) mapped on the PCI functions under {@code root}
   * ({@code /}: this host); never throws (a failure is a report with why).
   */
  static ExecutorDevices read(Map<String, List<String>> resources, List<String> binding,
      Path root) {
    if (resources == null || resources.isEmpty()) {
      return new ExecutorDevices(List.of(), List.copyOf(binding));
    }
    PciDevices pci = PciDevices.read(root);
    List<DeviceReport> reports = new ArrayList<>();
    new TreeMap<>(resources).forEach((name, addresses) -> {
      for (String address : addresses == null ? List.<String>of() : addresses) {
        reports.add(report(pci, name, address));
      }
    });
    return new ExecutorDevices(List.copyOf(reports), List.copyOf(binding));
  }

  private static DeviceReport report(PciDevices pci, String resource, String address) {
    try {
      PciDevices.Found found = pci.find(resource, address);
      PciDevices.Device device = found.device();
      if (device == null) {
        return new DeviceReport(resource, address, null, null, found.why());
      }
      return new DeviceReport(resource, address, device.busid(), device.node(),
          device.node() == null ? device.unknown() : null);
    } catch (RuntimeException e) {
      return new DeviceReport(resource, address, null, null, "not read: " + e);
    }
  }

  /** The reports of the resources that bind. */
  List<DeviceReport> binds() {
    return reports.stream()
        .filter(r -> binding.contains(r.resource().toLowerCase(Locale.ROOT))).toList();
  }

  /** The known nodes of the devices that bind (empty: bind as without devices). */
  CpuSet nodes() {
    TreeSet<Integer> nodes = new TreeSet<>();
    binds().stream().filter(r -> r.node() != null).forEach(r -> nodes.add(r.node()));
    return CpuSet.of(new ArrayList<>(nodes));
  }

  /** The devices that bind, in words: {@code gpu 0 (0000:3b:00.0) on node 1, ...}. */
  String describe() {
    List<String> parts = new ArrayList<>();
    for (DeviceReport report : binds()) {
      String what = report.resource() + " " + report.address()
          + (report.pciBusid() == null || report.pciBusid().equals(report.address()) ? ""
              : " (" + report.pciBusid() + ")");
      String unknown = report.pciBusid() == null ? ": no such device here (" : ": node unknown (";
      parts.add(report.node() != null ? what + " on node " + report.node()
          : what + unknown + report.unknown() + ")");
    }
    return String.join(", ", parts);
  }

  /** The reports as the placement report carries them; null when there are none. */
  List<DeviceReport> forReport() {
    return reports.isEmpty() ? null : reports;
  }
}
