package io.numaspark.affinity.spark.ui;

import org.apache.spark.ui.WebUI;
import org.apache.spark.ui.WebUITab;

/**
 * The {@code NUMA} entry of Spark's navigation bar: a tab with no pages of Spark's kind (those
 * are Scala XML per Spark line), whose link, {@code BASE/numa/}, is the page {@link NumaUi}
 * attached. Spark's pages draw the bar from the UI's tabs; the NUMA page itself is plain HTML
 * without it, and links back.
 */
final class NumaTab extends WebUITab {
  NumaTab(WebUI ui) {
    super(ui, "numa");
  }

  @Override
  public String name() {
    return "NUMA";
  }
}
