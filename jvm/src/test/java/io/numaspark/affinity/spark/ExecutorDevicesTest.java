package io.numaspark.affinity.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.numaspark.affinity.CpuSet;
import io.numaspark.affinity.FakeSysfs;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The resources Spark gave an executor, mapped on a sysfs tree written here ({@link FakeSysfs}:
 * GPU 0 on node 1, GPU 1 on node 0, GPU 2 with numa_node -1): what binds, what is reported,
 * and the conf key that says which resources bind.
 */
class ExecutorDevicesTest {

  @Test
  void eachAddressIsReportedAndTheKnownNodesBind(@TempDir Path root) throws IOException {
    FakeSysfs.write(root);
    ExecutorDevices devices = ExecutorDevices.read(Map.of("gpu", List.of("0", "2"),
        "fpga", List.of("slot-a")), List.of("gpu"), root);
    assertEquals(CpuSet.of(1), devices.nodes()); // GPU 2's node is not known: it binds nothing
    assertEquals(List.of("fpga", "gpu", "gpu"), devices.reports().stream()
        .map(DeviceReport::resource).toList());
    DeviceReport fpga = devices.reports().get(0);
    assertNull(fpga.pciBusid());
    assertTrue(fpga.unknown().startsWith("'slot-a' is not a PCI bus id"),
        fpga.unknown());
    assertEquals(new DeviceReport("gpu", "0", "0000:3b:00.0", 1, null),
        devices.reports().get(1));
    assertEquals("gpu 0 (0000:3b:00.0) on node 1, gpu 2 (0000:af:00.0): node unknown "
        + "(numa_node -1: the firmware gives it no node)", devices.describe());
    assertEquals("gpu 7: no such device here (no gpu 7: " + root.resolve("sys/bus/pci/devices")
        + " has 3 gpu device(s))", ExecutorDevices.read(Map.of("gpu", List.of("7")),
        List.of("gpu"), root).describe());
    assertEquals("{\"address\":\"0\",\"node\":1,\"pci_busid\":\"0000:3b:00.0\",\"resource\":"
        + "\"gpu\"}", PluginJson.line(devices.reports().get(1)));
    // two nodes: both bind; another resource named by the conf binds too
    assertEquals(CpuSet.of(0, 1), ExecutorDevices.read(Map.of("gpu", List.of("0", "1")),
        List.of("gpu"), root).nodes());
    assertEquals(CpuSet.of(0), ExecutorDevices.read(Map.of("nic", List.of("eth0")),
        List.of("gpu", "nic"), root).nodes());
    assertEquals(CpuSet.of(), ExecutorDevices.read(Map.of("nic", List.of("eth0")),
        List.of("gpu"), root).nodes()); // reported, not bound by
    assertNull(ExecutorDevices.read(Map.of(), List.of("gpu"), root).forReport());
  }

  @Test
  void theResourcesThatBindAreAConfKey() {
    String key = AffinityConf.Key.DEVICE_RESOURCE.key();
    assertEquals(List.of("gpu"), AffinityConf.from(Map.of(), name -> null).deviceResources());
    assertEquals(List.of("gpu", "nic"), AffinityConf.from(Map.of(key, " GPU, nic "),
        name -> null).deviceResources());
    assertEquals(List.of(), AffinityConf.from(Map.of(key, "none"), name -> null)
        .deviceResources());
    List<String> warnings = new java.util.ArrayList<>();
    AffinityConf bad = AffinityConf.parse(Map.of(key, "gpu;nic"), name -> null,
        (problem, instead) -> warnings.add(problem + "; " + instead));
    assertEquals(List.of("gpu"), bad.deviceResources());
    assertEquals(List.of(key + " 'gpu;nic': give Spark resource names, comma-separated (gpu, "
        + "or none); using gpu"), warnings);
  }
}
