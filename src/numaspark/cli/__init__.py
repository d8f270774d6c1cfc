"""cli: the command line, the only room that starts work. `commands` declares every command
(thin: parse, call one package function, show what it gives), `options` the options several
share, `terminal` the terminal, long work under progress bars, and the one handler that turns
a user's mistake into one line and an exit code."""

from numaspark.cli.commands import app, main

__all__ = ["app", "main"]
