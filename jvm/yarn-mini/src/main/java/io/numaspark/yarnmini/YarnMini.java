package io.numaspark.yarnmini;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;

/**
 * A YARN on this machine: a ResourceManager and N NodeManagers (MiniYARNCluster, from
 * hadoop-client-minicluster), serving until SIGTERM or SIGINT, then stopped cleanly (the
 * NodeManagers kill their containers).
 *
 * <pre>
 *   java -cp ... io.numaspark.yarnmini.YarnMini --dir DIR [--nodemanagers N]
 *       [--nm-memory-mb M] [--nm-vcores V] [--min-allocation-mb A] [--host 127.0.0.1]
 *       [--site yarn-site.xml]
 * </pre>
 *
 * <p>{@code --site}: a yarn-site.xml fragment applied over these settings (what {@code
 * numaspark plan --target yarn --out DIR} writes: the NodeManagers' NUMA awareness and their
 * size); its memory and vcores, when it gives them, are what each NodeManager offers.
 *
 * Run with DIR as its working directory: MiniYARNCluster keeps its NodeManagers' local and log
 * directories under ./target/, so every container's command line names DIR (how numaspark
 * finds what a killed launcher left). Writes DIR/conf/yarn-site.xml (the running cluster's
 * configuration, for HADOOP_CONF_DIR), then prints one line:
 *
 * <pre>
 *   numaspark-yarn-mini ready rm-webapp=HOST:PORT rm=HOST:PORT nodemanagers=N
 * </pre>
 */
public final class YarnMini {
  static final String READY = "numaspark-yarn-mini ready";

  private YarnMini() {}

  public static void main(String[] args) throws Exception {
    File dir = null;
    int nodeManagers = 1;
    int nmMemoryMb = 4096;
    int nmVcores = 2;
    int minAllocationMb = 128;
    String host = "127.0.0.1";
    File site = null;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--dir" -> dir = new File(require(args[i], value));
        case "--nodemanagers" -> nodeManagers = Integer.parseInt(require(args[i], value));
        case "--nm-memory-mb" -> nmMemoryMb = Integer.parseInt(require(args[i], value));
        case "--nm-vcores" -> nmVcores = Integer.parseInt(require(args[i], value));
        case "--min-allocation-mb" -> minAllocationMb = Integer.parseInt(require(args[i], value));
        case "--host" -> host = require(args[i], value);
        case "--site" -> site = new File(require(args[i], value));
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
      i++;
    }
    if (dir == null) {
      throw new IllegalArgumentException("--dir DIR is required");
    }
    YarnConfiguration conf = new YarnConfiguration();
    // the capacity scheduler finds no queue without these (MiniYARNCluster ships no
    // capacity-scheduler.xml)
    conf.set("yarn.scheduler.capacity.root.queues", "default");
    conf.set("yarn.scheduler.capacity.root.default.capacity", "100");
    conf.set("yarn.scheduler.capacity.root.default.maximum-capacity", "100");
    // small containers: an application master and an executor fit beside each other
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, minAllocationMb);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB, nmMemoryMb);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES, nmVcores);
    // what each NodeManager offers, as given (never this machine's detected size)
    conf.setInt(YarnConfiguration.NM_PMEM_MB, nmMemoryMb);
    // MiniYARNCluster sets each NodeManager's memory from this key (4096 unless given)
    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, nmMemoryMb);
    conf.setInt(YarnConfiguration.NM_VCORES, nmVcores);
    // JVMs reserve far more virtual memory than they use: the checks would kill executors
    conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
    conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
    // a busy developer disk must not mark the only node unhealthy
    conf.setFloat(
        YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 100.0f);
    // every server on loopback unless asked; ports stay ephemeral (MiniYARNCluster's ":0")
    conf.set(YarnConfiguration.RM_BIND_HOST, host);
    conf.set(YarnConfiguration.NM_BIND_HOST, host);
    conf.set("yarn.timeline-service.bind-host", host);
    conf.setBoolean(YarnConfiguration.TIMELINE_SERVICE_ENABLED, false);
    if (site != null) {
      if (!site.isFile()) {
        throw new IllegalArgumentException("--site " + site + ": no such file");
      }
      Configuration fragment = new Configuration(false);
      fragment.addResource(new Path(site.getAbsolutePath()));
      for (Map.Entry<String, String> entry : fragment) {
        conf.set(entry.getKey(), entry.getValue());
      }
      // MiniYARNCluster sizes each NodeManager from its own key: keep it the fragment's
      conf.setInt(
          YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB,
          conf.getInt(YarnConfiguration.NM_PMEM_MB, nmMemoryMb));
      conf.setInt(
          YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_MB,
          Math.max(conf.getInt(YarnConfiguration.NM_PMEM_MB, nmMemoryMb), nmMemoryMb));
      conf.setInt(
          YarnConfiguration.RM_SCHEDULER_MAXIMUM_ALLOCATION_VCORES,
          Math.max(conf.getInt(YarnConfiguration.NM_VCORES, nmVcores), nmVcores));
    }

    MiniYARNCluster cluster = new MiniYARNCluster("numaspark", nodeManagers, 1, 1);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  long start = System.nanoTime();
                  cluster.stop();
                  System.out.printf(
                      "numaspark-yarn-mini stopped in %.1f s%n", (System.nanoTime() - start) / 1e9);
                  System.out.flush();
                  stopped.countDown();
                },
                "numaspark-yarn-mini-stop"));
    try {
      cluster.init(conf);
      cluster.start();
      // numaspark's start timeout, when longer (JVMs start ~20x slower under emulation)
      long waitS = Math.max(120, startTimeoutS());
      if (!cluster.waitForNodeManagersToConnect(waitS * 1000)) {
        throw new IllegalStateException("the NodeManagers did not register in " + waitS + " s");
      }
    } catch (Exception | LinkageError e) {
      // the cluster's own threads would keep a half-started JVM alive: stop it, say why
      e.printStackTrace();
      System.err.println("numaspark-yarn-mini failed: " + e);
      System.exit(1);  // the shutdown hook stops what had started
    }
    YarnConfiguration running = new YarnConfiguration(cluster.getConfig());
    writeSite(running, new File(dir, "conf"));
    System.out.println(
        READY
            + " rm-webapp="
            + running.get(YarnConfiguration.RM_WEBAPP_ADDRESS)
            + " rm="
            + running.get(YarnConfiguration.RM_ADDRESS)
            + " nodemanagers="
            + nodeManagers);
    System.out.flush();
    stopped.await();
  }

  private static long startTimeoutS() {
    try {
      return (long) Double.parseDouble(System.getenv().getOrDefault("NUMASPARK_START_TIMEOUT", "0"));
    } catch (NumberFormatException e) {
      return 0; // numaspark itself refuses a bad value, in one line, before it starts this
    }
  }

  private static String require(String option, String value) {
    if (value == null) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return value;
  }

  /** The running cluster's configuration as yarn-site.xml, replaced whole (never half-written). */
  private static void writeSite(YarnConfiguration conf, File confDir) throws IOException {
    if (!confDir.isDirectory() && !confDir.mkdirs()) {
      throw new IOException("cannot create " + confDir);
    }
    File partial = new File(confDir, "yarn-site.xml.partial");
    try (OutputStream out = new FileOutputStream(partial)) {
      conf.writeXml(out);
    }
    Files.move(
        partial.toPath(),
        new File(confDir, "yarn-site.xml").toPath(),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }
}
