package io.numaspark.affinity.spark.ui;

import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * The NUMA page's servlet for the javax servlet API of Spark 3.5 (Jetty 9): it only hands the
 * path to {@link NumaPage#respond(String)}. {@link NumaUi} picks the servlet that the running
 * Spark's {@code attachHandler} takes; the other one is never loaded.
 */
final class JavaxNumaServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;

  private final transient NumaPage page;

  JavaxNumaServlet(NumaPage page) {
    this.page = page;
  }

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    String path = (request.getServletPath() == null ? "" : request.getServletPath())
        + (request.getPathInfo() == null ? "" : request.getPathInfo());
    NumaPage.Response answer = page.respond(path);
    response.setStatus(answer.status());
    response.setContentType(answer.contentType());
    response.setHeader("Cache-Control", "no-store");
    response.setHeader("X-Content-Type-Options", "nosniff");
    response.getOutputStream().write(answer.body());
  }
}
