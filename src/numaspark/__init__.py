"""numaspark: see a NUMA machine, place Spark on it, run, measure, decide, show."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("numaspark")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0"
