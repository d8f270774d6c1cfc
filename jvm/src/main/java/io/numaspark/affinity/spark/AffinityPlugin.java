package io.numaspark.affinity.spark;

import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.SparkPlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pins each running task to its own core or hardware thread inside an executor, and reports
 * from inside every executor where it really runs:
 * {@code spark.plugins=io.numaspark.affinity.spark.AffinityPlugin}. The keys are read by
 * {@link AffinityConf}; the executor side is {@link AffinityExecutorPlugin} (pinning, and the
 * {@link PlacementReporter}), the driver side {@link AffinityDriverPlugin} (the reports).
 *
 * <p>This class alone is compiled for Java 8 (class file 52; {@code jvm/pom.xml}'s {@code
 * entry-java8} execution), the rest of the jar for Java 17. Spark loads the class
 * {@code spark.plugins} names in every JVM, and a class it cannot load
 * (UnsupportedClassVersionError) fails the SparkContext or the executor: on a Spark 3.5
 * cluster that runs Java 8 or 11 the job would break. So this class loads anywhere, checks the
 * running Java, and below 17 gives plugins that do nothing, with one warning per JVM; at 17 and
 * newer it loads the real plugins by name, so that nothing here names a Java 17 class.
 * Keep it free of APIs newer than Java 8.
 */
public final class AffinityPlugin implements SparkPlugin {
  /** The oldest Java the plugin's other classes run on. */
  static final int MIN_JAVA = 17;

  private static final Logger LOG = LoggerFactory.getLogger(AffinityPlugin.class);
  private static volatile boolean warned;

  private final int java;

  /** Spark's constructor: the running JVM's Java. */
  public AffinityPlugin() {
    this(javaFeature(System.getProperty("java.specification.version")));
  }

  /** With a given Java feature version (tests). */
  AffinityPlugin(int java) {
    this.java = java;
  }

  @Override
  public DriverPlugin driverPlugin() {
    if (java < MIN_JAVA) {
      warnOnce();
      return new NoDriver();
    }
    return (DriverPlugin) create("io.numaspark.affinity.spark.AffinityDriverPlugin");
  }

  @Override
  public ExecutorPlugin executorPlugin() {
    if (java < MIN_JAVA) {
      warnOnce();
      return new NoExecutor();
    }
    return (ExecutorPlugin) create("io.numaspark.affinity.spark.AffinityExecutorPlugin");
  }

  /**
   * The feature version of a {@code java.specification.version}: {@code 1.8} is 8, {@code 11}
   * is 11; 0 when it cannot be read (then the plugin stays off).
   */
  static int javaFeature(String specification) {
    if (specification == null) {
      return 0;
    }
    String version = specification.startsWith("1.") ? specification.substring(2) : specification;
    int end = 0;
    while (end < version.length() && Character.isDigit(version.charAt(end))) {
      end++;
    }
    return end == 0 ? 0 : Integer.parseInt(version.substring(0, end));
  }

  /** The line said once per JVM where the plugin stays off. */
  static String warning(int java) {
    return "numaspark's affinity plugin needs Java " + MIN_JAVA + "; this JVM is "
        + (java > 0 ? "Java " + java : "of an unknown Java") + " ("
        + System.getProperty("java.version") + "): running without it";
  }

  private void warnOnce() {
    if (!warned) {
      warned = true;
      LOG.warn(warning(java));
    }
  }

  private static Object create(String name) {
    try {
      return Class.forName(name).getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("numaspark: cannot start " + name + ": " + e, e);
    }
  }

  /** The driver side below Java 17: nothing. */
  static final class NoDriver implements DriverPlugin {}

  /** The executor side below Java 17: nothing. */
  static final class NoExecutor implements ExecutorPlugin {}
}
