package io.numaspark.affinity.spark.ui;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.numaspark.affinity.spark.NumaPlacementEvent;
import io.numaspark.affinity.spark.PlacementReport;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Listens to a History Server's replay of one event log and keeps the NUMA page's facts in
 * the application's store ({@link NumaStoreEntry}): each executor's newest report, and each
 * host's nodes. Every other event passes by. A report it cannot read is skipped with one line
 * per replay: the replay goes on.
 */
final class NumaHistoryListener extends SparkListener {
  private static final Logger LOG = LoggerFactory.getLogger(NumaHistoryListener.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Consumer<Object> store;
  private final Map<String, Long> newest = new HashMap<>();
  private boolean warned;

  /** Writes its entries through {@code store} (the replay's store's {@code write}). */
  NumaHistoryListener(Consumer<Object> store) {
    this.store = store;
  }

  @Override
  public void onOtherEvent(SparkListenerEvent event) {
    if (event instanceof NumaPlacementEvent placement && placement.reports() != null) {
      placement.reports().forEach(this::keep);
    }
  }

  private void keep(Map<String, Object> fields) {
    try {
      PlacementReport report = PlacementReport.fromMap(fields);
      String executor = String.valueOf(report.executor());
      Long before = newest.get(executor);
      if (before == null || before <= report.timeMs()) {
        newest.put(executor, report.timeMs());
        store.accept(new NumaStoreEntry("report:" + executor, report.json()));
      }
      if (report.hostTopology() != null && report.hostTopology().nodes() != null) {
        store.accept(new NumaStoreEntry("host:" + report.host(),
            JSON.writeValueAsString(report.hostTopology().nodes())));
      }
    } catch (RuntimeException | JsonProcessingException e) {
      if (!warned) {
        warned = true;
        LOG.warn("numaspark: a placement report in the event log not read: {}", e.toString());
      }
    }
  }
}
