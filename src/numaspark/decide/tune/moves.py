"""The tuner's local moves: the runnable neighbours of a configuration, one move away, and
each move in words."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from numaspark.decide.tune.machine import shape
from numaspark.decide.tune.models import Prior
from numaspark.decide.tune.space import Space

Move = tuple  # how a neighbour differs: (kind, column(s), direction), for its name and σ


@dataclass(frozen=True)
class _Board:
    """What every column's move reads: the space, the rules (ties between the nearest
    candidates of a sparse table go to the one they penalise least) and the candidates that
    can run."""

    space: Space
    prior: Prior
    feasible: frozenset[tuple]


def neighbours(
    space: Space, candidate: tuple, prior: Prior, fine: bool
) -> list[tuple[tuple, Move]]:
    """The runnable candidates one move from ``candidate``, with their moves.

    Coarse moves (``fine`` False) change the layout in the machine's terms: twice or half the
    executors, twice or half the cores per executor, or the same threads shaped otherwise
    (twice the executors of half the cores, and the reverse), each landing on the table's
    nearest values; every other column moves one value (an ordered column's next either way,
    any other value of a category). Fine moves step every column one value either way (and
    the two diagonals of each pair of layout columns), once coarse moves found no better."""
    board = _Board(space, prior, frozenset(space.candidates))
    layout = {
        prior.roles.get(n): i
        for i, n in enumerate(space.names)
        if prior.roles.get(n) in LAYOUT_NAMES and space.ordered(n)
    }
    count = layout.get("executors", layout.get("executors_per_node"))
    width = layout.get("cores_per_executor")
    coarse_layout = not fine and count is not None and width is not None
    moves: list[tuple[tuple, Move]] = []
    if coarse_layout:
        assert count is not None and width is not None
        moves += _layout_moves(space, candidate, count, width)
    for index in range(len(space.names)):
        if not (coarse_layout and index in (count, width)):
            moves += _column_moves(board, candidate, index)
    if fine:
        moves += _diagonal_moves(board, candidate, sorted(layout.values()))
    found: dict[tuple, Move] = {}
    for other, move in moves:
        found.setdefault(other, move)  # a candidate two moves reach: the first move's
    found.pop(candidate, None)
    return list(found.items())


def _layout_moves(
    space: Space, candidate: tuple, count: int, width: int
) -> list[tuple[tuple, Move]]:
    """Twice or half the executors (column ``count``) or the cores per executor (``width``),
    or the same threads shaped otherwise: each the candidate equal elsewhere nearest the aim,
    within 0.6 of a doubling of it."""
    e, c = float(candidate[count]), float(candidate[width])  # type: ignore[arg-type]
    same = space.same_except(candidate, (count, width))
    found: list[tuple[tuple, Move]] = []
    for fe, fc in ((2, 1), (0.5, 1), (1, 2), (1, 0.5), (2, 0.5), (0.5, 2)):
        best, error = None, 0.6  # within 0.6 of a doubling of the aim
        for other in same:
            miss = abs(math.log2(float(other[count]) / (e * fe))) + abs(
                math.log2(float(other[width]) / (c * fc))
            )
            if miss < error and other != candidate:
                best, error = other, miss
        if best is not None:
            found.append((best, ("layout", fe, fc)))
    return found


def _column_moves(board: _Board, candidate: tuple, index: int) -> list[tuple[tuple, Move]]:
    """One column's moves: an ordered column's next value either way (`_stepped`) and twice or
    half its value (`scaled`); a category's every other value that can run."""
    space = board.space
    name = space.names[index]
    found: list[tuple[tuple, Move]] = []
    if space.ordered(name):
        for step in (-1, 1):
            landed = _stepped(board, candidate, index, step)
            if landed is not None:
                found.append(landed)
        for factor, other in scaled(space, candidate, index):
            found.append((other, ("scale", index, factor)))
    else:
        for value in space.values[name]:
            if value != candidate[index]:
                other = (*candidate[:index], value, *candidate[index + 1 :])
                if other in board.feasible:
                    found.append((other, ("set", index, value)))
    return found


