package io.numaspark.affinity;

import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A process that holds node slots (NodeChooserTest starts several), in the lock directory of
 * its first argument, until its stdin closes or it is killed:
 *
 * <ul>
 *   <li>{@code DIR}: chooses a slot for 1 core on a synthetic two-node topology (nodes 0: CPUs
 *       0-1, 1: CPUs 2-3) and prints "NODE SLOT";
 *   <li>{@code DIR choose CORES PAUSE_MS GO}: the same for CORES cores, first waiting until the
 *       file GO exists (polled every millisecond: children started together then choose within
 *       a millisecond of each other), with a pause of PAUSE_MS between reading the holders and
 *       taking a slot (the window the choice lock must cover);
 *   <li>{@code DIR hold N:K:C,...}: holds slot K of node N as a holder of C cores would, for
 *       each triple, and prints "held";
 *   <li>{@code DIR rebalance}: chooses as the first, prints "NODE SLOT", then every 5 ms asks
 *       {@link NodeChooser#rebalance} and prints "moved NODE SLOT" for each move.
 * </ul>
 */
public final class NodeChooserChild {
  static final Topology TWO_NODES = new Topology(
      List.of(CpuSet.of(0), CpuSet.of(1), CpuSet.of(2), CpuSet.of(3)),
      Map.of(0, CpuSet.parse("0-1"), 1, CpuSet.parse("2-3")));

  public static void main(String[] args) throws Exception {
    Path locks = Path.of(args[0]);
    if (args.length > 1 && args[1].equals("hold")) {
      List<FileLock> held = new ArrayList<>();
      for (String triple : args[2].split(",")) {
        String[] parts = triple.split(":");
        FileLock lock = NodeChooser.hold(locks, Integer.parseInt(parts[0]),
            Integer.parseInt(parts[1]), Integer.parseInt(parts[2]));
        if (lock == null) {
          throw new IllegalStateException("slot " + triple + " is held already");
        }
        held.add(lock);
      }
      System.out.println("held");
      System.out.flush();
      waitForStdin();
      return;
    }
    int cores = 1;
    if (args.length > 1 && args[1].equals("rebalance")) {
      rebalancing(locks);
      return;
    }
    if (args.length > 1 && args[1].equals("choose")) {
      cores = Integer.parseInt(args[2]);
      NodeChooser.readToTakePauseMs = Long.parseLong(args[3]);
      Path go = Path.of(args[4]);
      while (!Files.exists(go)) {
        Thread.sleep(1);
      }
    }
    try (NodeChooser.Choice choice = NodeChooser.choose(TWO_NODES, CpuSet.parse("0-3"), cores,
        locks)) {
      System.out.println(choice.node() + " " + choice.slot());
      System.out.flush();
      waitForStdin();
    }
  }

  private static void rebalancing(Path locks) throws Exception {
    NodeChooser.Choice first = NodeChooser.choose(TWO_NODES, CpuSet.parse("0-3"), 1, locks);
    System.out.println(first.node() + " " + first.slot());
    System.out.flush();
    Thread mover = new Thread(() -> {
      NodeChooser.Choice held = first;
      while (true) {
        try {
          NodeChooser.Choice moved = NodeChooser.rebalance(TWO_NODES, CpuSet.parse("0-3"),
              locks, held, false);
          if (moved != null) {
            held = moved;
            System.out.println("moved " + moved.node() + " " + moved.slot());
            System.out.flush();
          }
          Thread.sleep(5);
        } catch (Exception e) {
          System.out.println("failed " + e);
          System.out.flush();
          return;
        }
      }
    });
    mover.setDaemon(true);
    mover.start();
    waitForStdin();
  }

  private static void waitForStdin() throws java.io.IOException {
    while (System.in.read() >= 0) {
      // hold until the parent closes our stdin
    }
  }
}
