package io.numaspark.affinity.spark;

import io.numaspark.affinity.PciDevices;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

/**
 * The network interface an executor's traffic leaves by, and the NUMA node it hangs off: the
 * route to the driver's address ({@code spark.driver.host}), the best match of the kernel's
 * routing table ({@code /proc/net/route} for an IPv4 address, {@code /proc/net/ipv6_route}
 * for an IPv6 one: the longest prefix, then the lowest metric), or the interface holding that
 * address when the driver is on this host. Its node is the {@code
 * numa_node} of the PCI function {@code /sys/class/net/IFACE/device} leads to (a virtio NIC
 * sits one level below its PCI function); a virtual interface (loopback, bridge, bond, veth)
 * has none. Advice only: nothing is bound by it. It never throws: what cannot be read is said.
 */
final class TrafficInterface {
  private static final int RTF_UP = 0x1;
  private static final long RTF_REJECT = 0x200; // an unreachable route: no interface sends by it
  private static final String VIRTUAL = "the interface has no NUMA node (virtual: no PCI "
      + "device of its own, as a loopback, bridge, bond, VLAN or veth)";

  private TrafficInterface() {}

  /** The interface towards {@code driverHost} on this host; null when it is unset. */
  static NicReport read(String driverHost) {
    return read(driverHost, Path.of("/"));
  }

  /** The same with {@code /proc} and {@code /sys} under {@code root}; for tests. */
  static NicReport read(String driverHost, Path root) {
    if (driverHost == null || driverHost.isBlank()) {
      return null;
    }
    String what = "the driver " + driverHost.strip();
    try {
      InetAddress to = InetAddress.getByName(driverHost.strip());
      what = "the driver's address " + to.getHostAddress();
      String local = localInterface(to);
      if (local != null) {
        return of(local, "holds " + what + " (the driver is on this host)", root);
      }
      boolean v4 = to instanceof Inet4Address;
      String table = v4 ? "proc/net/route" : "proc/net/ipv6_route";
      List<String> lines = Files.readAllLines(root.resolve(table));
      String iface = v4 ? routeInterface(lines, to) : route6Interface(lines, to);
      if (iface == null) {
        return new NicReport(null, null, null, "to " + what, "no route in /" + table);
      }
      return of(iface, "route to " + what, root);
    } catch (IOException | RuntimeException e) {
      return new NicReport(null, null, null, "to " + what, "not read: " + e);
    }
  }

  /** The interface of this host holding {@code address}; null when none does. */
  private static String localInterface(InetAddress address) throws IOException {
    NetworkInterface holder = NetworkInterface.getByInetAddress(address);
    if (holder != null) {
      return holder.getName();
    }
    if (address.isLoopbackAddress()) { // 127.0.1.1: the local table's, on the loopback
      for (NetworkInterface each : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (each.isLoopback()) {
          return each.getName();
        }
      }
    }
    return null;
  }

  /**
   * The interface of the best route to {@code to} in {@code /proc/net/route}'s lines: up, its
   * destination matching under its mask, the longest mask, then the lowest metric; null when
   * none matches.
   */
  static String routeInterface(List<String> lines, InetAddress to) {
    int address = ByteBuffer.wrap(to.getAddress()).getInt();
    String best = null;
    int bestBits = -1;
    long bestMetric = Long.MAX_VALUE;
    for (String line : lines) {
      String[] column = line.strip().split("\\s+");
      if (column.length < 8 || column[0].equals("Iface")) {
        continue;
      }
      try {
        int destination = hostOrder(column[1]);
        int flags = Integer.parseInt(column[3], 16);
        long metric = Long.parseLong(column[6]);
        int mask = hostOrder(column[7]);
        int bits = Integer.bitCount(mask);
        boolean better = bits > bestBits || bits == bestBits && metric < bestMetric;
        if ((flags & RTF_UP) != 0 && (address & mask) == destination && better) {
          best = column[0];
          bestBits = bits;
          bestMetric = metric;
        }
      } catch (NumberFormatException e) {
        // a line of another shape: skipped
      }
    }
    return best;
  }

  /**
   * The interface of the best route to the IPv6 address {@code to} in {@code
   * /proc/net/ipv6_route}'s lines (destination, its prefix length, source, its prefix length,
   * next hop, metric, reference count, use, flags, interface; addresses in network order, the
   * numbers in hex): up and not a reject route, for any source, its destination matching
   * under its prefix, the longest prefix, then the lowest metric; null when none matches.
   */
  static String route6Interface(List<String> lines, InetAddress to) {
    byte[] address = to.getAddress();
    String best = null;
    int bestBits = -1;
    long bestMetric = Long.MAX_VALUE;
    for (String line : lines) {
      String[] column = line.strip().split("\\s+");
      if (column.length < 10 || column[0].length() != 32) {
        continue;
      }
      try {
        int bits = Integer.parseInt(column[1], 16);
        long metric = Long.parseLong(column[5], 16);
        long flags = Long.parseLong(column[8], 16);
        boolean usable = (flags & RTF_UP) != 0 && (flags & RTF_REJECT) == 0
            && Integer.parseInt(column[3], 16) == 0; // a source-specific route: not ours to know
        boolean better = bits > bestBits || bits == bestBits && metric < bestMetric;
        if (usable && better && matches(address, HexFormat.of().parseHex(column[0]), bits)) {
          best = column[9];
          bestBits = bits;
          bestMetric = metric;
        }
      } catch (IllegalArgumentException e) {
        // a line of another shape: skipped (NumberFormatException is one)
      }
    }
    return best;
  }

  /** Whether the first {@code bits} bits of {@code address} are {@code prefix}'s. */
  private static boolean matches(byte[] address, byte[] prefix, int bits) {
    if (bits > 8 * address.length || prefix.length != address.length) {
      return false;
    }
    for (int bit = 0; bit < bits; bit++) {
      int mask = 0x80 >>> (bit % 8);
      if ((address[bit / 8] & mask) != (prefix[bit / 8] & mask)) {
        return false;
      }
    }
    return true;
  }

  /**
   * An address of {@code /proc/net/route} as a big-endian int: the kernel prints the
   * network-order word as a number in this machine's byte order ({@code 0100A8C0} is
   * 192.168.0.1 on x86).
   */
  private static int hostOrder(String hex) {
    int raw = (int) Long.parseLong(hex, 16);
    return ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? Integer.reverseBytes(raw) : raw;
  }

  /** {@code iface} with the node of the PCI function under {@code root}'s sysfs. */
  static NicReport of(String iface, String route, Path root) {
    Path link = root.resolve("sys/class/net").resolve(iface).resolve("device");
    if (iface.contains("/") || !Files.exists(link)) {
      return new NicReport(iface, null, null, route, VIRTUAL);
    }
    PciDevices.Found found = PciDevices.read(root).under(link, "sys/class/net/" + iface);
    PciDevices.Device device = found.device();
    if (device == null) {
      return new NicReport(iface, null, null, route, found.why());
    }
    return new NicReport(iface, device.node(), device.busid(), route,
        device.node() == null ? device.unknown() : null);
  }
}
