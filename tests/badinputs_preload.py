"""What the bad-input corpus's fork server holds before it forks a case (tests/badinputs.py).

Every numaspark module, imported once (a command imports pandas, plotly or scipy only when it
needs them: each forked case would import them again), and the click command that typer builds
from the app on every call (about 0.25 s of each case's 0.3 here: it reads every command's
signature). A case then runs that same command object through numaspark's real entry point.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer.main

import numaspark
from numaspark.cli import commands

for module in pkgutil.walk_packages(numaspark.__path__, "numaspark."):
    if module.name.endswith("__main__"):
        continue  # importing it runs the command line
    importlib.import_module(module.name)

COMMAND = typer.main.get_command(commands.app)
