"""A JVM's fatal error in one line, for the guest's checks (checks.py) and their tests."""

from __future__ import annotations

import re
from pathlib import Path


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


# The sections of a HotSpot error file that say what the CPU was doing when the JVM died, and
# how many of their lines to keep: the signal and its address, the registers, the code bytes
# around pc (enough to decode the faulting instruction), the task the JIT was compiling; each
# section ends at its first blank line.
SECTIONS = {
    "siginfo:": 1,
    "Registers:": 10,
    "Instructions: (pc=": 14,
    "Current CompileTask:": 2,
    "Native frames:": 8,
}


def error_report(log: str) -> list[str]:
    """The error file that ``log`` names (a crashed JVM's output), cut to its :data:`SECTIONS`:
    what a crash under emulation needs to be told from a bug of the JVM (issue 57). Empty when
    no JVM crashed or its file is gone."""
    said = jvm_crash(log)
    path = said.rsplit("; ", 1)[-1] if said else ""
    try:
        lines = Path(path).read_text(errors="replace").splitlines() if path else []
    except OSError:
        return []
    kept = []
    for i, line in enumerate(lines):
        count = next((n for head, n in SECTIONS.items() if line.startswith(head)), 0)
        if count:  # the section's head and its lines, up to the blank line that ends it
            section = lines[i : i + 1 + count]
            blank = next((j for j, x in enumerate(section) if not x.strip()), len(section))
            kept += section[:blank]
    return kept


def say_crash(log: str) -> str | None:
    """A crashed JVM in ``log`` in one line (None: none), its error file's telling sections
    printed on the console first (``NUMASPARK-JVM-CRASH`` lines: signal, registers, the code
    bytes at pc), which outlive the guest's /tmp."""
    for line in error_report(log):
        print(f"NUMASPARK-JVM-CRASH {line}", flush=True)
    return jvm_crash(log)
