package io.numaspark.affinity.spark;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts the executors' placement reports into Spark's event log, in batches: Spark's event-log
 * writer flushes the file on every event it does not know, so one event per report (every
 * executor every 5 s) would be a flush per report. Each batch holds the reports that arrived
 * since the previous one: an executor's first report whole (it carries its host's topology),
 * then only its latest, so a batch of N executors holds at most 2N reports. A batch goes out
 * every {@code intervalMs} when something arrived, and the rest at {@link #close()}.
 *
 * <p>What arrived is also posted when the application ends ({@link #atApplicationEnd()}):
 * Spark 3.5 stops its listener bus before it shuts the plugins down, and a post to a stopped
 * bus is dropped without a word, so there the batch at {@link #close()} never reaches the log
 * (Spark 4 shuts the plugins down first). Reports that arrive after the end (the executors'
 * last) are in a Spark 4 log only.
 *
 * <p>Measurement never breaks the job it measures: a post that fails (the listener bus
 * stopped, an event log that cannot be written) is one warning, and the reports are dropped.
 */
final class EventLogPoster implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EventLogPoster.class);

  private final Consumer<NumaPlacementEvent> post;
  private final Map<String, Map<String, Object>> firsts = new LinkedHashMap<>();
  private final Map<String, Map<String, Object>> latest = new LinkedHashMap<>();
  private final Set<String> seen = new HashSet<>();
  private ScheduledExecutorService timer;
  private boolean warned;

  /** Posts each batch through {@code post} (the listener bus, or a test's list). */
  EventLogPoster(Consumer<NumaPlacementEvent> post) {
    this.post = post;
  }

  /** Posts every {@code intervalMs} from now on (0 or less: only at close). */
  EventLogPoster every(long intervalMs) {
    if (intervalMs > 0) {
      timer = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "numaspark-event-log");
        thread.setDaemon(true);
        return thread;
      });
      timer.scheduleWithFixedDelay(this::flush, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
    }
    return this;
  }

  /** A listener (for {@code SparkContext.addSparkListener}) that posts a batch at the end. */
  SparkListener atApplicationEnd() {
    return new SparkListener() {
      @Override
      public void onApplicationEnd(SparkListenerApplicationEnd end) {
        flush();
      }
    };
  }

  /** One report (its JSON fields), kept for the next batch. */
  synchronized void add(Map<String, Object> report) {
    String who = String.valueOf(report.get("executor"));
    if (seen.add(who)) {
      firsts.put(who, report);
    } else {
      latest.put(who, report);
    }
  }

  /** Posts what arrived since the last batch, if anything did. */
  void flush() {
    List<Map<String, Object>> batch;
    synchronized (this) {
      batch = new ArrayList<>(firsts.values());
      batch.addAll(latest.values());
      firsts.clear();
      latest.clear();
    }
    if (batch.isEmpty()) {
      return;
    }
    try {
      post.accept(new NumaPlacementEvent(NumaPlacementEvent.VERSION,
          System.currentTimeMillis(), batch));
    } catch (RuntimeException e) {
      if (!warned) {
        warned = true;
        LOG.warn("numaspark: placement reports not written to the event log: {}", e.toString());
      }
    }
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
    flush();
  }
}
