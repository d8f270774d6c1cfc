"""Deterministic input generators (numpy, seeded): same seed and size, same bytes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

WORDS_PER_LINE = 10
VOCABULARY = 20_000
ZIPF_EXPONENT = 1.2  # word frequencies in text follow Zipf's law


def _vocabulary(rng: np.random.Generator, size: int) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 11, size=size)
    words = {"".join(rng.choice(letters, n)) for n in lengths}
    # distinct, in a stable order, topped up if random words collided
    ordered = sorted(words)
    while len(ordered) < size:
        ordered.append(f"w{len(ordered)}")
    return np.array(ordered[:size])


def zipf_text(directory: Path, lines: int, seed: int, files: int = 4) -> dict:
    """Lines of words drawn from a Zipfian vocabulary; returns totals the check needs."""
    rng = np.random.default_rng(seed)
    vocab = _vocabulary(rng, VOCABULARY)
    directory.mkdir(parents=True, exist_ok=True)
    total_words = 0
    seen = np.zeros(VOCABULARY, dtype=bool)
    per_file = -(-lines // files)
    written = 0
    for part in range(files):
        count = min(per_file, lines - written)
        if count <= 0:
            break
        ranks = rng.zipf(ZIPF_EXPONENT, size=count * WORDS_PER_LINE) - 1
        ranks = ranks[ranks < VOCABULARY]  # drop the rare ranks beyond the vocabulary
        seen[ranks] = True
        words = vocab[ranks]
        total_words += len(words)
        rows = [
            " ".join(words[i : i + WORDS_PER_LINE]) for i in range(0, len(words), WORDS_PER_LINE)
        ]
        (directory / f"part-{part:05d}.txt").write_text("\n".join(rows) + "\n")
        written += count
    return {"total_words": int(total_words), "distinct_words": int(seen.sum())}


def uservisits(directory: Path, rows: int, seed: int, files: int = 4) -> dict:
    """HiBench's uservisits table as Parquet; returns the totals the check needs."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    distinct_ips = max(1, rows // 10)
    ip_pool = np.array(
        [f"{a}.{b}.{c}.{d}" for a, b, c, d in rng.integers(1, 255, size=(distinct_ips, 4))]
    )
    total_revenue = 0.0
    used = np.zeros(distinct_ips, dtype=bool)
    per_file = -(-rows // files)
    written = 0
    for part in range(files):
        count = min(per_file, rows - written)
        if count <= 0:
            break
        ip_index = rng.integers(0, distinct_ips, size=count)
        used[ip_index] = True
        revenue = np.round(rng.random(count) * 1000.0, 4)
        total_revenue += float(revenue.sum())
        table = pa.table(
            {
                "sourceIP": ip_pool[ip_index],
                "destURL": np.char.add("http://site", rng.integers(0, 100_000, count).astype(str)),
                "visitDate": (np.datetime64("2000-01-01") + rng.integers(0, 10_000, count)).astype(
                    "datetime64[D]"
                ),
                "adRevenue": revenue,
                "userAgent": np.array(["Mozilla/5.0", "Opera/9.80", "curl/8.0"])[
                    rng.integers(0, 3, count)
                ],
                "countryCode": np.array(["USA", "DEU", "CHN", "BRA", "IND"])[
                    rng.integers(0, 5, count)
                ],
                "languageCode": np.array(["en", "de", "zh", "pt", "hi"])[rng.integers(0, 5, count)],
                "searchWord": np.char.add("q", rng.integers(0, 1000, count).astype(str)),
                "duration": rng.integers(1, 100, count).astype(np.int32),
            }
        )
        pq.write_table(table, directory / f"part-{part:05d}.parquet")
        written += count
    return {"distinct_ips": int(used.sum()), "total_revenue": total_revenue}
