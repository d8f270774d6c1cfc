"""Replay: a recorded table instead of Spark, to compare strategies offline
(bench/tune_replay.py) and for ``numaspark tune --replay``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from numaspark.decide.tune.space import Objective, Params, Space
from numaspark.errors import UsageError


def _native(value: object) -> object:
    """numpy/pandas scalars as Python's, so they print as JSON and compare as keys."""
    if hasattr(value, "item"):
        value = value.item()  # type: ignore[union-attr]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def read_table(
    path: Path, minimize: str, skipped: list[str] | None = None
) -> tuple[Space, dict[tuple, float]]:
    """A recorded table: one row per configuration, ``minimize`` is the value, every other
    column a parameter (its distinct values form the space; absent rows cannot run). Rows
    whose value is not a finite number are left out and said in ``skipped``."""
    import pandas as pd

    if not path.is_file():
        what = "is a directory" if path.is_dir() else "does not exist"
        raise UsageError(f"{path} {what}: give a CSV with one row per configuration")
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path} is not a CSV table: {' '.join(str(exc).split())}") from None
    if minimize not in frame.columns:
        raise UsageError(
            f"{path} has no column {minimize!r}; its columns: {', '.join(map(str, frame.columns))}"
        )
    names = [c for c in frame.columns if c != minimize]
    if not names:
        raise UsageError(f"{path}: no parameter columns beside {minimize!r}")
    values = pd.to_numeric(frame[minimize], errors="coerce")
    usable = values.notna() & np.isfinite(values.fillna(0)) & (values.fillna(0) > 0)
    if not usable.all() and usable.any() and skipped is not None:
        rows = [str(i + 2) for i in np.flatnonzero(~usable.to_numpy())]  # + header, 1-based
        skipped.append(
            f"{path}: {len(rows)} row(s) without a positive finite {minimize} left "
            f"out (line {', '.join(rows[:5])}{' ...' if len(rows) > 5 else ''})"
        )
    frame = frame[usable].assign(**{minimize: values[usable]})
    if frame.empty:
        raise UsageError(f"{path}: column {minimize!r} has no numbers (positive and finite)")
    if frame[names].isna().any().any():
        raise UsageError(f"{path}: a parameter cell is empty; every row needs every parameter")
    space_values = {}
    for name in names:
        distinct = [_native(v) for v in frame[name].unique()]
        try:
            distinct.sort()
        except TypeError:
            distinct = sorted(distinct, key=str)
        space_values[name] = distinct
    table: dict[tuple, list[float]] = {}
    for record in frame.to_dict("records"):
        key = tuple(_native(record[n]) for n in names)
        table.setdefault(key, []).append(float(record[minimize]))  # repeats: their median
    lookup = {k: float(np.median(v)) for k, v in table.items()}
    if len(lookup) < 2:
        raise UsageError(
            f"{path}: one configuration only: nothing to choose between (give a "
            "table of two or more)"
        )
    return Space(space_values, sorted(lookup, key=str)), lookup


def replay_objective(lookup: dict[tuple, float], space: Space) -> Objective:
    def objective(params: Params) -> float | None:
        return lookup.get(tuple(params[n] for n in space.names))

    return objective
