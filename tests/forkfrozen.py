"""Imported last by the corpus's fork server (tests/badinputs.py, ``_PRELOAD``): everything the
server imported before it moves to the garbage collector's permanent generation
(`gc.freeze`), so a forked case's collections never walk those objects. Walking them wrote
to every page of the server's heap (reference counts and GC links), and each forked case then
paid for copying those pages: the reason preloading more modules made each case dearer.
It also builds numaspark's click command tree (`commands.command`), which typer would
otherwise build again in every forked case: most of a case's CPU time."""

import gc

from numaspark.cli import commands

commands.command()  # the click command tree, built once here rather than once per case
gc.freeze()
