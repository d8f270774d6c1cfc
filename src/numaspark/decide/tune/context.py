"""Context: the columns of a table that describe the job or its input (the workload, the
dataset and its size; `columns.context_columns`), held fixed. A table of several jobs holds
several searches: the search runs within each context (each distinct combination of the
context columns' values), over that context's rows, and never moves a context column (a
smaller input or another job is not a better configuration)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from numaspark import records
from numaspark.decide.tune.space import Objective, Params, Space, TuneResult
from numaspark.errors import UsageError


@dataclass
class Context:
    """One context: its columns' values (empty: a table without context, or live runs), the
    search space of the knobs within it, and the objective that asks for a knob
    configuration with those values."""

    values: dict[str, object]
    space: Space
    objective: Objective
    columns: list[str]  # every column of the table, in its order (context and knobs)

    def label(self) -> str:
        """``algorithm=grep, dataset_size_bytes=3232000000000`` ("": no context)."""
        return ", ".join(f"{name}={value}" for name, value in self.values.items())

    def named(self, what: str) -> str:
        """``what`` (the workload, the table) with the context's values, if any."""
        return f"{what} {self.label()}" if self.values else what

    def row(self, params: Params) -> Params:
        """A knob configuration with the context's values: a whole row of the table."""
        both = {**self.values, **params}
        return {name: both[name] for name in self.columns if name in both}

    def whole(self, result: TuneResult) -> TuneResult:
        """``result`` with each trial's params a whole row (the context's values with it)."""
        trials = [dataclasses.replace(t, params=self.row(t.params)) for t in result.trials]
        return dataclasses.replace(result, trials=trials)


@dataclass
class Contexts:
    """A search space split by its context columns: ``held`` (column -> why it is context:
    ``declared`` or ``from its name``) and each context, in the order of their values."""

    held: dict[str, str]
    each: list[Context]

    def describe(self) -> str:
        """One line: which columns were held fixed, why, and how many contexts ("": none)."""
        if not self.held:
            return ""
        said = ", ".join(
            f"{column} (declared)"
            if why == "declared"
            else f"{column} (from its name: --column {column}=knob if not)"
            for column, why in self.held.items()
        )
        return (
            f"context, held fixed: {said}; the search runs within each of its "
            f"{len(self.each)} combination(s) of values"
        )

    def searched(self, search: Callable[[Context], TuneResult]) -> list[tuple[Context, TuneResult]]:
        """Each context with what ``search`` found in it, its trials whole rows."""
        return [(context, context.whole(search(context))) for context in self.each]

    def document(self, searched: list[tuple[Context, TuneResult]]) -> dict:
        """``tune --json`` without its schema (docs/schemas.md): the held line, and per context
        its values and its search."""
        return {
            "held": self.describe(),
            "contexts": [
                {"context": context.values, **records.dump(found)} for context, found in searched
            ],
        }


def split(space: Space, objective: Objective, held: dict[str, str]) -> Contexts:
    """``space`` as one search per context of the ``held`` columns (column -> why): the
    knobs' candidates of the rows with those values, their values those rows have; each
    context's objective asks ``objective`` with the context's values added. No held column:
    one search of the whole space."""
    if not held:
        return Contexts({}, [Context({}, space, objective, space.names)])
    knobs = [name for name in space.names if name not in held]
    if not knobs:
        raise UsageError(
            f"every parameter column is context ({', '.join(held)}): nothing to search; give "
            "--column NAME=knob for a column that is a setting"
        )
    at = [space.names.index(name) for name in held]
    kept = [space.names.index(name) for name in knobs]
    groups: dict[tuple, list[tuple]] = {}
    for candidate in space.candidates:
        key = tuple(candidate[i] for i in at)
        groups.setdefault(key, []).append(tuple(candidate[i] for i in kept))
    position = {name: {v: i for i, v in enumerate(space.values[name])} for name in held}
    contexts = []
    for key in sorted(groups, key=lambda k: [position[n][v] for n, v in zip(held, k, strict=True)]):
        candidates = groups[key]
        present = [{c[j] for c in candidates} for j in range(len(knobs))]
        values = {
            name: [v for v in space.values[name] if v in present[j]] for j, name in enumerate(knobs)
        }
        fixed = dict(zip(held, key, strict=True))
        contexts.append(
            Context(fixed, Space(values, candidates), _within(objective, fixed), space.names)
        )
    return Contexts(dict(held), contexts)


def _within(objective: Objective, fixed: dict[str, object]) -> Objective:
    """``objective`` asked for a knob configuration with the context's values."""

    def asked(params: Params):
        return objective({**fixed, **params})

    return asked
