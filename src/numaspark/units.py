"""The units users write on the command line: memory sizes as they and the JVM write them
(``4g``, ``512m``, ``31GiB``), durations (``90s``, ``10m``), ``KEY=VALUE`` pairs and lists of
counts (``1,2,4``)."""

from __future__ import annotations

import re

from numaspark.errors import UsageError

KIB, MIB, GIB, TIB = 1 << 10, 1 << 20, 1 << 30, 1 << 40
_SUFFIX = {"": 1, "b": 1, "k": KIB, "m": MIB, "g": GIB, "t": TIB}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str, what: str = "size") -> int:
    """Bytes from ``4g``, ``4G``, ``4GB``, ``4GiB``, ``512m``, ``1.5g`` (binary units, as the JVM)."""
    match = _SIZE.match(text)
    if not match:
        raise UsageError(f"bad {what} {text!r}: write it like 4g, 512m or 31GiB")
    number, suffix = match.groups()
    return int(float(number) * _SUFFIX[suffix.lower()])


def jvm_size(nbytes: int) -> str:
    """The JVM/Spark spelling, rounded down to MiB: ``4g`` when whole GiB, else ``3584m``."""
    mib = nbytes // MIB
    return f"{mib // 1024}g" if mib % 1024 == 0 and mib else f"{mib}m"


def human_size(nbytes: int | None) -> str:
    """For people: ``6.6 GiB``, ``512 MiB``; ``?`` when unknown."""
    if nbytes is None:
        return "?"
    for unit, size in (("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{nbytes} B"


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$", re.IGNORECASE)
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str, what: str = "duration") -> float:
    """Seconds from ``60s``, ``60``, ``1.5m``, ``500ms``, ``1h``."""
    match = _DURATION.match(text)
    if not match:
        raise UsageError(f"bad {what} {text!r}: write it like 60s, 2m or 500ms")
    number, unit = match.groups()
    return float(number) * _SECONDS[(unit or "s").lower()]


def parse_pairs(pairs: list[str], option: str, example: str) -> dict[str, str]:
    """``KEY=VALUE`` options (``--conf``, ``--param``) as a dict; a bad one is a usage error."""
    values = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad {option} {pair!r}: write KEY=VALUE, e.g. {option} {example}")
        values[key.strip()] = value
    return values


def parse_counts(text: str, option: str) -> list[int]:
    """``1,2,4,8`` as positive integers (``--cores`` of whatif); anything else is a usage error."""
    try:
        counts = [int(c) for c in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise UsageError(f"bad {option} {text!r}: write counts like 1,2,4,8")
    return counts
