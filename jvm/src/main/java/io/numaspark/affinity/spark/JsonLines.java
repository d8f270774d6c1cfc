package io.numaspark.affinity.spark;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A file the plugin appends JSON lines to, each flushed as it is written (the task records,
 * the driver's placement reports). It never fails its caller: a file that cannot be opened
 * is one warning and records nothing; a line that cannot be written (a full disk) is lost,
 * with one warning for the first such line of this file, not one per line.
 */
final class JsonLines {
  private static final Logger LOG = LoggerFactory.getLogger(JsonLines.class);

  private final Path path;
  private final String what;
  private BufferedWriter out;
  private long lost;

  private JsonLines(Path path, String what, BufferedWriter out) {
    this.path = path;
    this.what = what;
    this.out = out;
  }

  /** Appends to {@code path} (its directory made); {@code what} its lines are, for the log. */
  static JsonLines open(Path path, String what) {
    try {
      if (path.getParent() != null) {
        Files.createDirectories(path.getParent());
      }
      return new JsonLines(path, what, Files.newBufferedWriter(path, StandardCharsets.UTF_8,
          StandardOpenOption.CREATE, StandardOpenOption.APPEND));
    } catch (IOException | RuntimeException e) {
      LOG.warn("numaspark affinity: cannot record {} in {}: {}", what, path, e.toString());
      return none();
    }
  }

  /** One that records nothing. */
  static JsonLines none() {
    return new JsonLines(null, "nothing", null);
  }

  synchronized void append(String line) {
    if (out == null) {
      return;
    }
    try {
      out.write(line);
      out.newLine();
      out.flush();
    } catch (IOException e) {
      if (lost++ == 0) {
        LOG.warn("numaspark affinity: cannot write {} to {}: {}; it and any later ones that "
            + "fail are lost (this is said once)", what, path, e.toString());
      }
    }
  }

  /** How many lines could not be written. */
  synchronized long lost() {
    return lost;
  }

  synchronized void close() {
    if (out != null) {
      try {
        out.close();
      } catch (IOException e) {
        // nothing left to save
      }
      out = null;
    }
  }
}
