package io.numaspark.affinity.spark;

import java.nio.file.Path;

/**
 * One JSON line per task ({@link TaskRecord}) into {@code DIR/affinity-EXECUTOR-PID.jsonl},
 * flushed as each task ends; a recorder without a directory (or one that cannot write)
 * records nothing. A line that cannot be written is one warning for this recorder, however
 * many tasks follow; the task never fails ({@link JsonLines}).
 */
final class TaskRecorder {
  private final JsonLines out;

  TaskRecorder(JsonLines out) {
    this.out = out;
  }

  static TaskRecorder open(String directory, String executorId) {
    if (directory == null || directory.isBlank()) {
      return new TaskRecorder(JsonLines.none());
    }
    try {
      String name = "affinity-" + executorId.replaceAll("[^A-Za-z0-9_.-]", "_") + "-"
          + ProcessHandle.current().pid() + ".jsonl";
      return new TaskRecorder(JsonLines.open(Path.of(directory).resolve(name), "task records"));
    } catch (RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(TaskRecorder.class)
          .warn("numaspark affinity: cannot record tasks in {}: {}", directory, e.toString());
      return new TaskRecorder(JsonLines.none());
    }
  }

  void write(TaskRecord record) {
    out.append(record.json());
  }

  /** How many records could not be written. */
  long lost() {
    return out.lost();
  }

  void close() {
    out.close();
  }
}
