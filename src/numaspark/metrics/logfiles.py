"""The bytes of a Spark event log: its files, their codecs, streamed in bounded pieces.

Spark writes one JSON event per line. Spark 4 by default writes a rolling log:
a directory ``eventlog_v2_<app>/`` of ``events_<N>_<app>[.codec]`` files,
compressed with zstd. Users bring logs from their own clusters, so plain
files, rolling directories and the zstd, lz4 and snappy codecs all read the
same way, and a log of a long production application (millions of tasks,
gigabytes of JSON) is never held whole in memory: each file is cut into
segments that are decompressed and split into lines piece by piece.
A damaged or cut-short compressed stream keeps what came before the damage
and says so (in metrics/damage.py's words); one whose first bytes are not of its codec is
not an event log.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.metrics.damage import not_a_stream, stream_cut, stream_damaged

_ROLLING_FILE = re.compile(r"^events_(\d+)_")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_CODECS = {".zstd": "zstd", ".zst": "zstd", ".lz4": "lz4", ".snappy": "snappy", ".lzf": "lzf"}
PIECE = 8 << 20  # bytes read (or decompressed) at a time
SEGMENT = 96 << 20  # a plain file is parsed in segments of about this size, in parallel


def event_log_files(path: Path) -> list[Path]:
    """The files of a log: itself, or a rolling directory's event files in order."""
    if not path.exists():
        raise UsageError(f"event log {path} does not exist")
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UsageError(
            f"{path} is neither a file nor a directory: give an event log file "
            "or an eventlog_v2_* directory"
        )
    files = [p for p in path.iterdir() if p.is_file() and _ROLLING_FILE.match(p.name)]
    if not files and (path / "EVENT_LOG_1").is_file():
        return [_legacy_log(path)]
    if not files:
        inner = sorted(p for p in path.iterdir() if p.name.startswith("eventlog_v2_"))
        if len(inner) == 1:
            return event_log_files(inner[0])
        raise UsageError(
            f"{path} is a directory without Spark event files (events_N_*): "
            "give an event log file or an eventlog_v2_* directory"
        )
    return sorted(files, key=lambda p: int(_ROLLING_FILE.match(p.name).group(1)))


def _legacy_log(path: Path) -> Path:
    """Spark 1.0-1.2's directory of one application (EVENT_LOG_1, SPARK_VERSION_x,
    APPLICATION_COMPLETE, COMPRESSION_CODEC_x when compressed): its events' file."""
    if any(p.name.startswith("COMPRESSION_CODEC_") for p in path.iterdir()):
        raise UsageError(
            f"{path}: a compressed Spark 1.x log directory is not read: decompress its "
            "EVENT_LOG_1 with Spark 1.x's codec and give that file"
        )
    return path / "EVENT_LOG_1"


def rolling_gaps(files: list[Path]) -> list[int]:
    """Indexes missing from a rolling log's numbering (events_1, events_3: [2])."""
    numbers = [int(m.group(1)) for f in files if (m := _ROLLING_FILE.match(f.name))]
    if len(numbers) != len(files) or not numbers:
        return []
    present = set(numbers)
    return [n for n in range(min(numbers), max(numbers) + 1) if n not in present]


def codec(path: Path) -> str | None:
    name = path.name.removesuffix(".inprogress")
    found = _CODECS.get(Path(name).suffix)
    if found == "lzf":
        raise UsageError(
            f"{path.name}: the lzf codec is not supported; re-encode with zstd, lz4 or snappy"
        )
    return found


@dataclass(frozen=True)
class Segment:
    """A piece of a log parsed on its own: a whole file, or a byte range of a plain one."""

    file: Path
    start: int = 0
    end: int | None = None  # None: to the end of the file
    last: bool = False  # the log's last segment (a cut last line there is a crash, not damage)

    @property
    def size(self) -> int:
        """About how many bytes of JSON it holds (event logs compress about tenfold)."""
        if self.end is not None:
            return self.end - self.start
        length = self.file.stat().st_size
        return length * 10 if codec(self.file) else length


def segments(files: list[Path], size: int | None = None) -> list[Segment]:
    """Cut the log into segments: compressed files whole, plain files at line ends."""
    size = size or SEGMENT
    out: list[Segment] = []
    for file in files:
        length = file.stat().st_size if file.is_file() else 0
        if codec(file) is not None or length <= size:
            out.append(Segment(file))
            continue
        cuts = [0]
        with file.open("rb") as handle:
            while cuts[-1] + size < length:
                handle.seek(cuts[-1] + size)
                handle.readline()  # the rest of the line the cut falls in
                if handle.tell() >= length:
                    break
                cuts.append(handle.tell())
        bounds = [*cuts, None]
        out.extend(Segment(file, a, b) for a, b in zip(bounds, bounds[1:], strict=False))
    if out:
        last = out[-1]
        out[-1] = Segment(last.file, last.start, last.end, last=True)
    return out