def _stepped(board: _Board, base: tuple, index: int, step: int) -> tuple[tuple, Move] | None:
    """The next value of column ``index`` that can run with the others as they are; on a
    sparse table where none can, the runnable candidate of the column's next value that is
    nearest in the other columns (a node shape: more nodes of other memory)."""
    space, prior = board.space, board.prior
    values = space.values[space.names[index]]
    position = values.index(base[index]) + step
    while 0 <= position < len(values):
        other = (*base[:index], values[position], *base[index + 1 :])
        if other in board.feasible:
            return other, ("step", index, step)
        position += step
    position = values.index(base[index]) + step
    while 0 <= position < len(values):
        there = [c for c in space.candidates if c[index] == values[position]]
        if there:
            nearest = min(there, key=lambda c: (space.distance(c, base), prior.penalty[c]))
            return nearest, ("near", index, step)
        position += step
    return None


def _diagonal_moves(
    board: _Board, candidate: tuple, columns: list[int]
) -> list[tuple[tuple, Move]]:
    """Fine moves of the layout: of each pair of ``columns``, one a value up and the other a
    value down."""
    space = board.space
    found: list[tuple[tuple, Move]] = []
    for a, b in itertools.combinations(columns, 2):
        for step in (-1, 1):
            values_a, values_b = space.values[space.names[a]], space.values[space.names[b]]
            ia, ib = values_a.index(candidate[a]) + step, values_b.index(candidate[b]) - step
            if 0 <= ia < len(values_a) and 0 <= ib < len(values_b):
                other = list(candidate)
                other[a], other[b] = values_a[ia], values_b[ib]
                if tuple(other) in board.feasible:
                    found.append((tuple(other), ("diagonal", a, step, b)))
    return found


LAYOUT_NAMES = ("executors", "executors_per_node", "cores_per_executor", "slots")


def scaled(space: Space, candidate: tuple, index: int) -> list[tuple[float, tuple]]:
    """Twice and half a positive numeric column's value (the runnable candidate equal
    elsewhere whose value is nearest, within 0.6 of a doubling): along any ordered column,
    6 to 12 nodes is one move, not three steps."""
    value = candidate[index]
    if not isinstance(value, (int, float)) or value <= 0:
        return []
    found = []
    for factor in (2.0, 0.5):
        best, error = None, 0.6
        for other in space.same_except(candidate, (index,)):
            there = other[index]
            if other == candidate or not isinstance(there, (int, float)) or there <= 0:
                continue
            miss = abs(math.log2(there / (value * factor)))
            if miss < error:
                best, error = other, miss
        if best is not None:
            found.append((factor, best))
    return found


def _as_move(space: Space, prior: Prior, wanted: Move) -> Move | None:
    """A hint's move in `neighbours`' terms: a layout move as is, an axis as a step of the
    column that plays that role."""
    if wanted[0] == "layout":
        return wanted
    column = next((c for c, n in prior.roles.items() if n == wanted[1]), None)
    if column is None or not space.ordered(column):
        return None
    return ("step", space.names.index(column), wanted[2])


def _shape_text(prior: Prior, candidate: tuple) -> str:
    """The candidate in the machine's units (executors x cores x threads per core)."""
    found = shape(prior._named(candidate), prior.machine)
    if not (found.threads_per_core and found.cores_per_executor):
        return ""
    return found.describe(smt=prior.machine.smt > 1)


def _move_text(
    space: Space, move: Move, prior: Prior | None = None, candidate: tuple | None = None
) -> str:
    """The move in words; with ``candidate``, where it lands in the machine's units."""
    text = _move_words(space, move)
    where = _shape_text(prior, candidate) if prior is not None and candidate is not None else ""
    return f"{text}, to {where}" if where else text


def _move_words(space: Space, move: Move) -> str:
    kind = move[0]
    if kind == "layout":
        _, fe, fc = move
        words = {2: "twice", 0.5: "half"}
        parts = [
            f"{words[fe]} the executors" if fe != 1 else "",
            f"{words[fc]} the cores per executor" if fc != 1 else "",
        ]
        return ", ".join(p for p in parts if p)
    if kind == "diagonal":
        _, a, step, b = move
        more, fewer = (
            (space.names[a], space.names[b]) if step > 0 else (space.names[b], space.names[a])
        )
        return f"more {more}, fewer {fewer}"
    if kind == "step":
        return f"{'more' if move[2] > 0 else 'fewer'} {space.names[move[1]]}"
    if kind == "near":
        return (
            f"{'more' if move[2] > 0 else 'fewer'} {space.names[move[1]]} (the nearest "
            "configuration that can run)"
        )
    if kind == "scale":
        return f"{'twice' if move[2] > 1 else 'half'} the {space.names[move[1]]}"
    return f"{space.names[move[1]]} {move[2]}"
