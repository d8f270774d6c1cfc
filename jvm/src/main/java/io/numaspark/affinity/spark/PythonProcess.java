package io.numaspark.affinity.spark;

import java.util.Map;

/**
 * One Python process of the executor, as its placement report lists it (the shape numaspark
 * records under each JVM: {@code python} in {@code jvm/contract.json}).
 *
 * @param pid its process
 * @param role daemon, worker or driver
 * @param cpus the CPUs its main thread may run on
 * @param mems the memory nodes its cpuset allows
 * @param policy the memory policy of most of its mappings
 * @param bytesPerNode its resident bytes on each node
 * @param cpuS its user and system CPU time (all threads), seconds
 * @param rssBytes its resident set
 * @param threads its threads
 */
public record PythonProcess(long pid, String role, String cpus, String mems, String policy,
    Map<String, Long> bytesPerNode, double cpuS, long rssBytes, int threads) {}
