"""Public datasets of Spark runs as replay tables for the tuner (issue 42, item 3).

Each dataset is read from where it is given: a clone's working tree or a bare git directory
(--source DATASET=PATH), or a folder of fetched mirrors, OWNER+NAME/repo each (--mirrors DIR).
Nothing is looked for anywhere else. They are written as CSV tables
that `numaspark tune --replay TABLE --minimize COLUMN` and `numaspark.decide.tune.read_table`
read: one row per run, the configuration's parameters and one value column. Repetitions stay
rows (read_table takes their median). What describes the job rather than the configuration
(input size, k, iterations, the query) is fixed per table, so the tuner cannot "win" by
choosing a smaller input: one table per (job, fixed job parameters).

- autoscaling: dos-group/spark-autoscaling-evaluation, data/regular_dataproc/regular_dataproc.csv
  (Google Dataproc clusters). Fixed: algorithm, dataset_size_bytes. Parameters: cpu_cores_per_node,
  memory_gb_per_node, scaleout (10 node shapes). Value: runtime (s). One run each.
- c3o: dos-group/c3o-experiments, JOB.tsv (AWS EC2 clusters). Fixed: the job's own columns
  (data_size_MB and its generator's: lines, k, iterations, ...). Parameters: instance_count,
  family and vcpus_per_node (the machine type, e.g. m4.2xlarge = m4 x 8, its vCPUs from the
  table's slots / instance_count). Value: gross_runtime (s), 5 repetitions each.
- scout: oxhead/scout, dataset/osr_multiple_nodes/NODES_TYPE_WORKLOAD_RUN/report.json (EC2).
  Fixed: the workload (program, framework, input: bigdata or huge; the input is generated
  per run, its size differing by <0.01%). Parameters: nodes, family,
  vcpus_per_node. Value: elapsed_s; runs that did not complete (2-hour timeout) left out.
- loftune: LJHzju/LOFTune, data/*/all_history_data.csv (TPC-H 100 GB, YARN). Fixed: the
  scenario (single query or a mix) and the query set (task_id). Parameters: the 22 spark.*
  knobs. Value: duration_ms. Its rows are random samples of a 22-knob space, not a grid: the
  replay asks how soon the tuner finds the best of those samples (a regret curve over a
  fixed sample), every other combination "cannot run".
- gatk: broadinstitute/gatk, scripts/spark_eval/test_case_*_results.csv (GATK's Spark
  evaluation, YARN). Fixed: the test case and its Command (the tool and its input).
  Parameters: Number of executors, Executor cores, Executor memory (one value, 1g, in the
  test cases of 10 or more configurations). Value: Time (mins); runs whose Exit code is not
  0 left out. One run each.
- bell: dos-group/allocation-assistant, src/test/resources/JOB.spark.csv (the runs behind
  Bell's scale-out model; the .flink.csv files are Flink's, left out: this is about Spark).
  Fixed: the job (its input is not recorded, one per file). Parameter: Nodes. Value: Runtime
  (the files give no unit: milliseconds by their size), 7 repetitions each.

Tables with fewer configurations than --min-configurations (default 10; c3o has many 6-row
tables, one machine type's scale-outs) are left out and counted. The tables and an
index.json (dataset, workload, fixed parameters, parameters, value column, rows,
configurations) go to --out, never into git.

    .venv/bin/python bench/public_tables.py [--mirrors DIR] [--out DIR]
        [--source DATASET=PATH ...] [--dataset DATASET ...] [--min-configurations 10]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pandas as pd

from numaspark.errors import UsageError

DEFAULT_OUT = Path("/tmp/numaspark-public-tables")
# AWS names an instance FAMILY.SIZE; the c4/m4/r4 sizes' vCPUs (AWS instance type pages)
AWS_SIZE_VCPUS = {"large": 2, "xlarge": 4, "2xlarge": 8, "4xlarge": 16, "8xlarge": 32}


@dataclass
class Table:
    """One replay table: a workload with its fixed job parameters, one row per run."""

    dataset: str
    workload: str
    fixed: dict[str, object]
    params: list[str]
    minimize: str
    frame: pd.DataFrame
    left_out: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        text = "-".join([self.workload, *(f"{k}={v}" for k, v in self.fixed.items())])
        return f"{self.dataset}.{re.sub(r'[^A-Za-z0-9_.=-]+', '_', text)}"

    @property
    def configurations(self) -> int:
        return len(self.frame[self.params].drop_duplicates())


class Source:
    """A dataset's files: a bare git directory (the fetch tool's mirror, read at HEAD) or a
    directory of files (a clone's working tree, or files saved one by one)."""

    def __init__(self, path: Path) -> None:
        if not path.is_dir():
            raise UsageError(f"{path} is not a directory: give a fetched mirror or a clone")
        self.path = path
        self.git = (path / "HEAD").is_file() and (path / "objects").is_dir()

    def _git(self, *argv: str) -> str:
        done = subprocess.run(
            ["git", "--git-dir", str(self.path), *argv], capture_output=True, text=True
        )
        if done.returncode:
            raise UsageError(f"{self.path}: git {' '.join(argv)}: {done.stderr.strip()}")
        return done.stdout

    def names(self) -> list[str]:
        if self.git:
            return self._git("ls-tree", "-r", "--name-only", "HEAD").splitlines()
        return sorted(
            p.relative_to(self.path).as_posix()
            for p in self.path.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(self.path).parts
        )

    def matching(self, pattern: str, shown: str, repository: str) -> list[str]:
        """The files whose path matches ``pattern``; none is one line that names them as a
        user reads them (``shown``) and the repository the source should be."""
        found = [n for n in self.names() if re.fullmatch(pattern, n)]
        if not found:
            raise UsageError(f"{self.path}: no {shown}: is it {repository}?")
        return found

    def read(self, name: str) -> str:
        if self.git:
            return self._git("show", f"HEAD:{name}")
        try:
            return (self.path / name).read_text()
        except OSError as e:
            raise UsageError(f"{self.path / name}: {e.strerror}") from None

    def commit(self) -> str:
        return self._git("rev-parse", "HEAD").strip() if self.git else "(working tree)"


def read_frame(
    source: Source, name: str, sep: str = ",", needs: tuple[str, ...] = ()
) -> pd.DataFrame:
    """A CSV/TSV of ``source`` that must have the columns ``needs``."""
    try:
        frame = pd.read_csv(io.StringIO(source.read(name)), sep=sep)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise UsageError(
            f"{source.path}:{name} is not a table: {' '.join(str(e).split())}"
        ) from None
    missing = [c for c in needs if c not in frame.columns]
    if missing:
        raise UsageError(
            f"{source.path}:{name} lacks column(s) {', '.join(missing)}; "
            f"its columns: {', '.join(map(str, frame.columns))}"
        )
    return frame


def grouped(
    dataset: str,
    frame: pd.DataFrame,
    workload: str,
    fixed: list[str],
    params: list[str],
    minimize: str,
) -> list[Table]:
    """One Table per distinct (``workload`` column, ``fixed`` columns), rows as they are."""
    tables = []
    for values, rows in frame.groupby([workload, *fixed], sort=True):
        named = {
            k: v.item() if hasattr(v, "item") else v
            for k, v in zip([workload, *fixed], values, strict=True)
        }
        name = named.pop(workload)
        tables.append(
            Table(
                dataset,
                str(name),
                named,
                params,
                minimize,
                rows[params + [minimize]].reset_index(drop=True),
            )
        )
    return tables


def autoscaling(source: Source) -> list[Table]:
    params = ["cpu_cores_per_node", "memory_gb_per_node", "scaleout"]
    frame = read_frame(
        source,
        "data/regular_dataproc/regular_dataproc.csv",
        needs=("algorithm", "dataset_size_bytes", *params, "runtime"),
    )
    return grouped("autoscaling", frame, "algorithm", ["dataset_size_bytes"], params, "runtime")


def c3o(source: Source) -> list[Table]:
    jobs = source.matching(r"[^/]+\.tsv", "JOB.tsv at its top", "dos-group/c3o-experiments")
    tables = []
    config = ["instance_count", "machine_type", "slots", "memory", "gross_runtime"]
    for name in jobs:
        frame = read_frame(source, name, sep="\t", needs=tuple(config))
        family = frame["machine_type"].str.split(".", n=1).str[0]
        vcpus = frame["slots"] // frame["instance_count"]
        frame = frame.assign(family=family, vcpus_per_node=vcpus)
        fixed = [c for c in frame.columns if c not in config + ["family", "vcpus_per_node"]]
        params = ["instance_count", "family", "vcpus_per_node"]
        tables += grouped(
            "c3o", frame.assign(job=PurePosixPath(name).stem), "job", fixed, params, "gross_runtime"
        )
    return tables


SCOUT_RUN = re.compile(
    r"dataset/osr_multiple_nodes/(\d+)_([a-z0-9]+)\.([a-z0-9]+)_(.+)_(\d+)/report\.json"
)


def scout(source: Source) -> list[Table]:
    rows, timed_out = [], []
    for name in source.names():
        found = SCOUT_RUN.fullmatch(name)
        if not found:
            continue
        nodes, family, size, workload, run = found.groups()
        try:
            report = json.loads(source.read(name))
        except ValueError:
            raise UsageError(f"{source.path}:{name} is not JSON") from None
        if size not in AWS_SIZE_VCPUS:
            raise UsageError(
                f"{source.path}:{name}: instance size {size!r} unknown (known: "
                f"{', '.join(AWS_SIZE_VCPUS)})"
            )
        done = report.get("completed") in (True, "true", "True")
        if not done:
            timed_out.append(f"{nodes} x {family}.{size} {workload}")
            continue
        rows.append(
            {
                "workload": workload,
                "datasize": report.get("datasize", ""),
                "nodes": int(nodes),
                "family": family,
                "vcpus_per_node": AWS_SIZE_VCPUS[size],
                "run": int(run),
                "elapsed_s": float(report["elapsed_time"]),
            }
        )
    if not rows:
        raise UsageError(
            f"{source.path}: no dataset/osr_multiple_nodes/*/report.json of a "
            "completed run: is it oxhead/scout?"
        )
    # the input is generated per run (its input_size differs by <0.01% between runs), so the
    # fixed job parameter is the workload's input label (bigdata, huge), in its name already
    tables = grouped(
        "scout",
        pd.DataFrame(rows),
        "workload",
        ["datasize"],
        ["nodes", "family", "vcpus_per_node"],
        "elapsed_s",
    )
    for table in tables:
        table.left_out = [t for t in timed_out if t.endswith(" " + table.workload)]
    return tables


def loftune(source: Source) -> list[Table]:
    files = source.matching(
        r"data/[^/]+/all_history_data\.csv", "data/*/all_history_data.csv", "LJHzju/LOFTune"
    )
    tables = []
    for name in files:
        frame = read_frame(source, name, needs=("task_id", "duration", "status"))
        knobs = [c for c in frame.columns if c.startswith("spark.")]
        ok = frame["status"] == 1  # LOFTune's status: 1 = the application succeeded
        frame = frame.loc[ok, ["task_id", *knobs]].assign(
            scenario=PurePosixPath(name).parent.name, duration_ms=frame.loc[ok, "duration"]
        )
        tables += grouped("loftune", frame, "task_id", ["scenario"], knobs, "duration_ms")
    return tables


def gatk(source: Source) -> list[Table]:
    files = source.matching(
        r"scripts/spark_eval/test_case_\d+_results\.csv",
        "scripts/spark_eval/test_case_*_results.csv",
        "broadinstitute/gatk",
    )
    params = ["Number of executors", "Executor cores", "Executor memory"]
    tables = []
    for name in files:
        frame = read_frame(source, name, needs=("Command", *params, "Exit code", "Time (mins)"))
        failed = frame[frame["Exit code"] != 0]  # a run that failed has no time to compare
        case = PurePosixPath(name).stem.removesuffix("_results")
        found = grouped(
            "gatk",
            frame[frame["Exit code"] == 0].assign(test_case=case),
            "test_case",
            ["Command"],
            params,
            "Time (mins)",
        )
        for table in found:
            table.left_out = [
                f"{r['Number of executors']} x {r['Executor cores']} cores x "
                f"{r['Executor memory']}: exit code {r['Exit code']}"
                for r in failed.to_dict("records")
                if r["Command"] == table.fixed["Command"]
            ]
        tables += found
    return tables


def bell(source: Source) -> list[Table]:
    files = source.matching(
        r"src/test/resources/[^/]+\.spark\.csv",
        "src/test/resources/*.spark.csv",
        "dos-group/allocation-assistant",
    )
    tables = []
    for name in files:
        frame = read_frame(source, name, needs=("Nodes", "Runtime"))
        job = PurePosixPath(name).name.removesuffix(".spark.csv")
        tables += grouped("bell", frame.assign(job=job), "job", [], ["Nodes"], "Runtime")
    return tables


CONVERTERS: dict[str, tuple[str, Callable[[Source], list[Table]]]] = {
    "autoscaling": ("dos-group/spark-autoscaling-evaluation", autoscaling),
    "c3o": ("dos-group/c3o-experiments", c3o),
    "scout": ("oxhead/scout", scout),
    "loftune": ("LJHzju/LOFTune", loftune),
    "gatk": ("broadinstitute/gatk", gatk),
    "bell": ("dos-group/allocation-assistant", bell),
}


def describe(table: Table) -> str:
    """One line: what was fixed and what the parameters are."""
    fixed = ", ".join(f"{k}={v}" for k, v in table.fixed.items())
    params = table.params
    knobs = [p for p in params if p.startswith("spark.")]
    shown = f"the {len(knobs)} spark.* knobs" if len(knobs) > 3 else ", ".join(params)
    return (
        f"{table.name}: fixed {table.workload}{', ' + fixed if fixed else ''}; parameters "
        f"{shown}; {table.minimize} of {len(table.frame)} run(s) over "
        f"{table.configurations} configuration(s)"
    )


def write(tables: list[Table], out: Path, sources: dict[str, tuple[str, str]]) -> list[dict]:
    """Each table as OUT/NAME.csv, and OUT/index.json describing them."""
    out.mkdir(parents=True, exist_ok=True)
    index = []
    for table in tables:
        csv = out / f"{table.name}.csv"
        table.frame.to_csv(csv, index=False)
        repo, commit = sources[table.dataset]
        index.append(
            {
                "table": table.name,
                "csv": csv.name,
                "dataset": table.dataset,
                "repository": repo,
                "commit": commit,
                "workload": table.workload,
                "fixed": table.fixed,
                "parameters": table.params,
                "minimize": table.minimize,
                "rows": len(table.frame),
                "configurations": table.configurations,
                "left_out": table.left_out,
            }
        )
    (out / "index.json").write_text(json.dumps(index, indent=2) + "\n")
    return index


def find_mirror(mirrors: Path, repository: str) -> Path | None:
    path = mirrors / repository.replace("/", "+") / "repo"
    return path if path.is_dir() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mirrors",
        type=Path,
        default=None,
        help="a folder of fetched mirrors, OWNER+NAME/repo each",
    )
    parser.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="DATASET=PATH",
        help=f"a dataset's mirror or clone ({', '.join(CONVERTERS)})",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--min-configurations", type=int, default=10)
    parser.add_argument(
        "--dataset",
        action="append",
        default=[],
        metavar="DATASET",
        help="convert only this dataset (repeatable; default: every one)",
    )
    args = parser.parse_args(argv)
    try:
        unknown = [d for d in args.dataset if d not in CONVERTERS]
        if unknown:
            raise UsageError(f"--dataset {unknown[0]}: give one of {', '.join(CONVERTERS)}")
        given = {}
        for text in args.source:
            dataset, _, path = text.partition("=")
            if dataset not in CONVERTERS or not path:
                raise UsageError(
                    f"--source {text}: give DATASET=PATH, DATASET one of {', '.join(CONVERTERS)}"
                )
            given[dataset] = Path(path)
        tables, sources = [], {}
        for dataset, (repository, convert) in CONVERTERS.items():
            if args.dataset and dataset not in args.dataset:
                continue
            path = given.get(dataset)
            if path is None and args.mirrors is None:
                continue  # neither given nor asked to be looked for
            path = path or find_mirror(args.mirrors, repository)
            if path is None:
                print(
                    f"{dataset}: no mirror of {repository} in {args.mirrors} (fetch it, or give "
                    f"--source {dataset}=PATH): left out",
                    file=sys.stderr,
                )
                continue
            source = Source(path)
            sources[dataset] = (repository, source.commit())
            try:
                found = convert(source)
            except (KeyError, ValueError, TypeError, AttributeError) as e:  # the data's shape
                raise UsageError(
                    f"{path} does not hold {repository}'s layout ({type(e).__name__}: "
                    f"{e}): give its mirror or a clone"
                ) from None
            kept = [t for t in found if t.configurations >= args.min_configurations]
            print(
                f"{dataset} ({repository} at {sources[dataset][1]}): {len(kept)} table(s); "
                f"{len(found) - len(kept)} with fewer than {args.min_configurations} "
                "configurations left out"
            )
            for table in kept:
                print(
                    "  "
                    + describe(table)
                    + (
                        f"; {len(table.left_out)} run(s) that did not complete left out"
                        if table.left_out
                        else ""
                    )
                )
            tables += kept
        if not tables:
            raise UsageError("no dataset converted: give --source DATASET=PATH or --mirrors DIR")
        write(tables, args.out, sources)
        print(f"{len(tables)} table(s) and index.json in {args.out}")
    except UsageError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
