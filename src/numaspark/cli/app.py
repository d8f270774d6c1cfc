"""The typer app every command registers on, its sub-apps (cluster, yarn, study), the
terminal the commands print through, and the order ``numaspark --help`` lists them in.

The commands live a module per step of the pipeline (see_place, run, experiment, measure,
decide, show, machine); commands.py imports them all, so that their ``@app.command``
decorators register, and puts the commands in `HELP_ORDER`.
"""

from __future__ import annotations

from typing import Annotated

import typer

from numaspark import __version__
from numaspark.cli.terminal import Terminal

app = typer.Typer(
    name="numaspark",
    help="NUMA-aware placement, running and measurement of Spark on scale-up servers.\n\n"
    "Run 'numaspark COMMAND --help' (or -h) for a command's options and an example.\n\n"
    "\b\nExample:\n  numaspark run wordcount --size tiny --bind node",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # click's own help layout: rich's panels squeeze the descriptions to ~19 columns at 80
    rich_markup_mode=None,
    # -h as well as --help, on every command (click hands it down to each command's context)
    context_settings={"help_option_names": ["-h", "--help"]},
)
term = Terminal()


class PanelledCommand(typer.core.TyperCommand):
    """A command whose --help lists its options under headings, in click's plain layout
    (typer's ``rich_help_panel`` shows only with rich's markup, which is off here). A
    subclass names its `panels`: each a heading and the options under it, listed in the
    command's own order; an option no panel names (``-h, --help``) is under "Options"."""

    panels: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def format_options(self, ctx, formatter) -> None:
        arguments, sections = [], {heading: [] for heading, _ in self.panels}
        heading_of = {flag: heading for heading, flags in self.panels for flag in flags}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
                continue
            heading = next((heading_of[o] for o in param.opts if o in heading_of), "Options")
            sections.setdefault(heading, []).append(record)
        for heading, records in (("Arguments", arguments), *sections.items()):
            if records:
                with formatter.section(heading):
                    formatter.write_dl(records)


def panelled(*panels: tuple[str, tuple[str, ...]]) -> type[PanelledCommand]:
    """A `PanelledCommand` class with these headings, for ``@app.command(cls=...)``."""
    return type("Panelled", (PanelledCommand,), {"panels": panels})


def _print_version(asked: bool) -> None:
    if asked:
        term.print(f"numaspark {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _numaspark(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print numaspark's version and exit.",
        ),
    ] = False,
) -> None:
    """The options before any command (typer's callback of the app)."""


# the sub-apps, listed by --help after the commands, in this order
cluster_app = typer.Typer(
    help="A standalone cluster kept up across runs.\n\nIts executors take about 15 s to start; runs that reuse it skip that wait.\n\n\b\nExample:\n  numaspark cluster up ./cluster --executors 2 --bind core",
    rich_markup_mode=None,
)
app.add_typer(cluster_app, name="cluster")

yarn_app = typer.Typer(
    help="A mini YARN on this machine to run --master yarn on.\n\nIt is a ResourceManager and NodeManagers (hadoop-client-minicluster).\n\n\b\nExample:\n  numaspark yarn up ./yarn --nodemanagers 2",
    rich_markup_mode=None,
)
app.add_typer(yarn_app, name="yarn")

study_app = typer.Typer(
    help="Built-in studies, each a sweep that answers one question.\n\nThe studies are layouts, binding, scaling, executors, smt, affinity and cosched.\n\n\b\nExample:\n  numaspark study binding wordcount --size tiny",
    rich_markup_mode=None,
)
app.add_typer(study_app, name="study")

#: the commands in the order ``numaspark --help`` lists them (typer lists them as they were
#: registered, and they register module by module): the pipeline's steps, see and place first
HELP_ORDER = (
    "topology",
    "plan",
    "run",
    "launch",
    "sweep",
    "characterize",
    "analyze",
    "whatif",
    "probe",
    "doctor",
    "results",
    "classify",
    "advise",
    "tune",
    "fit",
    "report",
    "workloads",
    "datagen",
    "version",
)


def in_help_order() -> None:
    """Put the registered commands in `HELP_ORDER`; one it does not name goes last."""

    def rank(command: typer.models.CommandInfo) -> int:
        name = command.name or command.callback.__name__.replace("_", "-")
        return HELP_ORDER.index(name) if name in HELP_ORDER else len(HELP_ORDER)

    app.registered_commands.sort(key=rank)
