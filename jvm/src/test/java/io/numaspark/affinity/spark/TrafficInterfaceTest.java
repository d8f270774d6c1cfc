package io.numaspark.affinity.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.numaspark.affinity.FakeSysfs;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The interface an executor's traffic to the driver leaves by: the best route of a {@code
 * /proc/net/route} written here as an x86 kernel prints it (addresses in little-endian hex),
 * or of a {@code /proc/net/ipv6_route} (addresses in network order) for an IPv6 driver, and
 * its node from a sysfs tree written here ({@link FakeSysfs}).
 */
class TrafficInterfaceTest {
  /** default via eth0; 10.1.0.0/16 on ib0; 10.1.2.0/24 on eth1 (metric 0) and lo (5); a
   *  10.1.2.3/32 that is down. */
  private static final List<String> ROUTES = List.of(
      "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT",
      "eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0",
      "ib0\t0000010A\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0",
      "lo\t0002010A\t00000000\t0001\t0\t0\t5\t00FFFFFF\t0\t0\t0",
      "eth1\t0002010A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0",
      "eth9\t0302010A\t00000000\t0000\t0\t0\t0\tFFFFFFFF\t0\t0\t0");

  /** The same routes in IPv6, as the kernel prints them (this machine's shape: a local
   *  route, multicast, and the unreachable default of the loopback): default via eth0;
   *  fd00:1::/32 on ib0; fd00:1:2::/64 on eth1 (metric 0) and lo (5); a fd00:1:2::3/128 that is
   *  down; a fd00:1:2::4/128 from a source prefix only (source-specific, not taken). */
  private static final List<String> ROUTES6 = List.of(
      "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
          + "fd000000000000000000000000000001 00000400 00000003 00000000 00000003     eth0",
      "fd000001000000000000000000000000 20 00000000000000000000000000000000 00 "
          + "00000000000000000000000000000000 00000100 00000001 00000000 00000001      ib0",
      "fd000001000200000000000000000000 40 00000000000000000000000000000000 00 "
          + "00000000000000000000000000000000 00000005 00000001 00000000 00000001       lo",
      "fd000001000200000000000000000000 40 00000000000000000000000000000000 00 "
          + "00000000000000000000000000000000 00000000 00000001 00000000 00000001     eth1",
      "fd000001000200000000000000000003 80 00000000000000000000000000000000 00 "
          + "00000000000000000000000000000000 00000000 00000001 00000000 00000000     eth9",
      "fd000001000200000000000000000004 80 fd000009000000000000000000000000 40 "
          + "00000000000000000000000000000000 00000000 00000001 00000000 00000001     eth8",
      "fd000000000000000000000000000002 80 00000000000000000000000000000000 00 "
          + "00000000000000000000000000000000 00000000 00000004 00000000 80200001     eth0",
      "ff000000000000000000000000000000 08 00000000000000000000000000000000 00 "
          + "00000000000000000000000000000000 00000100 00000002 00000000 00000001     eth0",
      "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
          + "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo");

  private static String route6(String to) throws IOException {
    return TrafficInterface.route6Interface(ROUTES6, InetAddress.getByName(to));
  }

  private static String route(String to) throws IOException {
    return TrafficInterface.routeInterface(ROUTES, InetAddress.getByName(to));
  }

  @Test
  void theBestRouteIsTheLongestPrefixThenTheLowestMetric() throws IOException {
    assumeTrue(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN, "an x86 kernel's file");
    assertEquals("eth1", route("10.1.2.3")); // /24 of metric 0; the /32 is down
    assertEquals("ib0", route("10.1.9.9"));
    assertEquals("eth0", route("8.8.8.8")); // the default route
    assertNull(TrafficInterface.routeInterface(ROUTES.subList(0, 1),
        InetAddress.getByName("8.8.8.8")));
  }

  @Test
  void anIpv6DriversRouteIsTheLongestPrefixThenTheLowestMetric() throws IOException {
    assertEquals("eth1", route6("fd00:1:2::3")); // /64 of metric 0; the /128 is down
    assertEquals("eth1", route6("fd00:1:2::4")); // the /128 is for one source prefix only
    assertEquals("ib0", route6("fd00:1:9::9"));
    assertEquals("eth0", route6("fd00::2")); // the address's local route: its interface
    assertEquals("eth0", route6("2001:db8::1")); // the default route, not lo's unreachable
    assertNull(TrafficInterface.route6Interface(ROUTES6.subList(8, 9),
        InetAddress.getByName("2001:db8::1"))); // only the reject route: none
    assertNull(TrafficInterface.route6Interface(List.of("Iface\tDestination", ""),
        InetAddress.getByName("2001:db8::1")));
  }

