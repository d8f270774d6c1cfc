package io.numaspark.affinity;

import java.util.BitSet;
import java.util.Collection;
import java.util.stream.IntStream;

/**
 * An immutable set of CPU numbers (the kernel's OS indexes), read and written in the Linux list
 * format of {@code /sys} and {@code /proc}: {@code "0-3,8,10-11"}; the empty set is {@code ""}.
 */
public final class CpuSet {
  private final BitSet bits;

  private CpuSet(BitSet bits) {
    this.bits = bits;
  }

  public static CpuSet of(int... cpus) {
    BitSet bits = new BitSet();
    for (int cpu : cpus) {
      if (cpu < 0) {
        throw new IllegalArgumentException("negative CPU number " + cpu);
      }
      bits.set(cpu);
    }
    return new CpuSet(bits);
  }

  public static CpuSet of(Collection<Integer> cpus) {
    return of(cpus.stream().mapToInt(Integer::intValue).toArray());
  }

  /** Parses {@code "0-3,8"}; whitespace and a trailing newline are allowed. */
  public static CpuSet parse(String text) {
    BitSet bits = new BitSet();
    String trimmed = text.strip();
    if (trimmed.isEmpty()) {
      return new CpuSet(bits);
    }
    for (String part : trimmed.split(",")) {
      String item = part.strip();
      try {
        int dash = item.indexOf('-');
        if (dash < 0) {
          bits.set(Integer.parseInt(item));
        } else {
          int first = Integer.parseInt(item.substring(0, dash));
          int last = Integer.parseInt(item.substring(dash + 1));
          if (first < 0 || last < first) {
            throw new IllegalArgumentException("bad CPU range '" + item + "' in '" + text + "'");
          }
          bits.set(first, last + 1);
        }
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "bad CPU list '" + text + "': write it like 0-3,8", e);
      }
    }
    return new CpuSet(bits);
  }

  public static CpuSet fromBits(BitSet bits) {
    return new CpuSet((BitSet) bits.clone());
  }

  public BitSet toBits() {
    return (BitSet) bits.clone();
  }

  public boolean contains(int cpu) {
    return cpu >= 0 && bits.get(cpu);
  }

  public boolean isEmpty() {
    return bits.isEmpty();
  }

  public int size() {
    return bits.cardinality();
  }

  /** The highest CPU number, or -1 when empty. */
  public int last() {
    return bits.length() - 1;
  }

  public IntStream stream() {
    return bits.stream();
  }

  public int[] toArray() {
    return bits.stream().toArray();
  }

  public boolean isSubsetOf(CpuSet other) {
    BitSet rest = toBits();
    rest.andNot(other.bits);
    return rest.isEmpty();
  }

  public CpuSet and(CpuSet other) {
    BitSet result = toBits();
    result.and(other.bits);
    return new CpuSet(result);
  }

  public CpuSet or(CpuSet other) {
    BitSet result = toBits();
    result.or(other.bits);
    return new CpuSet(result);
  }

  public CpuSet minus(CpuSet other) {
    BitSet result = toBits();
    result.andNot(other.bits);
    return new CpuSet(result);
  }

  /** The Linux list format, ranges collapsed: {@code "0-3,8"}. */
  @Override
  public String toString() {
    StringBuilder out = new StringBuilder();
    int start = bits.nextSetBit(0);
    while (start >= 0) {
      int end = bits.nextClearBit(start) - 1;
      if (out.length() > 0) {
        out.append(',');
      }
      out.append(start);
      if (end > start) {
        out.append('-').append(end);
      }
      start = bits.nextSetBit(end + 1);
    }
    return out.toString();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof CpuSet set && set.bits.equals(bits);
  }

  @Override
  public int hashCode() {
    return bits.hashCode();
  }
}
