package io.numaspark.affinity.spark.ui;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.numaspark.affinity.spark.PlacementReport;
import java.io.IOException;
import java.util.Map;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.status.ElementTrackingStore;
import org.apache.spark.ui.SparkUI;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NUMA page in Spark's History Server, behind {@link NumaHistoryPlugin} (which loads this
 * class by name, so that a class here that cannot link never reaches the History Server): a
 * listener that keeps the event log's placement reports in the application's store, and the
 * page of an application whose store holds any. An application without them gets no page and
 * no tab.
 */
public final class NumaHistory {
  private static final Logger LOG = LoggerFactory.getLogger(NumaHistory.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<Map<String, Object>> REPORT = new TypeReference<>() {};
  private static final TypeReference<Map<String, String>> NODES = new TypeReference<>() {};

  /** The replay's listener, writing into {@code store}. */
  public SparkListener listener(ElementTrackingStore store) {
    return new NumaHistoryListener(value -> store.write(value));
  }

  /** Attaches the page to {@code ui} when the application's store holds placement reports. */
  public void setupUI(SparkUI ui) throws Exception {
    NumaPage page = page(ui.store().store().view(NumaStoreEntry.class), ui.getAppName());
    if (!page.isEmpty()) {
      LOG.debug("numaspark: NUMA page at {}/", NumaUi.attach(ui, page));
    }
  }

  /** The page that the store's entries make. */
  static NumaPage page(Iterable<NumaStoreEntry> entries, String application) throws IOException {
    NumaPage page = new NumaPage(application, "history");
    for (NumaStoreEntry entry : entries) {
      add(page, entry);
    }
    return page;
  }

  static void add(NumaPage page, NumaStoreEntry entry) throws IOException {
    if (entry.id.startsWith("report:")) {
      page.add(PlacementReport.fromMap(JSON.readValue(entry.json, REPORT)));
    } else if (entry.id.startsWith("host:")) {
      page.addHostNodes(entry.id.substring("host:".length()), JSON.readValue(entry.json, NODES));
    }
  }
}
