"""Told against untold (issue 48): the tuner told each table's machine, against told none.

The tables are bench/tune_replay.py's: those recorded here (bench/tables, each with its
machine in <name>.json) and the model tables of bench/tune_models.py on each large machine of
MACHINES (real servers' hwloc XML and synthetic descriptions), noise-free and draws
0..N-1 of their noise; with --crossed, also every model profile in both layouts (the
bench's model tables lay two profiles out as published grids and two as numaspark's, so a
set of one layout is also a set of profiles); with --public DIR, also the public tables
bench/public_tables.py wrote.

Told is `numaspark tune --replay T` given the table's machine (--xml/--synthetic, or the
recorded table's sidecar); untold is the same without it: the rules then take the table's
largest layout for one node of that many threads (tune_replay.py --untold). The public
tables record no machine (clusters of cloud VMs): there told is untold by construction, each
replayed once and shown on both sides.

For each table and seeds 0..S-1 (the tuner with its early stop, as the CLI has it): the median
evaluations to within 5% and to within 10% of the table's best (a seed that never gets there
counts as budget + 1), told and untold. For each set of tables (recorded; model noise-free;
model draw N; crossed ...; public) and, for the models, each layout (published grids: workers x
cores_per_worker, unbound, as the studies published them; numaspark's: executors x
cores_per_executor x binding): the sums and the medians of those medians, and on how many
tables told needed more runs than untold, and fewer. --save writes the rows (JSON); --before
FILE, the --save of another run (the code before a change), prints every figure as
before -> after.

The model tables are models of the studies' findings, as the rules are: where both share an
assumption (GC per task thread of a JVM, say) they agree by construction, so a rule they
favour is not validated by them; the recorded and public tables are the measurements.

    nice -n 10 .venv/bin/python bench/tune_told.py [--seeds 20] [--budget 20] [--draws 3]
        [--crossed] [--public DIR] [--only TEXT] [--save FILE] [--before FILE] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from tune_models import MACHINES, PROFILES, evaluations_to, model_table
from tune_replay import TOPOLOGIES, machine_of, model_tables, recorded_tables, tuner_values

from numaspark.decide.tune import read_table

SHARES = (0.05, 0.10)
GRID, OURS = "published grids", "numaspark layouts"


def cases(scratch: Path, draws: int, public: Path | None, crossed: bool = False) -> list[dict]:
    """Every table to replay: name, set, layout, csv, value column and machine option (None:
    the table records no machine, so told is untold); with ``crossed``, `crossed_tables`."""
    found = [
        {"table": n, "set": "recorded", "csv": c, "value": v, "option": o}
        for n, c, v, o in recorded_tables()
    ]
    models = model_tables(scratch, noise_free=True)
    for draw in range(draws):
        models += model_tables(scratch, draw=draw)
    for name, csv, value, option in models:
        header = csv.read_text().splitlines()[0].split(",")
        layout = OURS if "binding" in header else GRID
        kind = name.split(": ", 1)[0]
        found.append(
            {"table": name, "set": kind, "layout": layout, "csv": csv, "value": value}
            | {"option": option}
        )
    if crossed:
        found += crossed_tables(scratch, draws)
    if public is not None:
        index = json.loads((public / "index.json").read_text())
        found += [
            {"table": e["table"], "set": "public", "csv": public / e["csv"]}
            | {"value": e["minimize"], "option": None}
            for e in index
        ]
    return found


def crossed_tables(scratch: Path, draws: int) -> list[dict]:
    """Every profile of bench/tune_models.py in both layouts on every machine (its
    machine_tables lay the compute-bound and GC-heavy profiles out as published grids and the
    memory- and shuffle-heavy ones as numaspark's, so a set of one layout is also a set of
    profiles), noise-free and draws 0..draws-1; the models themselves as they are."""
    found = []
    for label, kind, source in MACHINES:
        option = {"xml": str(TOPOLOGIES / source)} if kind == "xml" else {"synthetic": source}
        if kind == "xml" and not (TOPOLOGIES / source).exists():
            continue  # tune_replay.model_tables says so
        machine = machine_of(option)
        for profile, layout, draw in itertools.product(PROFILES, (GRID, OURS), range(-1, draws)):
            name = f"{label}-{profile.name}"
            shape = (
                {"columns": ("workers", "cores_per_worker")}
                if layout == GRID
                else {"bindings": ("none", "node", "core")}
            )
            noise = {"noise": 0.0} if draw < 0 else {"draw": draw}
            frame = model_table(profile, machine, name, **shape, **noise)
            kind_of = "noise-free" if draw < 0 else f"draw {draw}"
            csv = scratch / f"crossed.{name}.{layout.split()[0]}.{kind_of.replace(' ', '')}.csv"
            frame.to_csv(csv, index=False)
            found.append(
                {"table": f"crossed ({kind_of}): {name}, {layout}", "set": f"crossed ({kind_of})"}
                | {"layout": layout, "csv": csv, "value": "time_s", "option": option}
            )
    return found


def searches(csv: Path, value: str, option: dict | None, seeds: int, budget: int) -> dict:
    """Median evaluations to within each share of the best, told (``option``: the machine)
    and untold (none); ``option`` None: no machine to tell, one replay for both."""
    _, lookup = read_table(csv, value)
    best = min(lookup.values())
    sides = {"untold": {}} if option is None else {"told": option, "untold": {}}
    row: dict = {"configurations": len(lookup)}
    for side, told in sides.items():
        runs = [tuner_values(csv, value, told, s, budget, True, False) for s in range(seeds)]
        for share in SHARES:
            hits = [evaluations_to(r, best * (1 + share)) for r in runs]
            row[f"{side} to {share:.0%}"] = statistics.median(
                h if h is not None else budget + 1 for h in hits
            )
    if option is None:
        row |= {f"told to {s:.0%}": row[f"untold to {s:.0%}"] for s in SHARES}
    return row


def summary(rows: list[dict]) -> list[dict]:
    """Per set of tables, and per layout within the model sets, and over every model table:
    the sums and medians of the told and untold medians (to 5%, and the sums to 10%), and on
    how many tables told needed more runs to 5%, and fewer."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["set"], []).append(row)
        if row.get("layout"):  # the models: per layout, and each family over its sets
            family = row["set"].split(" (")[0]
            groups.setdefault(f"{row['set']}, {row['layout']}", []).append(row)
            groups.setdefault(f"{family}, every set", []).append(row)
            groups.setdefault(f"{family}, every set, {row['layout']}", []).append(row)
    out = []
    for group in sorted(groups, key=_order):
        members = groups[group]
        told = [r["told to 5%"] for r in members]
        untold = [r["untold to 5%"] for r in members]
        out.append(
            {
                "group": group,
                "tables": len(members),
                "told": sum(told),
                "untold": sum(untold),
                "told median": statistics.median(told),
                "untold median": statistics.median(untold),
                "told to 10%": sum(r["told to 10%"] for r in members),
                "untold to 10%": sum(r["untold to 10%"] for r in members),
                "told worse": sum(t > u for t, u in zip(told, untold, strict=True)),
                "told better": sum(t < u for t, u in zip(told, untold, strict=True)),
            }
        )
    return out


