"""This machine and numaspark on it: its check for NUMA experiments (``doctor``), the
workloads it can run and their inputs (``workloads``, ``datagen``), and the version."""

from __future__ import annotations

import re
from typing import Annotated

from numaspark import __version__
from numaspark.cli.app import app, term
from numaspark.cli.option_group import Opt
from numaspark.cli.options import DataOpt, JsonOpt, WorkloadArg
from numaspark.doctor import run_checks
from numaspark.report import console as views
from numaspark.workloads import all_workloads
from numaspark.workloads.datagen import generate


def check_key(name: str) -> str:
    """A check's name as a JSON key: ``affinity plugin`` -> ``affinity_plugin``."""
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check this machine for NUMA experiments.

    It checks the tools, perf events, kernel settings and limits.

    \b
    Example:
      numaspark doctor
    """

    results = run_checks()
    if as_json:
        term.document(
            "doctor",
            {
                "numaspark": __version__,
                "checks": {
                    check_key(name): [{"level": m.level, "text": m.text} for m in messages]
                    for name, messages in results
                },
            },
        )
    else:
        term.print(views.doctor_table(results, __version__))


@app.command()
def workloads() -> None:
    """List the workloads numaspark can run.

    Each with its parameters and size profiles.

    \b
    Example:
      numaspark workloads
    """

    term.print(views.workloads_table(all_workloads()))


@app.command()
def datagen(
    workload: WorkloadArg,
    size: Annotated[
        str, Opt(help="The input size: tiny, small, large, huge, bytes (64MB) or rows.")
    ] = "tiny",
    data: DataOpt = None,
    seed: Annotated[int, Opt(help="Random seed of the generator.")] = 42,
) -> None:
    """Generate a workload's input ahead of time.

    Later runs that ask for the same input reuse it.

    \b
    Example:
      numaspark datagen wordcount --size small
    """

    path, manifest = generate(workload, size, seed, data)
    term.print(
        f"{workload} {manifest['size']}: {manifest['rows']:,} rows, {manifest['bytes']:,} "
        f"bytes in {path} (generated in {manifest['generation_s']} s, sha256 "
        f"{manifest['sha256'][:12]})"
    )


@app.command()
def version() -> None:
    """Print numaspark's version.

    \b
    Example:
      numaspark version
    """
    term.print(__version__)
