package io.numaspark.affinity.spark.ui;

import org.apache.spark.util.kvstore.InMemoryStore;

/**
 * Run in a child JVM with every Spark jar on its class path ({@link NumaHistoryTest}): replays
 * the test's events into Spark's own in-memory KVStore, as a History Server's replay does,
 * and prints the page's JSON made from the store's view of the entries.
 */
public final class NumaStoreChild {
  private NumaStoreChild() {}

  public static void main(String[] args) throws Exception {
    InMemoryStore store = new InMemoryStore();
    NumaHistoryTest.replay(new NumaHistoryListener(value -> {
      try {
        store.write(value);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }));
    if (store.count(NumaStoreEntry.class) != 3) {
      throw new IllegalStateException(store.count(NumaStoreEntry.class) + " entries, not 3");
    }
    System.out.println(NumaHistory.page(store.view(NumaStoreEntry.class), "etl").json());
  }
}
