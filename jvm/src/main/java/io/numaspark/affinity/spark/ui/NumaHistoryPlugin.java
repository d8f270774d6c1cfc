package io.numaspark.affinity.spark.ui;

import java.lang.reflect.InvocationTargetException;
import org.apache.spark.SparkConf;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.status.AppHistoryServerPlugin;
import org.apache.spark.status.ElementTrackingStore;
import org.apache.spark.ui.SparkUI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NUMA page's History Server plugin, as Spark's ServiceLoader finds it ({@code
 * META-INF/services/org.apache.spark.status.AppHistoryServerPlugin}). The History Server calls
 * its plugins without catching their errors, for every application it loads: a plugin that
 * throws, or a class of the jar that cannot link (a jar built for another Spark line, Scala
 * or Java), would leave every application unserved. So this class is the only one the
 * ServiceLoader sees, Java 8 bytecode like {@code AffinityPlugin} ({@code jvm/pom.xml}'s
 * {@code entry-java8}), and it names no other class of numaspark's but {@link
 * Scala212HistoryPlugin}: it loads the real plugin ({@link NumaHistory}) by name, and whatever
 * fails there, then or in a call, is one warning per History Server, after which it gives no
 * listener and attaches no page.
 *
 * <p>It links on either Spark line: {@code createListeners} returns Scala 2.13's {@code
 * immutable.Seq} (Spark 4.x) and, through {@link Scala212HistoryPlugin} and the bridge method
 * javac makes for it, Scala 2.12's {@code collection.Seq} (Spark 3.5); the list is built with
 * {@code Nil.::}, in both. Keep it free of APIs newer than Java 8.
 */
public final class NumaHistoryPlugin implements AppHistoryServerPlugin, Scala212HistoryPlugin {
  /** The real plugin's class. */
  static final String IMPLEMENTATION = "io.numaspark.affinity.spark.ui.NumaHistory";

  private static final Logger LOG = LoggerFactory.getLogger(NumaHistoryPlugin.class);
  private static volatile boolean warned;

  private final Object implementation; // null: it could not be loaded

  /** The ServiceLoader's constructor. */
  public NumaHistoryPlugin() {
    this(IMPLEMENTATION);
  }

  /** With the real plugin's class named (tests name one that fails). */
  NumaHistoryPlugin(String implementation) {
    Object loaded = null;
    try {
      loaded = Class.forName(implementation).getDeclaredConstructor().newInstance();
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      warnOnce("its classes do not load here", e);
    }
    this.implementation = loaded;
  }

  @Override
  public scala.collection.immutable.Seq<SparkListener> createListeners(SparkConf conf,
      ElementTrackingStore store) {
    if (implementation != null) {
      try {
        Object listener = implementation.getClass()
            .getMethod("listener", ElementTrackingStore.class).invoke(implementation, store);
        return scala.collection.immutable.Nil$.MODULE$.$colon$colon((SparkListener) listener);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        warnOnce("its listener failed", e);
      }
    }
    @SuppressWarnings("unchecked")
    scala.collection.immutable.Seq<SparkListener> none = (scala.collection.immutable.Seq<
        SparkListener>) (Object) scala.collection.immutable.Nil$.MODULE$;
    return none;
  }

  @Override
  public void setupUI(SparkUI ui) {
    if (implementation != null) {
      try {
        implementation.getClass().getMethod("setupUI", SparkUI.class).invoke(implementation, ui);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        warnOnce("its page could not be attached", e);
      }
    }
  }

  /** Whether the real plugin was loaded. */
  boolean loaded() {
    return implementation != null;
  }

  private static void warnOnce(String what, Throwable e) {
    Throwable cause = e instanceof InvocationTargetException && e.getCause() != null
        ? e.getCause() : e;
    if (!warned) {
      warned = true;
      LOG.warn("numaspark: no NUMA page in this History Server, {} ({}; a numaspark jar built"
          + " for another Spark line?); every application is served without it", what, cause);
    } else {
      LOG.debug("numaspark: NUMA page: {} ({})", what, cause.toString());
    }
  }
}
