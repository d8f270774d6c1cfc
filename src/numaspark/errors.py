"""Errors a user can fix. The CLI prints them as one line and exits non-zero."""

from __future__ import annotations


class NumasparkError(Exception):
    """A problem with the input or the machine that the user can act on.

    The message is one line: what was wrong and how to fix it. ``exit_code`` is
    what the CLI exits with (2 for a request the machine cannot satisfy or an
    invalid argument, 1 for a missing tool or a failed run).
    """

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(NumasparkError):
    """Bad input: a value that does not parse, a file that does not exist."""

    exit_code = 2


class ClusterRefusal(UsageError):
    """A cluster numaspark did not start cannot hold a plan now: its free cores or memory,
    the largest container it grants. A search over configurations takes it as that one's
    failure (a configuration asking as much is refused too), not as the end of the search."""


class PlacementError(NumasparkError):
    """A layout the machine cannot hold (more cores than allowed, a missing node)."""

    exit_code = 2


class ToolMissingError(NumasparkError):
    """An external tool (hwloc, numactl, java) is not installed."""

    exit_code = 1