def pieces(segment: Segment, warnings: list[str]) -> Iterator[bytes]:
    """The segment's decompressed bytes, a piece at a time; damage ends it with a warning."""
    kind = codec(segment.file)
    with segment.file.open("rb") as handle:
        if kind is None:
            yield from _plain(handle, segment)
        elif kind == "zstd":
            yield from _zstd(handle, segment.file.name, warnings)
        elif kind == "lz4":
            yield from _lz4_java_blocks(handle, segment.file.name, warnings)
        else:
            yield from _snappy_java_stream(handle, segment.file.name, warnings)


def lines(segment: Segment, warnings: list[str]) -> Iterator[list[bytes]]:
    """The segment's lines, in batches (one per piece read), without their newlines."""
    rest = b""
    for piece in pieces(segment, warnings):
        batch = piece.split(b"\n")  # split, then mend the first line: no copy of the piece
        if rest:
            batch[0] = rest + batch[0]
        rest = batch.pop()
        if batch:
            yield batch
    if rest.strip():
        yield [rest]


def _plain(handle, segment: Segment) -> Iterator[bytes]:
    handle.seek(segment.start)
    left = None if segment.end is None else segment.end - segment.start
    while left is None or left > 0:
        piece = handle.read(PIECE if left is None else min(PIECE, left))
        if not piece:
            return
        if left is not None:
            left -= len(piece)
        yield piece


def _zstd(handle, name: str, warnings: list[str]) -> Iterator[bytes]:
    """Frame by frame, fed in small reads so that a piece stays near PIECE bytes however well
    the log compresses; a stream damaged or cut late keeps what came before. (zstandard's
    stream_reader would be simpler, but it ends a cut or damaged stream without a word.)"""
    import zstandard

    frame = zstandard.ZstdDecompressor().decompressobj()
    started, out, read = False, bytearray(), 0
    if (magic := handle.read(4)) and magic != _ZSTD_MAGIC:
        raise not_a_stream(name, "zstd", "no zstd frame header")
    handle.seek(0)
    while data := handle.read(16 << 10):  # small: damage loses at most this much
        read += len(data)
        while data:
            if started and frame.eof:
                frame = zstandard.ZstdDecompressor().decompressobj()
            started = True
            try:
                out += frame.decompress(data)
            except zstandard.ZstdError as exc:
                yield bytes(out)
                warnings.append(stream_damaged(name, "zstd", read, exc))
                return
            data = frame.unused_data if frame.eof else b""
        if len(out) >= PIECE:
            yield bytes(out)
            out.clear()
    if out:
        yield bytes(out)
    if started and not frame.eof:
        warnings.append(stream_cut(name, "zstd", read))


# Spark's lz4 and snappy codecs write the framing of lz4-java
# (LZ4BlockOutputStream) and snappy-java (SnappyOutputStream), which no Python
# library reads; the framing is a few fixed headers around raw blocks, which
# cramjam decompresses.
_LZ4_MAGIC = b"LZ4Block"
_SNAPPY_MAGIC = b"\x82SNAPPY\x00"


def _lz4_java_blocks(handle, name: str, warnings: list[str]) -> Iterator[bytes]:
    import cramjam

    pos = 0
    while True:
        header = handle.read(21)
        if not header:  # no end marker: as Spark's reader, take the blocks that are whole
            return
        if len(header) < 21:
            warnings.append(stream_cut(name, "lz4", pos))
            return
        if header[:8] != _LZ4_MAGIC:
            if pos == 0:
                raise not_a_stream(name, "lz4", "no LZ4Block header")
            warnings.append(stream_damaged(name, "lz4", pos, "no LZ4Block header"))
            return
        token = header[8]
        compressed_len, plain_len, _checksum = struct.unpack("<iii", header[9:21])
        if plain_len == 0:  # end-of-stream marker
            return
        body = handle.read(max(compressed_len, 0))
        if compressed_len < 0 or len(body) < compressed_len:
            warnings.append(stream_cut(name, "lz4", pos))
            return
        try:
            if token & 0xF0 == 0x10:  # stored uncompressed
                yield body
            else:
                yield bytes(cramjam.lz4.decompress_block(body, output_len=plain_len))
        except cramjam.DecompressionError as exc:
            warnings.append(stream_damaged(name, "lz4", pos, exc))
            return
        pos += 21 + compressed_len


def _snappy_java_stream(handle, name: str, warnings: list[str]) -> Iterator[bytes]:
    import cramjam

    if handle.read(8) != _SNAPPY_MAGIC:
        raise not_a_stream(name, "snappy", "no snappy-java header")
    handle.read(8)  # version, compatible version
    pos = 16
    while True:
        head = handle.read(4)
        if not head:
            return
        if len(head) < 4:
            warnings.append(stream_cut(name, "snappy", pos))
            return
        (length,) = struct.unpack(">i", head)
        chunk = handle.read(max(length, 0))
        if length < 0 or len(chunk) < length:
            warnings.append(stream_cut(name, "snappy", pos))
            return
        try:
            yield bytes(cramjam.snappy.decompress_raw(chunk))
        except cramjam.DecompressionError as exc:
            warnings.append(stream_damaged(name, "snappy", pos, exc))
            return
        pos += 4 + length
