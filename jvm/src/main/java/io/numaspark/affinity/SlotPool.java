package io.numaspark.affinity;

import java.util.List;

/**
 * Task slots (each a set of CPUs: a core, or one hardware thread) that running tasks take and
 * give back. {@link #acquire()} returns the lowest free slot, so a lightly loaded executor keeps
 * to its first cores; thread-safe.
 */
public final class SlotPool {
  private final List<CpuSet> slots;
  private final boolean[] taken;
  private int free;

  public SlotPool(List<CpuSet> slots) {
    if (slots.isEmpty()) {
      throw new IllegalArgumentException("a slot pool needs at least one slot");
    }
    this.slots = List.copyOf(slots);
    this.taken = new boolean[slots.size()];
    this.free = slots.size();
  }

  /** The index of a free slot, now taken; -1 when every slot is taken. */
  public synchronized int acquire() {
    if (free == 0) {
      return -1;
    }
    for (int i = 0; i < taken.length; i++) {
      if (!taken[i]) {
        taken[i] = true;
        free--;
        return i;
      }
    }
    throw new IllegalStateException("free count out of step with the slots");
  }

  /** Gives slot {@code index} back; giving back a free slot is an error. */
  public synchronized void release(int index) {
    if (index < 0 || index >= taken.length || !taken[index]) {
      throw new IllegalStateException("slot " + index + " is not taken");
    }
    taken[index] = false;
    free++;
  }

  public synchronized int free() {
    return free;
  }

  public int size() {
    return slots.size();
  }

  public CpuSet cpus(int index) {
    return slots.get(index);
  }

  public List<CpuSet> slots() {
    return slots;
  }
}
