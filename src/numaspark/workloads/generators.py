"""Deterministic input generators (numpy, seeded): the same seed, size and parameters give
the same bytes. Each returns the facts its workload's check compares the answer with.

Record generators write ``FILES`` parts in parallel, one process each (up to
the CPUs this process may use). Each part draws from its own stream,
``SeedSequence(seed).spawn(FILES)[part]``, so the bytes do not depend on how
many processes ran; what the parts share (vocabulary, centres, hyperplane)
comes from ``default_rng(seed)`` first. Graph generators are not split: their
facts (components, triangles) need the whole edge list.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

WORDS_PER_LINE = 10
VOCABULARY = 20_000
ZIPF_EXPONENT = 1.2  # word frequencies in text follow Zipf's law
FILES = 4  # inputs are split in a few files so that reads run in parallel


def _split(rows: int, files: int = FILES) -> list[int]:
    per = -(-rows // files)
    counts = [min(per, rows - i * per) for i in range(files)]
    return [c for c in counts if c > 0]


PARALLEL_FROM_ROWS = 100_000  # below this, starting processes costs more than it saves


def _workers() -> int:
    configured = os.environ.get("NUMASPARK_GEN_WORKERS")
    if configured:
        return max(1, int(configured))
    return max(1, len(os.sched_getaffinity(0)))


def _in_parts(rows: int, seed: int, write_part: Callable, *shared) -> list:
    """``write_part(part, count, first_row, rng, *shared)`` for every part, in parallel.

    Returns what each part returned, in part order (callers merge them in that
    order, so sums of floats come out the same every time).
    """
    counts = _split(rows)
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()
    seeds = np.random.SeedSequence(seed).spawn(len(counts))
    jobs = [
        (part, count, first, seeds[part])
        for part, (count, first) in enumerate(zip(counts, firsts, strict=True))
    ]
    workers = min(len(jobs), _workers())
    if workers == 1 or rows < PARALLEL_FROM_ROWS:
        return [_run_part(write_part, job, shared) for job in jobs]
    # forked workers inherit ``shared`` (vocabularies, IP and URL pools) instead of
    # receiving a pickled copy per part, which cost more than the parallelism won
    global _SHARED
    _SHARED = (write_part, shared)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            return list(pool.map(_run_inherited, jobs))
    finally:
        _SHARED = None


_SHARED: tuple | None = None


def _run_inherited(job: tuple):
    write_part, shared = _SHARED
    return _run_part(write_part, job, shared)


def _run_part(write_part: Callable, job: tuple, shared: tuple):
    part, count, first, seed = job
    return write_part(part, count, first, np.random.default_rng(seed), *shared)


def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 11, size=size)
    words = {"".join(rng.choice(letters, n)) for n in lengths}
    ordered = sorted(words)  # distinct, in a stable order, topped up if random words collided
    while len(ordered) < size:
        ordered.append(f"w{len(ordered)}")
    return np.array(ordered[:size])


def zipf_text(directory: Path, lines: int, seed: int, keyword_rank: int = 100) -> dict:
    """Lines of 10 words drawn from a Zipfian vocabulary; the keyword is the word of that rank."""
    vocab = _vocabulary(np.random.default_rng(seed), VOCABULARY)
    directory.mkdir(parents=True, exist_ok=True)
    parts = _in_parts(lines, seed, _zipf_part, directory, vocab, keyword_rank)
    seen = np.logical_or.reduce([p[0] for p in parts])
    return {
        "lines": lines,
        "total_words": lines * WORDS_PER_LINE,
        "distinct_words": int(seen.sum()),
        "keyword": str(vocab[keyword_rank]),
        "keyword_lines": sum(p[1] for p in parts),
    }


def _zipf_part(part, count, first, rng, directory: Path, vocab: np.ndarray, keyword_rank: int):
    ranks = (rng.zipf(ZIPF_EXPONENT, size=(count, WORDS_PER_LINE)) - 1) % len(vocab)
    seen = np.zeros(len(vocab), dtype=bool)
    seen[ranks.ravel()] = True
    keyword_lines = int((ranks == keyword_rank).any(axis=1).sum())
    with_space = np.char.add(vocab, " ").astype(object)
    with_newline = np.char.add(vocab, "\n").astype(object)
    last_word = np.arange(WORDS_PER_LINE) == WORDS_PER_LINE - 1
    # every word carries its separator: a space, or a newline after the line's last word
    tokens = np.where(last_word, with_newline[ranks], with_space[ranks])
    (directory / f"part-{part:05d}.txt").write_text("".join(tokens.ravel().tolist()))
    return seen, keyword_lines


def key_value_text(directory: Path, rows: int, seed: int) -> dict:
    """``key<TAB>value`` lines: 10-letter random keys, 88-letter values (~100 bytes a line)."""
    directory.mkdir(parents=True, exist_ok=True)
    _in_parts(rows, seed, _key_value_part, directory)
    return {"rows": rows}


def _key_value_part(part, count, first, rng, directory: Path) -> None:
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    raw = letters[rng.integers(0, 26, size=(count, 98))]
    raw = np.concatenate(
        [
            raw[:, :10],
            np.full((count, 1), ord("\t"), np.uint8),
            raw[:, 10:],
            np.full((count, 1), ord("\n"), np.uint8),
        ],
        axis=1,
    )
    (directory / f"part-{part:05d}.txt").write_bytes(raw.tobytes())


def tera_records(directory: Path, rows: int, seed: int) -> dict:
    """TeraGen-style 100-byte binary records: a 10-byte random key, an 8-byte row id, filler.

    The checksum (sum of each record's first key word and row id, mod 2^64) is
    the same whatever the order: a sort that loses or repeats a record changes it.
    """
    directory.mkdir(parents=True, exist_ok=True)
    checksum = sum(_in_parts(rows, seed, _tera_part, directory)) % (1 << 64)
    return {"rows": rows, "checksum": str(checksum)}


def _tera_part(part, count, first, rng, directory: Path) -> int:
    records = np.empty((count, 100), dtype=np.uint8)
    records[:, :10] = rng.integers(0, 256, size=(count, 10), dtype=np.uint8)
    ids = np.arange(first, first + count, dtype=">u8")
    records[:, 10:18] = ids.view(np.uint8).reshape(count, 8)
    records[:, 18:] = ord("x")
    key_words = records[:, :8].copy().view(">u8").ravel().astype(object)
    (directory / f"part-{part:05d}.bin").write_bytes(records.tobytes())
    return (int(sum(key_words)) + int(ids.astype(object).sum())) % (1 << 64)


def _ip_pool(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` distinct IPv4 addresses (random addresses collide: birthday problem)."""
    numbers = rng.choice(1 << 32, size=count, replace=False)
    octets = (numbers[:, None] >> np.array([24, 16, 8, 0])) & 255
    return np.array([f"{a}.{b}.{c}.{d}" for a, b, c, d in octets.tolist()])


EPOCH = np.datetime64("2000-01-01")
DAYS = 10_000


def uservisits(
    directory: Path,
    rows: int,
    seed: int,
    urls: int | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
) -> dict:
    """HiBench's uservisits table as Parquet, with the totals the SQL checks need.

    ``urls``: destination URLs are drawn from ``http://site<i>`` for i < urls (the
    rankings table's pages); ``date_from``/``date_to``: the join's date range.
    """
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    distinct_ips = max(1, rows // 10)
    ip_pool = _ip_pool(rng, distinct_ips)
    urls = urls or 100_000
    lo = (np.datetime64(date_from) - EPOCH).astype(int) if date_from else None
    hi = (np.datetime64(date_to) - EPOCH).astype(int) if date_to else None
    url_pool = np.char.add("http://site", np.arange(urls).astype(str))
    search_pool = np.char.add("q", np.arange(1000).astype(str))
    parts = _in_parts(
        rows, seed, _uservisits_part, directory, ip_pool, url_pool, search_pool, lo, hi
    )
    used = np.logical_or.reduce([p[0] for p in parts])
    used_in_range = np.logical_or.reduce([p[1] for p in parts])
    total_revenue = sum(p[2] for p in parts)
    range_revenue = sum(p[3] for p in parts)
    facts = {"rows": rows, "distinct_ips": int(used.sum()), "total_revenue": total_revenue}
    if lo is not None:
        facts.update({"range_revenue": range_revenue, "range_ips": int(used_in_range.sum())})
    return facts


def _uservisits_part(part, count, first, rng, directory, ip_pool, url_pool, search_pool, lo, hi):
    import pyarrow as pa
    import pyarrow.parquet as pq

    ip_index = rng.integers(0, len(ip_pool), size=count)
    used = np.zeros(len(ip_pool), dtype=bool)
    used[ip_index] = True
    used_in_range = np.zeros(len(ip_pool), dtype=bool)
    revenue = np.round(rng.random(count) * 1000.0, 4)
    days = rng.integers(0, DAYS, count)
    range_revenue = 0.0
    if lo is not None and hi is not None:
        inside = (days > lo) & (days < hi)
        range_revenue = float(revenue[inside].sum())
        used_in_range[ip_index[inside]] = True
    pick = rng.integers  # the columns, each from the part's own stream in a fixed order
    table = pa.table(
        {
            "sourceIP": ip_pool[ip_index],
            "destURL": url_pool[pick(0, len(url_pool), count)],
            "visitDate": (EPOCH + days).astype("datetime64[D]"),
            "adRevenue": revenue,
            "userAgent": np.array(["Mozilla/5.0", "Opera/9.80", "curl/8.0"])[pick(0, 3, count)],
            "countryCode": np.array(["USA", "DEU", "CHN", "BRA", "IND"])[pick(0, 5, count)],
            "languageCode": np.array(["en", "de", "zh", "pt", "hi"])[pick(0, 5, count)],
            "searchWord": search_pool[pick(0, len(search_pool), count)],
            "duration": pick(1, 100, count).astype(np.int32),
        }
    )
    pq.write_table(table, directory / f"part-{part:05d}.parquet")
    return used, used_in_range, float(revenue.sum()), range_revenue


def rankings_and_uservisits(
    directory: Path, rows: int, seed: int, date_from: str, date_to: str
) -> dict:
    """HiBench join input: ``rankings`` (one row per page) and ``uservisits`` visiting those pages."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pages = max(10, rows // 10)
    rng = np.random.default_rng(seed + 1)
    (directory / "rankings").mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.table(
            {
                "pageURL": np.char.add("http://site", np.arange(pages).astype(str)),
                "pageRank": rng.integers(1, 1000, pages).astype(np.int32),
                "avgDuration": rng.integers(1, 100, pages).astype(np.int32),
            }
        ),
        directory / "rankings" / "part-00000.parquet",
    )
    facts = uservisits(
        directory / "uservisits", rows, seed, urls=pages, date_from=date_from, date_to=date_to
    )
    facts["pages"] = pages
    return facts


def _write_points(
    directory: Path, part: int, features: np.ndarray, label: np.ndarray | None
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {"features": pa.array(list(features), type=pa.list_(pa.float64()))}
    if label is not None:
        columns["label"] = pa.array(label, type=pa.float64())
    pq.write_table(pa.table(columns), directory / f"part-{part:05d}.parquet")


def gaussian_mixture(directory: Path, rows: int, seed: int, k: int, dims: int) -> dict:
    """Points around ``k`` well-separated centres (unit variance); the centres are the facts."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    centres = np.zeros((k, dims))
    for i in range(k):  # rejection: every pair of centres at least 20 apart
        while True:
            candidate = rng.uniform(-100, 100, dims)
            if all(np.linalg.norm(candidate - c) >= 20 for c in centres[:i]):
                centres[i] = candidate
                break
    _in_parts(rows, seed, _mixture_part, directory, centres)
    return {"rows": rows, "centres": centres.round(6).tolist()}


def _mixture_part(part, count, first, rng, directory: Path, centres: np.ndarray) -> None:
    labels = rng.integers(0, len(centres), count)
    noise = rng.normal(0, 1, (count, centres.shape[1]))
    _write_points(directory, part, centres[labels] + noise, None)


def labelled_points(directory: Path, rows: int, seed: int, dims: int, noise: float) -> dict:
    """Linearly separable points (a random hyperplane through 0), a share ``noise`` of labels flipped."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    weights = rng.normal(0, 1, dims)
    _in_parts(rows, seed, _labelled_part, directory, weights, noise)
    return {"rows": rows, "noise": noise}


def _labelled_part(part, count, first, rng, directory: Path, weights, noise: float) -> None:
    features = rng.normal(0, 1, (count, len(weights)))
    label = (features @ weights > 0).astype(float)
    flip = rng.random(count) < noise
    label[flip] = 1 - label[flip]
    _write_points(directory, part, features, label)


def labelled_documents(directory: Path, rows: int, seed: int, classes: int) -> dict:
    """Short documents; each class draws most words from its own vocabulary."""
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng, 1000 * (classes + 1))
    directory.mkdir(parents=True, exist_ok=True)
    _in_parts(rows, seed, _documents_part, directory, vocab, classes)
    return {"rows": rows, "classes": classes}


def _documents_part(part, count, first, rng, directory: Path, vocab, classes: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    labels = rng.integers(0, classes, count)
    own = rng.integers(0, 1000, (count, 16)) + 1000 * (labels[:, None] + 1)
    common = rng.integers(0, 1000, (count, 4))
    words = vocab[np.concatenate([own, common], axis=1)]
    pq.write_table(
        pa.table({"label": labels.astype(float), "text": [" ".join(w) for w in words]}),
        directory / f"part-{part:05d}.parquet",
    )


def rmat_edges(
    rng: np.random.Generator, vertices: int, edges: int, probabilities=(0.57, 0.19, 0.19, 0.05)
) -> np.ndarray:
    """R-MAT (Chakrabarti et al.): power-law degrees, as in Graph500 and HiBench."""
    scale = max(1, math.ceil(math.log2(vertices)))
    src = np.zeros(edges, dtype=np.int64)
    dst = np.zeros(edges, dtype=np.int64)
    a, b, c, _ = probabilities
    for bit in range(scale):
        r = rng.random(edges)
        right = (r >= a) & (r < a + b) | (r >= a + b + c)
        down = r >= a + b
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    keep = (src < vertices) & (dst < vertices) & (src != dst)
    return np.stack([src[keep], dst[keep]], axis=1)


def power_law_graph(
    directory: Path,
    vertices: int,
    seed: int,
    components: int = 1,
    degree: int = 8,
    count_triangles: bool = False,
) -> dict:
    """R-MAT edges in ``components`` disjoint vertex ranges, each made connected by a ring.

    The ring also gives every vertex an out-edge, so PageRank has no dangling mass.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, vertices, components + 1).astype(np.int64)
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        size = int(hi - lo)
        ring = (
            np.stack([np.arange(size), (np.arange(size) + 1) % size], axis=1)
            if size > 1
            else np.empty((0, 2), np.int64)
        )
        parts.append(np.concatenate([rmat_edges(rng, size, size * degree), ring]) + lo)
    edges = np.unique(np.concatenate(parts), axis=0)
    edges = edges[edges[:, 0] != edges[:, 1]]
    for part, chunk in enumerate(np.array_split(edges, FILES)):
        pq.write_table(
            pa.table({"src": chunk[:, 0], "dst": chunk[:, 1]}),
            directory / f"part-{part:05d}.parquet",
        )
    facts = {"vertices": vertices, "edges": int(len(edges)), "components": components}
    if count_triangles:
        facts["triangles"] = _triangles(edges, vertices)
    return facts


def _triangles(edges: np.ndarray, vertices: int) -> int:
    """Triangles of the undirected simple graph, each counted once.

    Edges are oriented from lower to higher (degree, id), the usual trick that
    keeps the hubs of a power-law graph from making the wedge count explode;
    then triangles = sum((U @ U) * U) with scipy's sparse matrices.
    """
    from scipy import sparse

    undirected = np.unique(np.sort(edges, axis=1), axis=0)
    degree = np.bincount(undirected.ravel(), minlength=vertices)
    order = np.lexsort((np.arange(vertices), degree))  # vertices by (degree, id)
    rank = np.empty(vertices, dtype=np.int64)
    rank[order] = np.arange(vertices)
    low = np.where(
        rank[undirected[:, 0]] < rank[undirected[:, 1]], undirected[:, 0], undirected[:, 1]
    )
    high = np.where(
        rank[undirected[:, 0]] < rank[undirected[:, 1]], undirected[:, 1], undirected[:, 0]
    )
    ones = np.ones(len(undirected))
    upper = sparse.csr_matrix((ones, (low, high)), shape=(vertices, vertices))
    return int((upper @ upper).multiply(upper).sum())