  @Test
  void thisMachinesIpv6DefaultRouteIsRead() throws IOException {
    Path table = Path.of("/proc/net/ipv6_route");
    assumeTrue(Files.isReadable(table), "this machine has IPv6");
    List<String> lines = Files.readAllLines(table);
    String viaDefault = lines.stream().map(l -> l.strip().split("\\s+"))
        .filter(c -> c.length > 9 && c[0].equals("0".repeat(32)) && c[1].equals("00")
            && (Long.parseLong(c[8], 16) & 0x1) != 0 && (Long.parseLong(c[8], 16) & 0x200) == 0)
        .min(java.util.Comparator.comparingLong(c -> Long.parseLong(c[5], 16)))
        .map(c -> c[9]).orElse(null);
    assumeTrue(viaDefault != null, "this machine has an IPv6 default route");
    // the documentation prefix (RFC 3849): no route of its own anywhere
    assertEquals(viaDefault, TrafficInterface.route6Interface(lines,
        InetAddress.getByName("2001:db8::9")));
  }

  @Test
  void theInterfacesNodeIsItsPciFunctions(@TempDir Path root) throws IOException {
    FakeSysfs.write(root);
    NicReport eth0 = TrafficInterface.of("eth0", "route to x", root);
    assertEquals(new NicReport("eth0", 0, "0000:18:00.0", "route to x", null), eth0);
    NicReport virtio = TrafficInterface.of("eth1", "route to x", root);
    assertEquals(1, virtio.node()); // one level below its function
    assertEquals("0000:00:03.0", virtio.pciBusid());
    NicReport ib = TrafficInterface.of("ib0", "r", root);
    assertNull(ib.node());
    assertEquals("numa_node unreadable", ib.unknown());
    NicReport lo = TrafficInterface.of("lo", "r", root);
    assertNull(lo.node());
    assertTrue(lo.unknown().startsWith("the interface has no NUMA node (virtual"), lo.unknown());
    assertEquals("{\"name\":\"eth0\",\"node\":0,\"pci_busid\":\"0000:18:00.0\",\"route\":"
        + "\"route to x\"}", PluginJson.line(eth0));
  }

  @Test
  void thisMachinesDefaultRouteIsRead() throws IOException {
    List<String> lines = Files.readAllLines(Path.of("/proc/net/route"));
    String viaDefault = lines.stream().skip(1).map(l -> l.strip().split("\\s+"))
        .filter(c -> c.length > 7 && c[1].equals("00000000") && c[7].equals("00000000")
            && (Integer.parseInt(c[3], 16) & 1) != 0)
        .min(java.util.Comparator.comparingLong(c -> Long.parseLong(c[6])))
        .map(c -> c[0]).orElse(null);
    assumeTrue(viaDefault != null, "this machine has a default route");
    // TEST-NET-3: no route of its own anywhere, so the default route's interface
    assertEquals(viaDefault, TrafficInterface.routeInterface(lines,
        InetAddress.getByName("203.0.113.9")));
  }

  @Test
  void theDriversAddressIsRoutedOrHeldHere(@TempDir Path root) throws IOException {
    assumeTrue(ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN, "an x86 kernel's file");
    FakeSysfs.write(root);
    Files.createDirectories(root.resolve("proc/net"));
    Files.write(root.resolve("proc/net/route"), ROUTES);
    assumeTrue(java.net.NetworkInterface.getByInetAddress(InetAddress.getByName("10.1.2.3"))
        == null, "10.1.2.3 is not an address of this machine");
    NicReport routed = TrafficInterface.read("10.1.2.3", root);
    assertEquals(new NicReport("eth1", 1, "0000:00:03.0", "route to the driver's address "
        + "10.1.2.3", null), routed);
    NicReport local = TrafficInterface.read("127.0.0.1", root); // the driver on this host
    assertEquals("lo", local.name());
    assertEquals("holds the driver's address 127.0.0.1 (the driver is on this host)",
        local.route());
    assertTrue(local.unknown().startsWith("the interface has no NUMA node"), local.unknown());
    assertNull(TrafficInterface.read(null, root));
    NicReport unreadable = TrafficInterface.read("10.1.2.3", root.resolve("nowhere"));
    assertTrue(unreadable.unknown().startsWith("not read: "), unreadable.unknown());
  }

  @Test
  void anIpv6DriversAddressIsRoutedByTheIpv6Table(@TempDir Path root) throws IOException {
    FakeSysfs.write(root);
    Files.createDirectories(root.resolve("proc/net"));
    Files.write(root.resolve("proc/net/ipv6_route"), ROUTES6);
    assumeTrue(java.net.NetworkInterface.getByInetAddress(InetAddress.getByName("fd00:1:2::3"))
        == null, "fd00:1:2::3 is not an address of this machine");
    NicReport routed = TrafficInterface.read("fd00:1:2::3", root);
    assertEquals(new NicReport("eth1", 1, "0000:00:03.0", "route to the driver's address "
        + "fd00:1:2:0:0:0:0:3", null), routed);
    assertEquals("ib0", TrafficInterface.read("fd00:1:9::9", root).name());
    Files.write(root.resolve("proc/net/ipv6_route"), ROUTES6.subList(8, 9));
    NicReport none = TrafficInterface.read("fd00:1:2::3", root);
    assertNull(none.name());
    assertEquals("no route in /proc/net/ipv6_route", none.unknown());
  }
}
