"""Imported last by the corpus's fork server (tests/badinputs.py, ``_PRELOAD``): everything the
server imported before it moves to the garbage collector's permanent generation
(`gc.freeze`), so a forked case's collections never walk those objects. Walking them wrote
to every page of the server's heap (reference counts and GC links), and each forked case then
paid for copying those pages: the reason preloading more modules made each case dearer."""

import gc

gc.freeze()
