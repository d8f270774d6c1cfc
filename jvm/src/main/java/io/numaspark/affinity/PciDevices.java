package io.numaspark.affinity;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A host's PCI functions as sysfs shows them ({@code ROOT/sys/bus/pci/devices/BUSID/{class,
 * vendor,numa_node}}), classified as numaspark's Python side does (topology/devices.py, its
 * sysfs part), and the addresses Spark hands a resource out by mapped to them.
 *
 * <p>Kinds, by PCI class: {@code gpu} (3D 0302, other display 0380, and a VGA controller 0300
 * of NVIDIA's; any other VGA controller is a server's console, {@code display}), {@code
 * accelerator} (12xx), {@code nic} (02xx, and InfiniBand 0c06), {@code nvme} (0108); null for
 * the rest (bridges, SATA, USB). A function's node is its {@code numa_node}; -1 or unreadable is
 * none known (null), with why.
 *
 * <p>An address is a PCI bus id ({@code 0000:3b:00.0}, {@code 3b:00.0}, nvidia-smi's {@code
 * 00000000:3B:00.0}); an index {@code i} of a numbered kind ({@code gpu}, {@code accelerator}):
 * the i-th device of that kind in PCI bus id order (nvidia-smi's indexes follow it, and so do
 * the scripts Spark's GPU users run); or a device's name ({@code eth0}, {@code nvme0n1}, as
 * numaspark's plans hand NICs and drives out): the PCI function its sysfs entry hangs off.
 */
public final class PciDevices {
  /** Spark resource names whose addresses may be indexes, each the kind it counts. */
  public static final Map<String, String> NUMBERED = Map.of("gpu", "gpu",
      "accelerator", "accelerator");
  private static final Pattern BUSID = Pattern.compile(
      "^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])$");
  private static final Pattern NAME = Pattern.compile("^[A-Za-z0-9_][A-Za-z0-9_.:-]*$");
  private static final String NVIDIA = "10de";

  /**
   * One PCI function.
   *
   * @param busid its PCI bus id, {@code 0000:3b:00.0}
   * @param pciClass its class, four hex digits ({@code 0302})
   * @param vendor its vendor id, four hex digits
   * @param kind gpu, display, accelerator, nic, nvme; null for a kind that does not matter here
   * @param node its NUMA node; null when none is known
   * @param unknown why its node is not known (null when it is)
   */
  public record Device(String busid, String pciClass, String vendor, String kind, Integer node,
      String unknown) {}

  /** A device an address names, or null and why none. */
  public record Found(Device device, String why) {
    static Found none(String why) {
      return new Found(null, why);
    }
  }

  private final Path root;
  private final Map<String, Device> byBusid;

  private PciDevices(Path root, Map<String, Device> byBusid) {
    this.root = root;
    this.byBusid = Collections.unmodifiableMap(byBusid);
  }

  /** The PCI functions under {@code root} ({@code /}: this host); none where it has no bus. */
  public static PciDevices read(Path root) {
    Map<String, Device> found = new TreeMap<>();
    Path bus = root.resolve("sys/bus/pci/devices");
    if (Files.isDirectory(bus)) {
      try (DirectoryStream<Path> entries = Files.newDirectoryStream(bus)) {
        for (Path entry : entries) {
          Device device = device(entry);
          if (device != null) {
            found.put(device.busid(), device);
          }
        }
      } catch (IOException | RuntimeException e) {
        // what was read stands: an address past it is said to be unknown
      }
    }
    return new PciDevices(root, found);
  }

  private static Device device(Path entry) {
    String busid = entry.getFileName().toString().toLowerCase(Locale.ROOT);
    String pciClass = hex(readText(entry.resolve("class")), 4);
    if (pciClass == null || !BUSID.matcher(busid).matches()) {
      return null;
    }
    String vendor = hex(readText(entry.resolve("vendor")), 4);
    String text = readText(entry.resolve("numa_node"));
    Integer node = null;
    String unknown = null;
    try {
      int value = Integer.parseInt(text == null ? "" : text);
      if (value >= 0) {
        node = value;
      } else {
        unknown = "numa_node " + value + ": the firmware gives it no node";
      }
    } catch (NumberFormatException e) {
      unknown = "numa_node unreadable";
    }
    return new Device(busid, pciClass, vendor, classify(pciClass, vendor), node, unknown);
  }

  /** The kind of a PCI function by its class and vendor (module comment); null: none here. */
  public static String classify(String pciClass, String vendor) {
    if (pciClass.equals("0302") || pciClass.equals("0380")) {
      return "gpu";
    }
    if (pciClass.equals("0300")) {
      return NVIDIA.equals(vendor) ? "gpu" : "display";
    }
    if (pciClass.startsWith("12")) {
      return "accelerator";
    }
    if (pciClass.startsWith("02") || pciClass.equals("0c06")) {
      return "nic";
    }
    return pciClass.equals("0108") ? "nvme" : null;
  }

  /** Every function, in PCI bus id order. */
  public List<Device> devices() {
    return List.copyOf(byBusid.values());
  }

  /** The functions of {@code kind}, in PCI bus id order. */
  public List<Device> ofKind(String kind) {
    return byBusid.values().stream().filter(d -> kind.equals(d.kind())).toList();
  }

  /** The device {@code address} of Spark resource {@code resource} names (module comment). */
  public Found find(String resource, String address) {
    String text = address == null ? "" : address.strip();
    Matcher busid = BUSID.matcher(text);
    if (busid.matches()) {
      String id = busid(busid);
      Device device = byBusid.get(id);
      return device != null ? new Found(device, null)
          : Found.none("no PCI device " + id + " in " + bus());
    }
    if (text.chars().allMatch(Character::isDigit) && !text.isEmpty()) {
      String kind = NUMBERED.get(resource.toLowerCase(Locale.ROOT));
      if (kind == null) {
        return Found.none("an index of resource " + resource + ": only " + NUMBERED.keySet()
            + " are numbered (else give PCI bus ids)");
      }
      List<Device> all = ofKind(kind);
      int index = Integer.parseInt(text.length() > 6 ? "999999" : text);
      return index < all.size() ? new Found(all.get(index), null)
          : Found.none("no " + kind + " " + index + ": " + bus() + " has " + all.size()
              + " " + kind + " device(s)");
    }
    if (NAME.matcher(text).matches() && !text.contains("..")) {
      for (String place : List.of("sys/class/net", "sys/block", "sys/class/nvme")) {
        Path link = root.resolve(place).resolve(text).resolve("device");
        if (Files.exists(link)) {
          return under(link, place + "/" + text);
        }
      }
    }
    return Found.none("'" + text + "' is not a PCI bus id, an index or a device's name here");
  }

  /** The PCI function a sysfs {@code device} link leads to or sits below. */
  public Found under(Path link, String what) {
    try {
      for (Path dir = link.toRealPath(); dir != null; dir = dir.getParent()) {
        Path name = dir.getFileName();
        Device device = name == null ? null : byBusid.get(name.toString());
        if (device != null) {
          return new Found(device, null);
        }
      }
    } catch (IOException e) {
      return Found.none(what + ": " + e.getMessage());
    }
    return Found.none(what + " hangs off no PCI function");
  }

  private String bus() {
    return root.resolve("sys/bus/pci/devices").toString();
  }

  private static String busid(Matcher found) {
    long domain = found.group(1) == null ? 0 : Long.parseLong(found.group(1), 16);
    return String.format(Locale.ROOT, "%04x:%s:%s.%s", domain, found.group(2), found.group(3),
        found.group(4)).toLowerCase(Locale.ROOT);
  }

  /** The first {@code digits} hex digits of a sysfs value ({@code 0x030200}: 0302). */
  private static String hex(String text, int digits) {
    if (text == null) {
      return null;
    }
    String bare = text.toLowerCase(Locale.ROOT).replaceFirst("^0x", "");
    return bare.length() >= digits ? bare.substring(0, digits) : null;
  }

  private static String readText(Path file) {
    try {
      return Files.readString(file).strip();
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** The devices as a list for tests and logs. */
  @Override
  public String toString() {
    List<String> parts = new ArrayList<>();
    byBusid.values().forEach(d -> parts.add(d.busid() + " " + d.kind() + " node " + d.node()));
    return parts.toString();
  }
}
