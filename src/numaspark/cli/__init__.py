"""cli: the command line, the only room that starts work. `commands` gathers every command
(thin: parse, call one package function, show what it gives), declared a module per step of
the pipeline on the one app of `app`; `options` the options several share (with
`placement_options`, `app_options` and `option_group`), `terminal` the terminal and the one
handler that turns a user's mistake into one line and an exit code, `progress` the long work
under its progress bars."""

from numaspark.cli.commands import app, main

__all__ = ["app", "main"]
