"""supervise: every process numaspark starts, tracked and stopped whatever happens.

`processes` starts argv lists and stops them with their descendants (SIGTERM, then
SIGKILL); `ledger` writes each on disk so that what a numaspark killed by SIGKILL left
running is found and stopped by the next one; `stop` is the stopping both use. The run
(spark/, launch), the collectors (collect/) and the command line use this room; it uses
none of theirs.
"""
