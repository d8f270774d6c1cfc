"""The typer app every command registers on, its sub-apps (cluster, yarn, study), the
terminal the commands print through, and the order ``numaspark --help`` lists them in.

The commands live a module per step of the pipeline (see_place, run, experiment, measure,
decide, show, machine); commands.py imports them all, so that their ``@app.command``
decorators register, and puts the commands in `HELP_ORDER`.
"""

from __future__ import annotations

import typer

from numaspark.cli.terminal import Terminal

app = typer.Typer(
    name="numaspark",
    help="NUMA-aware placement, running and measurement of Spark on scale-up servers.\n\n"
    "Run 'numaspark COMMAND --help' for a command's options and an example.\n\n"
    "\b\nExample:\n  numaspark run wordcount --size tiny --bind node",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # click's own help layout: rich's panels squeeze the descriptions to ~19 columns at 80
    rich_markup_mode=None,
)
term = Terminal()

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
