package io.numaspark.affinity.spark.ui;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * The NUMA page's servlet for the jakarta servlet API of Spark 4.x (Jetty 11/12): it only hands the
 * path to {@link NumaPage#respond(String)}. {@link NumaUi} picks the servlet that the running
 * Spark's {@code attachHandler} takes; the other one is never loaded.
 */
final class JakartaNumaServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;

  private final transient NumaPage page;

  JakartaNumaServlet(NumaPage page) {
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
