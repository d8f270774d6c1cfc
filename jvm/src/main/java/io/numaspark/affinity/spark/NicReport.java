package io.numaspark.affinity.spark;

/**
 * The network interface the executor's traffic leaves by, as its placement report names it
 * ({@code nic}; {@link TrafficInterface} finds it).
 *
 * @param name the interface ({@code eth0}, {@code lo})
 * @param node the NUMA node of the PCI function it hangs off; null when not known
 * @param pciBusid that function; null for a virtual interface
 * @param route how it was found: the route to the driver's address, or the interface holding it
 * @param unknown why its node is not known ({@code virtual: ...}); null when it is
 */
public record NicReport(String name, Integer node, String pciBusid, String route,
    String unknown) {}
