package io.numaspark.affinity;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A host's PCI functions and network interfaces written the way the kernel lays them out (the
 * functions under {@code sys/devices/pci0000:00}, {@code sys/bus/pci/devices} and {@code
 * sys/class/net} linking to them), for tests: this machine has no GPU and one node.
 *
 * <ul>
 *   <li>{@code 0000:00:00.0}: a host bridge (class 0600), of no kind here;
 *   <li>{@code 0000:00:02.0}: an ASPEED console display (VGA 0300, not NVIDIA's), node 0;
 *   <li>{@code 0000:00:03.0}: a virtio NIC (0200), node 1; {@code eth1} one level below it
 *       ({@code virtio2/net/eth1}), as a virtio function keeps it;
 *   <li>{@code 0000:18:00.0}: an Ethernet NIC, node 0, {@code eth0};
 *   <li>{@code 0000:3b:00.0}: an NVIDIA GPU (3D 0302), node 1;
 *   <li>{@code 0000:5e:00.0}: an NVIDIA GPU, node 0;
 *   <li>{@code 0000:af:00.0}: an NVIDIA GPU whose numa_node is -1;
 *   <li>{@code 0000:d8:00.0}: an InfiniBand NIC (0207) whose numa_node cannot be read, {@code
 *       ib0};
 *   <li>{@code lo}: the loopback, no device.
 * </ul>
 */
public final class FakeSysfs {
  private FakeSysfs() {}

  /** Writes the tree under {@code root} (as if it were {@code /}); returns {@code root}. */
  public static Path write(Path root) throws IOException {
    function(root, "0000:00:00.0", "0x060000", "0x8086", "-1");
    function(root, "0000:00:02.0", "0x030000", "0x1a03", "0");
    Path virtio = function(root, "0000:00:03.0", "0x020000", "0x1af4", "1");
    function(root, "0000:18:00.0", "0x020000", "0x8086", "0");
    function(root, "0000:3b:00.0", "0x030200", "0x10de", "1");
    function(root, "0000:5e:00.0", "0x030200", "0x10de", "0");
    function(root, "0000:af:00.0", "0x030200", "0x10de", "-1");
    function(root, "0000:d8:00.0", "0x020700", "0x15b3", null);
    net(root, "eth0", virtio.resolveSibling("0000:18:00.0"));
    net(root, "eth1", Files.createDirectories(virtio.resolve("virtio2")));
    net(root, "ib0", virtio.resolveSibling("0000:d8:00.0"));
    net(root, "lo", null);
    return root;
  }

  private static Path function(Path root, String busid, String pciClass, String vendor,
      String node) throws IOException {
    Path dir = Files.createDirectories(root.resolve("sys/devices/pci0000:00").resolve(busid));
    Files.writeString(dir.resolve("class"), pciClass + "\n");
    Files.writeString(dir.resolve("vendor"), vendor + "\n");
    if (node != null) {
      Files.writeString(dir.resolve("numa_node"), node + "\n");
    }
    Path bus = Files.createDirectories(root.resolve("sys/bus/pci/devices"));
    Files.createSymbolicLink(bus.resolve(busid), dir);
    return dir;
  }

  /** {@code sys/class/net/NAME}, its {@code device} link to {@code device} (null: virtual). */
  private static void net(Path root, String name, Path device) throws IOException {
    Path dir = Files.createDirectories(root.resolve("sys/class/net").resolve(name));
    if (device != null) {
      Files.createSymbolicLink(dir.resolve("device"), device);
    }
  }
}
