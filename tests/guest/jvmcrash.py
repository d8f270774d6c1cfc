"""A JVM's fatal error in one line, for the guest's checks (checks.py) and their tests."""

from __future__ import annotations

import re


def jvm_crash(log: str) -> str | None:
    """A JVM's fatal error as its log printed it, in one line: the signal and where, the frame
    it died in, and its error file (None: no JVM crashed in ``log``). HotSpot writes them as
    '# SIGSEGV (0xb) at pc=...', '# Problematic frame:' and the line after it, and '# An error
    report file with more information is saved as:' and the line after it."""
    if "A fatal error has been detected by the Java Runtime Environment" not in log:
        return None
    lines = [line.strip("# ").strip() for line in log.splitlines()]
    signal = next((x for x in lines if re.match(r"^SIG[A-Z]+ \(0x", x)), "a fatal error")
    said = [signal.split(", pid=")[0]]
    for header in ("Problematic frame:", "An error report file with more information is saved as:"):
        if header in lines and lines.index(header) + 1 < len(lines):
            said.append(lines[lines.index(header) + 1])
    return "; ".join(said)
