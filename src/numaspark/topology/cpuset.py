"""`CpuSet`: a set of OS indexes (CPUs or NUMA nodes) in the formats Linux and hwloc use.

One implementation, used for every CPU set and node set in numaspark. It reads
the Linux list format (``0-3,8-11``: numactl, taskset, cgroups, ``/proc``), the
hwloc bitmap format (``0x0000f06f`` or ``0x000f000f,0x000f000f``, 32-bit words
most significant first) and the kernel mask format of ``/proc/PID/status``
(``00000000,00000003``), and always prints the list format.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from numaspark.errors import UsageError


class CpuSet:
    """An immutable, sorted set of non-negative integers (CPU or node OS indexes)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[int] = ()) -> None:
        values = frozenset(int(i) for i in items)
        if any(v < 0 for v in values):
            raise UsageError(f"CPU/node indexes must be >= 0, got {sorted(values)}")
        self._items: frozenset[int] = values

    # --- parsing -----------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> CpuSet:
        """Parse the Linux list format: ``""``, ``"3"``, ``"0-3,8-11"``, ``"0-15:2"``."""
        text = text.strip()
        if not text:
            return cls()
        items: set[int] = set()
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            stride = 1
            if ":" in part:
                part, _, stride_text = part.partition(":")
                stride = _to_int(stride_text, text)
                if stride < 1:
                    raise UsageError(f"bad CPU list {text!r}: stride must be >= 1")
            if "-" in part:
                lo_text, _, hi_text = part.partition("-")
                lo, hi = _to_int(lo_text, text), _to_int(hi_text, text)
                if hi < lo:
                    raise UsageError(f"bad CPU list {text!r}: range {lo}-{hi} is reversed")
                items.update(range(lo, hi + 1, stride))
            else:
                items.add(_to_int(part, text))
        return cls(items)

    @classmethod
    def from_hwloc(cls, text: str) -> CpuSet:
        """Parse an hwloc bitmap string (``0x0000f06f``, ``0x1,0xffffffff``).

        hwloc writes an infinite set as a leading ``0xf...f`` word; numaspark
        only sees finite sets from real machines, so that word is dropped.
        """
        # hwloc writes all-zero 32-bit words as empty strings: "0x303,0x03030000,,0x0".
        words = [w.strip() for w in text.strip().split(",")]
        if words and words[0].lower() == "0xf...f":
            words = words[1:]
        return cls._from_words([w[2:] if w.lower().startswith("0x") else w for w in words], text)

    @classmethod
    def from_mask(cls, text: str) -> CpuSet:
        """Parse the kernel's hex mask format (``Cpus_allowed: 00000000,00000003``)."""
        return cls._from_words([w.strip() for w in text.strip().split(",")], text)

    @classmethod
    def _from_words(cls, words: list[str], original: str) -> CpuSet:
        items: set[int] = set()
        for position, word in enumerate(reversed(words)):
            try:
                value = int(word or "0", 16)
            except ValueError:
                raise UsageError(f"bad CPU bitmap {original!r}") from None
            base = 32 * position
            while value:
                low = value & -value
                items.add(base + low.bit_length() - 1)
                value ^= low
        return cls(items)

    # --- output ------------------------------------------------------------
    def __str__(self) -> str:
        """The Linux list format, ranges collapsed: ``0-3,8-11``; empty prints ``""``."""
        parts: list[str] = []
        ordered = sorted(self._items)
        i = 0
        while i < len(ordered):
            j = i
            while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
                j += 1
            # Linux writes any run of two or more as a range ("0-1"), so do we.
            parts.append(str(ordered[i]) if j == i else f"{ordered[i]}-{ordered[j]}")
            i = j + 1
        return ",".join(parts)

    def __repr__(self) -> str:
        return f"CpuSet('{self}')"

    def to_list(self) -> list[int]:
        return sorted(self._items)

    # --- set behaviour -----------------------------------------------------
    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CpuSet):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._items)

    def __or__(self, other: CpuSet) -> CpuSet:
        return CpuSet(self._items | other._items)

    def __and__(self, other: CpuSet) -> CpuSet:
        return CpuSet(self._items & other._items)

    def __sub__(self, other: CpuSet) -> CpuSet:
        return CpuSet(self._items - other._items)

    def issubset(self, other: CpuSet) -> bool:
        return self._items <= other._items

    def isdisjoint(self, other: CpuSet) -> bool:
        return self._items.isdisjoint(other._items)

    def first(self) -> int:
        if not self._items:
            raise ValueError("empty CpuSet has no first element")
        return min(self._items)

    @classmethod
    def union(cls, sets: Iterable[CpuSet]) -> CpuSet:
        items: set[int] = set()
        for s in sets:
            items |= s._items
        return cls(items)


def _to_int(text: str, whole: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise UsageError(f"bad CPU list {whole!r}: expected numbers like '0-3,8-11'") from None
    if value < 0:
        raise UsageError(f"bad CPU list {whole!r}: indexes must be >= 0")
    return value
