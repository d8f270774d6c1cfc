package io.numaspark.affinity.spark;

/**
 * One device Spark gave the executor, as its placement report names it ({@code devices}, each
 * an object of these fields in snake_case: {@link PluginJson}).
 *
 * @param resource the Spark resource's name ({@code gpu})
 * @param address the address Spark gave it (what the discovery script printed: {@code 0},
 *     {@code 0000:3b:00.0})
 * @param pciBusid the PCI function it names; null when it names none here
 * @param node that function's NUMA node; null when not known
 * @param unknown why the device or its node is not known (null when it is)
 */
public record DeviceReport(String resource, String address, String pciBusid, Integer node,
    String unknown) {}
