package io.numaspark.affinity;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A process that chooses a node slot and holds it (NodeChooserTest starts several): on a
 * synthetic two-node topology (nodes 0: CPUs 0-1, 1: CPUs 2-3), with the lock directory of
 * its argument. It prints "NODE SLOT" and holds the lock until its stdin closes or it is
 * killed.
 */
public final class NodeChooserChild {
  static final Topology TWO_NODES = new Topology(
      List.of(CpuSet.of(0), CpuSet.of(1), CpuSet.of(2), CpuSet.of(3)),
      Map.of(0, CpuSet.parse("0-1"), 1, CpuSet.parse("2-3")));

  public static void main(String[] args) throws Exception {
    try (NodeChooser.Choice choice = NodeChooser.choose(TWO_NODES, CpuSet.parse("0-3"), 1,
        Path.of(args[0]))) {
      System.out.println(choice.node() + " " + choice.slot());
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold until the parent closes our stdin
      }
    }
  }
}
