"""The command line. Thin: parse options, call one package function, print what it gives.

Every command is declared in the module of its pipeline step: see_place.py (topology, plan,
cluster, yarn), run.py (run, launch), experiment.py (sweep, study, characterize), measure.py
(analyze, probe), decide.py (whatif, classify, advise, tune, fit), show.py (results, report)
and machine.py (doctor, workloads, datagen, version). They register on the one typer app of
app.py as they are imported here, and are then put in the order ``numaspark --help`` lists
them. Rendering lives in report/console.py (views), cli/terminal.py (the terminal) and
cli/progress.py (long work under progress bars); what is computed lives in the package of its
pipeline step; options that several commands share are declared once in options.py.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING

import typer

# imported for their @app.command decorators: each registers its step's commands
import numaspark.cli.decide  # noqa: F401
import numaspark.cli.experiment  # noqa: F401
import numaspark.cli.machine  # noqa: F401
import numaspark.cli.measure  # noqa: F401
import numaspark.cli.run  # noqa: F401
import numaspark.cli.see_place  # noqa: F401
import numaspark.cli.show  # noqa: F401
from numaspark.cli.app import app, in_help_order, term

in_help_order()

if TYPE_CHECKING:
    import click

__all__ = ["app", "command", "main", "term"]


@functools.cache
def command() -> click.Command:
    """The click command tree that typer builds from the app's functions: built once per
    process (150 ms of CPU here, most of what a command that only checks its input costs),
    so that processes forked from one that built it (the bad-input corpus's cases,
    tests/badinputs.py) do not each build it again."""
    return typer.main.get_command(app)


def main() -> None:
    """Entry point: user errors become one line on stderr and a non-zero exit, no traceback."""
    sys.exit(term.main(command()))


if __name__ == "__main__":
    main()
