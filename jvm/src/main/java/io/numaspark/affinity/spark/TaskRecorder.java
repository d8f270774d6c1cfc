package io.numaspark.affinity.spark;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * One JSON line per task into {@code DIR/affinity-EXECUTOR-PID.jsonl}, flushed as each task
 * ends; a recorder without a directory (or one that cannot write) records nothing.
 */
final class TaskRecorder {
  private final BufferedWriter out;

  private TaskRecorder(BufferedWriter out) {
    this.out = out;
  }

  static TaskRecorder open(String directory, String executorId) {
    if (directory == null || directory.isBlank()) {
      return new TaskRecorder(null);
    }
    try {
      Path dir = Path.of(directory);
      Files.createDirectories(dir);
      String name = "affinity-" + executorId.replaceAll("[^A-Za-z0-9_.-]", "_") + "-"
          + ProcessHandle.current().pid() + ".jsonl";
      return new TaskRecorder(Files.newBufferedWriter(dir.resolve(name), StandardCharsets.UTF_8,
          StandardOpenOption.CREATE, StandardOpenOption.APPEND));
    } catch (IOException | RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(TaskRecorder.class)
          .warn("numaspark affinity: cannot record tasks in {}: {}", directory, e.toString());
      return new TaskRecorder(null);
    }
  }

  synchronized void write(Map<String, Object> record) {
    if (out == null) {
      return;
    }
    try {
      out.write(json(record));
      out.newLine();
      out.flush();
    } catch (IOException e) {
      // a full disk must not fail the task; the record is lost
    }
  }

  synchronized void close() {
    if (out != null) {
      try {
        out.close();
      } catch (IOException e) {
        // nothing left to save
      }
    }
  }

  /** One record as a JSON object (Jackson: on every Spark JVM's classpath). */
  static String json(Map<String, Object> record) {
    try {
      return MAPPER.writeValueAsString(new TreeMap<>(record));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("cannot write a task record as JSON", e);
    }
  }

  private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER =
      new com.fasterxml.jackson.databind.ObjectMapper();
}
