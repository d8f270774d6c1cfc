package io.numaspark.affinity.spark.ui;

import java.lang.reflect.Method;
import org.apache.spark.SparkContext;
import org.apache.spark.ui.SparkUI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts a {@link NumaPage} into one application's Spark UI, live or in the History Server, at
 * {@code BASE/numa/} (its JSON at {@code BASE/numa/json}), with a {@code NUMA} tab in Spark's
 * navigation bar ({@link NumaTab}).
 *
 * <p>It goes through the UI's public {@code attachHandler(contextPath, servlet, pathSpec)},
 * which every Spark from 3.0 to 4.x has; only the servlet class differs (javax in 3.5, jakarta
 * in 4.x), so the method is found by its name and the servlet chosen by the type it takes.
 * The handler is not Jetty's own class (Spark 4.0 shades Jetty 11, 4.1 and later Jetty 12's
 * ee10 classes): nothing here names one.
 */
public final class NumaUi {
  /** The page's path under the UI's base path. */
  public static final String PATH = "/numa";

  private static final Logger LOG = LoggerFactory.getLogger(NumaUi.class);

  private NumaUi() {}

  /**
   * The live page of the application {@code sc} runs, attached to its UI, its address logged;
   * null, with one log line, when Spark's UI is off or cannot take the page (the job goes on).
   */
  public static NumaPage live(SparkContext sc) {
    try {
      if (sc.ui().isEmpty()) {
        LOG.info("numaspark: no NUMA page: Spark's UI is off (spark.ui.enabled=false)");
        return null;
      }
      SparkUI ui = sc.ui().get();
      NumaPage page = new NumaPage(sc.appName(), "live");
      String path = attach(ui, page);
      LOG.info("numaspark: the NUMA page is at {}{}/ (its JSON at {}/json)", ui.webUrl(), path,
          path);
      return page;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      LOG.warn("numaspark: no NUMA page in Spark's UI: {}", e.toString());
      return null;
    }
  }

  /**
   * Attaches {@code page} to {@code ui} and returns its path (the UI's base path, then {@link
   * #PATH}); throws when this Spark's UI cannot take it (the caller logs one line).
   */
  public static String attach(SparkUI ui, NumaPage page) throws ReflectiveOperationException {
    String path = ui.getBasePath() + PATH;
    Method attach = attachHandler(ui.getClass());
    Object servlet = servletFor(attach.getParameterTypes()[1])
        .getDeclaredConstructor(NumaPage.class).newInstance(page);
    attach.invoke(ui, path, servlet, "/*");
    ui.attachTab(new NumaTab(ui));
    return path;
  }

  /** The UI's {@code attachHandler(String, HttpServlet, String)}. */
  static Method attachHandler(Class<?> ui) throws NoSuchMethodException {
    for (Method method : ui.getMethods()) {
      Class<?>[] types = method.getParameterTypes();
      if (method.getName().equals("attachHandler") && types.length == 3
          && types[0] == String.class && types[2] == String.class) {
        return method;
      }
    }
    throw new NoSuchMethodException(ui.getName() + " has no attachHandler(path, servlet, spec)");
  }

  /** The page's servlet for the servlet API {@code servletType} belongs to. */
  static Class<?> servletFor(Class<?> servletType) throws ClassNotFoundException {
    String api = servletType.getName();
    String name = api.equals("jakarta.servlet.http.HttpServlet") ? "JakartaNumaServlet"
        : api.equals("javax.servlet.http.HttpServlet") ? "JavaxNumaServlet" : null;
    if (name == null) {
      throw new ClassNotFoundException("no NUMA page servlet for " + api);
    }
    Class<?> servlet = Class.forName(NumaUi.class.getPackageName() + "." + name);
    if (!servletType.isAssignableFrom(servlet)) {
      throw new ClassNotFoundException(servlet + " is not a " + api);
    }
    return servlet;
  }
}
