package io.numaspark.affinity.spark.ui;

import org.apache.spark.util.kvstore.KVIndex;

/**
 * What the History Server keeps of the NUMA page in an application's store (the KVStore its
 * replay fills, in memory or on disk: plain fields, Jackson writes them): one entry per
 * executor, its newest report ({@code report:ID}, a JSON line), and one per host, its nodes
 * ({@code host:NAME}, node to CPUs as JSON) from the first report that carried them.
 */
public final class NumaStoreEntry {
  /** {@code report:} and the executor's id, or {@code host:} and the host's name. */
  @KVIndex public String id;

  /** The report's JSON line, or the host's nodes as a JSON object. */
  public String json;

  /** For the store's reader. */
  public NumaStoreEntry() {}

  NumaStoreEntry(String id, String json) {
    this.id = id;
    this.json = json;
  }
}
