"""Generate a workload's input once, with a manifest, and reuse it when asked again."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.workloads import get_workload
from numaspark.workloads.registry import Size, Workload

MANIFEST = "manifest.json"
DEFAULT_SEED = 42


def default_data_root() -> Path:
    return Path(os.environ.get("NUMASPARK_DATA", "numaspark-data")).resolve()


def generate(
    name: str, size: str, seed: int = DEFAULT_SEED, root: Path | None = None
) -> tuple[Path, dict]:
    """``numaspark datagen``: a batch workload's input, by name and size."""

    workload = get_workload(name)
    if workload.streaming:
        raise UsageError(
            f"{name} reads numaspark's live event source, nothing to generate: "
            f"run it with numaspark run {name} --rate 1000 --duration 60s"
        )
    return prepare_input(workload, workload.size(size), seed, root)


def prepare_input(
    workload: Workload, size: Size, seed: int = DEFAULT_SEED, root: Path | None = None
) -> tuple[Path, dict]:
    """The input directory and its manifest; generated on first use, reused after."""
    root = (root or default_data_root()).resolve()
    # parameters that shape the data (k, dims, components, ...) are part of its name
    tag = hashlib.sha256(json.dumps(workload.params, sort_keys=True).encode()).hexdigest()[:8]
    target = root / workload.name / f"{size.rows}rows-seed{seed}-{tag}"
    manifest_path = target / MANIFEST
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text())
        if _files_bytes(target) == manifest.get("bytes"):
            return target / "input", manifest
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    started = time.perf_counter()
    facts = workload.generator(partial / "input", size, seed, dict(workload.params))
    elapsed = time.perf_counter() - started
    manifest = {
        "schema": "numaspark.dataset/1",
        "workload": workload.name,
        "params": workload.params,
        "size": size.label,
        "rows": size.rows,
        "seed": seed,
        "facts": facts,
        "bytes": _files_bytes(partial),
        "sha256": _checksum(partial / "input"),
        "generation_s": round(elapsed, 3),
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    (partial / MANIFEST).write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(target, ignore_errors=True)
    partial.replace(target)
    return target / "input", manifest


def _files_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in (directory / "input").rglob("*") if p.is_file())


def _checksum(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(path.name.encode())
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()
