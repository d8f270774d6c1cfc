package io.numaspark.affinity.spark;

import io.numaspark.affinity.Affinity;
import java.util.Map;

/** Binds itself at level node with the lock directory of its argument; prints what it did. */
public final class NodeBinderChild {
  public static void main(String[] args) {
    AffinityConf conf = AffinityConf.from(Map.of(AffinityConf.PREFIX + "level", "node",
        AffinityConf.PREFIX + "lockDir", args[0], AffinityConf.PREFIX + "memPolicy", args[1]),
        name -> null);
    try (NodeBinder binder = NodeBinder.start(conf, Affinity.currentThreadAffinity(), 1)) {
      binder.onTaskStart();
      System.out.println(binder.chosenNodes() + "|" + binder.binding());
    }
  }
}
