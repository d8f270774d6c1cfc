package io.numaspark.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The PCI functions of a sysfs tree written here ({@link FakeSysfs}: GPUs on nodes 1 and 0, one
 * with numa_node -1, NICs, a console display), and the addresses Spark hands resources out by
 * mapped to them: indexes in PCI bus id order, bus ids in every spelling, device names.
 */
class PciDevicesTest {

  @Test
  void functionsAreClassifiedWithTheirNodes(@TempDir Path root) throws IOException {
    PciDevices pci = PciDevices.read(FakeSysfs.write(root));
    assertEquals(8, pci.devices().size());
    assertEquals(List.of("0000:3b:00.0", "0000:5e:00.0", "0000:af:00.0"),
        pci.ofKind("gpu").stream().map(PciDevices.Device::busid).toList());
    assertEquals("display", pci.find("x", "0000:00:02.0").device().kind()); // not a GPU
    assertNull(pci.find("x", "0000:00:00.0").device().kind()); // a bridge: no kind
    PciDevices.Device gpu = pci.ofKind("gpu").get(0);
    assertEquals(1, gpu.node());
    assertEquals("0302", gpu.pciClass());
    PciDevices.Device noNode = pci.ofKind("gpu").get(2);
    assertNull(noNode.node());
    assertTrue(noNode.unknown().startsWith("numa_node -1"), noNode.unknown());
    PciDevices.Device ib = pci.find("nic", "0000:d8:00.0").device();
    assertEquals("nic", ib.kind());
    assertEquals("numa_node unreadable", ib.unknown());
  }

  @Test
  void addressesNameDevicesByIndexBusIdOrName(@TempDir Path root) throws IOException {
    PciDevices pci = PciDevices.read(FakeSysfs.write(root));
    // nvidia-smi's indexes: the GPUs in PCI bus id order, the ASPEED console not counted
    assertEquals("0000:3b:00.0", pci.find("gpu", "0").device().busid());
    assertEquals("0000:5e:00.0", pci.find("GPU", "1").device().busid());
    assertEquals("0000:af:00.0", pci.find("gpu", "2").device().busid());
    assertTrue(pci.find("gpu", "3").why().startsWith("no gpu 3: "), pci.find("gpu", "3").why());
    assertTrue(pci.find("gpu", "3").why().endsWith("has 3 gpu device(s)"));
    for (String spelled : List.of("0000:3b:00.0", "3b:00.0", "00000000:3B:00.0", " 3B:00.0")) {
      assertEquals("0000:3b:00.0", pci.find("gpu", spelled).device().busid(), spelled);
    }
    PciDevices.Found missing = pci.find("gpu", "0000:99:00.0");
    assertNull(missing.device());
    assertTrue(missing.why().startsWith("no PCI device 0000:99:00.0 in "), missing.why());
    assertTrue(pci.find("fpga", "0").why().startsWith("an index of resource fpga: only "));
    // a NIC by its name, a virtio NIC one level below its function
    assertEquals("0000:18:00.0", pci.find("nic", "eth0").device().busid());
    assertEquals("0000:00:03.0", pci.find("nic", "eth1").device().busid());
    assertEquals(1, pci.find("nic", "eth1").device().node());
    assertTrue(pci.find("nic", "lo").why().contains("not a PCI bus id"), pci.find("nic", "lo")
        .why());
    assertNull(pci.find("nic", "../../etc").device());
  }

  @Test
  void aHostWithoutAPciBusHasNoDevices(@TempDir Path root) throws IOException {
    PciDevices pci = PciDevices.read(root);
    assertTrue(pci.devices().isEmpty());
    assertTrue(pci.find("gpu", "0").why().endsWith("has 0 gpu device(s)"));
    Files.createDirectories(root.resolve("sys/bus/pci/devices/not-a-bus-id"));
    assertTrue(PciDevices.read(root).devices().isEmpty());
  }
}