def _order(group: str) -> tuple:
    """Recorded, then the model sets, then the crossed ones (each: noise-free, the draws in
    order, every set), then public; within a set, all its tables before each layout's."""
    name, _, layout = group.partition(", ")
    if layout.startswith("every set"):
        name, layout = f"{name}, every set", layout.removeprefix("every set").strip(", ")
    family = ["recorded", "model", "crossed", "public"].index(name.split(" (")[0].split(",")[0])
    within = 0 if "noise-free" in name else 2 if "every set" in name else 1  # draws: 1
    return (family, within, name, (layout != "", layout == OURS))


def _cell(after: dict, before: dict | None, key: str) -> str:
    shown = f"{after[key]:g}"
    if before is None or key not in before:
        return shown
    return shown if before[key] == after[key] else f"{before[key]:g} -> {shown}"


def show(rows: list[dict], before: list[dict], args: argparse.Namespace) -> None:
    """The per-table figures (as before -> after where they changed), then the summary."""
    console = Console(width=200)
    old = {r["table"]: r for r in before}
    per_table = Table(
        title=f"evaluations to within 5% / 10% of the best, median of {args.seeds} seeds "
        f"(budget {args.budget}; >budget counts as {args.budget + 1})",
        title_justify="left",
    )
    for column in ("table", "rows", "told 5%", "untold 5%", "told 10%", "untold 10%"):
        per_table.add_column(column, justify="left" if column == "table" else "right")
    for row in rows:
        was = old.get(row["table"])
        per_table.add_row(
            row["table"] + ("" if row.get("option") is not None else " (no topology)"),
            str(row["configurations"]),
            *(_cell(row, was, f"{side} to {s:.0%}") for s in SHARES for side in ("told", "untold")),
        )
    console.print(per_table)
    groups = Table(title="told against untold, per set of tables", title_justify="left")
    columns = ("group", "tables", "sum to 5%: told", "untold", "median: told", "untold")
    for column in (*columns, "sum to 10%: told", "untold", "told worse", "told better"):
        groups.add_column(column, justify="left" if column == "group" else "right")
    was_groups = {g["group"]: g for g in summary(before)} if before else {}
    keys = ("told", "untold", "told median", "untold median", "told to 10%", "untold to 10%")
    for group in summary(rows):
        was = was_groups.get(group["group"])
        groups.add_row(
            group["group"],
            str(group["tables"]),
            *(_cell(group, was, k) for k in (*keys, "told worse", "told better")),
        )
    console.print(groups)
    if before:
        print("a cell 'a -> b': a from --before, b from this run; one number: the same in both")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--draws", type=int, default=1, help="noise draws of each model table")
    parser.add_argument("--public", type=Path, help="bench/public_tables.py's --out directory")
    parser.add_argument(
        "--crossed",
        action="store_true",
        help="also every model profile in both layouts (the bench pairs each profile with one)",
    )
    parser.add_argument("--only", default="", help="tables whose name contains this")
    parser.add_argument("--save", type=Path, help="write the rows here (JSON)")
    parser.add_argument("--before", type=Path, help="an earlier --save: figures as before -> after")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.public is not None and not (args.public / "index.json").is_file():
        print(
            f"Error: {args.public / 'index.json'} missing: run bench/public_tables.py --out "
            f"{args.public} first",
            file=sys.stderr,
        )
        return 2
    before = json.loads(args.before.read_text()) if args.before else []
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        found = cases(Path(scratch), args.draws, args.public, args.crossed)
        todo = [c for c in found if args.only in c["table"]]
        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("tables", total=len(todo))
            for case in todo:
                bar.update(task, description=case["table"][:60])
                found = searches(
                    case["csv"], case["value"], case["option"], args.seeds, args.budget
                )
                rows.append({k: v for k, v in case.items() if k not in ("csv", "value")} | found)
                bar.advance(task)
    for row in rows:  # a machine option as text, for JSON
        row["option"] = None if row["option"] is None else dict(row["option"])
    if args.save:
        args.save.write_text(json.dumps(rows, indent=1) + "\n")
    if args.json:
        print(json.dumps({"tables": rows, "summary": summary(rows)}, indent=2))
        return 0
    show(rows, before, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
