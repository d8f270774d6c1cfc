"""What is wrong with an event log's bytes, said one way by every reader.

A log can be cut short (a driver that stopped mid-write, a copy that ran out of room, a
transfer stopped): its last line is then cut mid-event, and what comes after the cut (the
application's end, the last jobs' and stages' ends) is missing, so the figures read from it
cover the application up to the last event left. A file can also be no event log at all:
binary data, another format, a compressed file Spark did not write. The texts of those
warnings and of that refusal are made here and nowhere else, so that ``analyze``, ``results``,
``advise``, ``whatif`` and ``report`` say the same thing of the same file, given alone or in
a directory. (The readers show ``EventLog.warnings``, which `parse_event_log` fills with
these texts, and the refusal's one line.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from numaspark.errors import UsageError

_EVENT_START = b'{"Event":'
# what the first bytes of a file say it is, when it is not Spark's JSON lines
_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed data, a codec Spark does not write: gunzip it first"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data in a file not named .zstd: rename it *.zstd"),
    (b"LZ4Block", "lz4-compressed data in a file not named .lz4: rename it *.lz4"),
    (b"\x82SNAPPY\x00", "snappy-compressed data in a file not named .snappy: rename it *.snappy"),
    (b"PK\x03\x04", "a zip archive: unzip it and give the log inside"),
    (b"BZh", "bzip2-compressed data, a codec Spark does not write: bunzip2 it first"),
)
_DAMAGED, _CUT = ": damaged: ", ": truncated: "
SHOWN_TEXT = 40  # characters of a first line that is text but not an event, quoted


class NotAnEventLog(UsageError):
    """A file that is not a Spark event log: empty, binary, another format, or a compressed
    stream that is not of the codec its name says."""


@dataclass(frozen=True)
class BadLine:
    """A line of a log that is not a JSON event: where it is, in its file."""

    file: str  # the file's name among a rolling log's files ("": the log is one file)
    line: int  # its number in the file, from 1
    byte: int  # where it starts in the file (in its decompressed bytes when compressed)
    length: int  # its bytes, without the newline


def is_event_line(line: bytes) -> bool:
    """Whether a line starts as Spark writes each event (whole or cut)."""
    return line.lstrip().startswith(_EVENT_START)


def what_it_is(first: bytes | None) -> str:
    """What a file is, told by its first line, when that line is not a Spark event."""
    if not first:
        return "it is empty"
    for magic, said in _MAGIC:
        if first.startswith(magic):
            return said
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        return "its first bytes are binary data, not JSON lines"
    if "\x00" in text or not text.isprintable():
        return "its first bytes are binary data, not JSON lines"
    shown = text.strip()[:SHOWN_TEXT] + ("..." if len(text.strip()) > SHOWN_TEXT else "")
    if text.lstrip().startswith("{"):
        return f'its first line is JSON but not a Spark event (no "Event" key): {shown!r}'
    return f"its first line is not a Spark event: {shown!r}"


def not_an_event_log(path: object, first: bytes | None, codec: str | None = None) -> NotAnEventLog:
    """The refusal of a file that is not a Spark event log (``first``: its first non-empty
    line, decompressed with ``codec`` where its name gives one)."""
    said = what_it_is(first)
    if codec and first:
        said = f"{said} (after {codec} decompression)"
    return NotAnEventLog(
        f"{path}: not a Spark event log: {said}; give the file or eventlog_v2_* directory "
        "Spark wrote (spark.eventLog.dir)"
    )


def not_a_stream(name: str, codec: str, why: object) -> NotAnEventLog:
    """The refusal of a file whose very first bytes are not the stream its codec names."""
    return NotAnEventLog(
        f"{name}: not a Spark event log: not a {codec} stream from its first byte ({why})"
    )


def stream_damaged(name: str, codec: str, byte: int, why: object) -> str:
    """A compressed stream damaged inside: the events before the damage are kept."""
    return (
        f"{name}{_DAMAGED}its {codec} stream breaks at about byte {byte:,} ({why}); "
        "the events before the damage are kept, those after it are missing"
    )


def stream_cut(name: str, codec: str, byte: int) -> str:
    """A compressed stream that stops inside a block or frame (the file was cut there)."""
    return (
        f"{name}{_CUT}its {codec} stream stops mid-block at byte {byte:,} (the driver "
        "stopped mid-write, or the copy is short); the events before are kept"
    )


def bad_lines(found: list[BadLine]) -> list[str]:
    """Lines that are not JSON, in the middle of a log: one warning per file."""
    by_file: dict[str, list[BadLine]] = {}
    for bad in found:
        by_file.setdefault(bad.file, []).append(bad)
    said = []
    for name, lines in by_file.items():
        shown = ", ".join(str(b.line) for b in lines[:5])
        if len(lines) > 5:
            shown += f" and {len(lines) - 5} more"
        which = f"line {shown} is" if len(lines) == 1 else f"lines {shown} are"
        said.append(f"{_named(name)}{which} not JSON (from byte {lines[0].byte:,}); skipped")
    return said


def _named(file: str) -> str:
    """The file a warning is about, where the log has several."""
    return f"{file}: " if file else ""


def _clock(ms: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(ms / 1000))


def left_out(
    complete: bool,
    start_ms: float | None,
    last_ms: float | None,
    unfinished_jobs: int,
    unfinished_stages: int,
) -> str:
    """What a log without its end leaves out: the end, and the jobs and stages without one;
    the figures then cover the application up to its last event."""
    said = []
    if not complete:
        cover = "no application end"
        if last_ms is not None:
            cover += f": the figures cover up to {_clock(last_ms)}"
            if start_ms is not None and last_ms >= start_ms:
                cover += f", {(last_ms - start_ms) / 1000:.1f} s after its start"
        said.append(cover)
    ends = [
        f"{count} {word}{'' if count == 1 else 's'}"
        for count, word in ((unfinished_jobs, "job"), (unfinished_stages, "stage"))
        if count
    ]
    if ends:
        said.append(f"{' and '.join(ends)} without an end")
    return "; ".join(said)


def truncated(cut: BadLine, compressed: bool, what_is_missing: str) -> str:
    """A log cut mid-line: where (byte and line), and what the cut leaves out."""
    where = f"byte {cut.byte + cut.length:,}" + (
        " of its decompressed events" if compressed else ""
    )
    said = (
        f"{_named(cut.file)}truncated: cut at {where}, in line {cut.line} (from byte "
        f"{cut.byte:,}: skipped)"
    )
    return f"{said}: {what_is_missing}" if what_is_missing else said


def being_written(cut: BadLine, what_is_missing: str) -> str:
    """A log Spark is still writing, whose last line is not whole yet: no damage, said as
    what the figures cover."""
    said = (
        f"{_named(cut.file)}still being written (in progress): its last line, from byte "
        f"{cut.byte:,}, is not whole yet"
    )
    return f"{said}: {what_is_missing}" if what_is_missing else said


def is_stream_damage(warning: str) -> bool:
    """Whether a warning is `stream_damaged`'s or `stream_cut`'s."""
    return _DAMAGED in warning or _CUT in warning


def unended(what_is_missing: str, stream_damaged: bool = False) -> str:
    """A log that ends at a line's end without the application's end: still being written,
    a driver that died, or a copy cut between two lines (or a compressed stream damaged or
    cut, said in its own warning)."""
    if stream_damaged:
        return f"{what_is_missing} (the compressed stream's damage above)"
    return (
        f"{what_is_missing} (the application was still running, its driver died, or the log "
        "was cut between two events)"
    )


def untimed_jobs(count: int) -> str:
    """Jobs without times because Spark before 1.4 wrote none (not a damaged log)."""
    return (
        f"{count} job(s) without submission or completion time (Spark before 1.4 wrote "
        "none): their spans are taken from their stages"
    )


def before_start(path: object, damage: str) -> UsageError:
    """A log whose damage comes before the application's start: nothing left to read."""
    return UsageError(
        f"{path} holds no Spark application events before its damage ({damage}): give an "
        "undamaged copy of the log"
    )
