"""A user's existing ``spark-submit`` command line, parsed from its argv list.

numaspark can run an application the user already launches with spark-submit: the line is
handed over as an argv list (never a shell string), parsed here into a :class:`SubmitLine`, and
turned back into an argv with :meth:`SubmitLine.to_argv` once numaspark has added its settings.

The option table follows Spark's own ``SparkSubmitOptionParser`` (launcher/src/main/java/org/
apache/spark/launcher/SparkSubmitOptionParser.java, Spark 4): the options that take a value, the
switches, and the aliases (``-c`` for ``--conf``, ``-h`` for ``--help``, ``-v`` for
``--verbose``). As there, an option's value is the next argument or follows ``--opt=``, the first
argument that is not an option is the application resource, and everything after it belongs to
the application. Nothing here reads the filesystem.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from numaspark.errors import UsageError

_PROGRAMS = frozenset({"spark-submit", "spark-submit.cmd"})
_RESTATE = "give the line as it stands, starting with spark-submit"
_EQ_FORM = re.compile(r"(--[^=]+)=(.+)")  # Spark's eqSeparatedOpt


class _Option(NamedTuple):
    names: tuple[str, ...]  # Spark's canonical name first, then its aliases
    takes_value: bool
    field: str | None  # the SubmitLine field it fills; None: kept in SubmitLine.other


# SparkSubmitOptionParser's ``opts`` and ``switches``, in its order.
_OPTIONS: tuple[_Option, ...] = (
    _Option(("--archives",), True, "archives"),
    _Option(("--class",), True, "main_class"),
    _Option(("--conf", "-c"), True, "conf"),
    _Option(("--deploy-mode",), True, "deploy_mode"),
    _Option(("--driver-class-path",), True, "driver_class_path"),
    _Option(("--driver-cores",), True, "driver_cores"),
    _Option(("--driver-default-class-path",), True, None),
    _Option(("--driver-java-options",), True, "driver_java_options"),
    _Option(("--driver-library-path",), True, "driver_library_path"),
    _Option(("--driver-memory",), True, "driver_memory"),
    _Option(("--executor-cores",), True, "executor_cores"),
    _Option(("--executor-memory",), True, "executor_memory"),
    _Option(("--files",), True, "files"),
    _Option(("--jars",), True, "jars"),
    _Option(("--keytab",), True, None),
    _Option(("--kill",), True, None),
    _Option(("--master",), True, "master"),
    _Option(("--remote",), True, None),
    _Option(("--name",), True, "name"),
    _Option(("--num-executors",), True, "num_executors"),
    _Option(("--packages",), True, "packages"),
    _Option(("--exclude-packages",), True, "exclude_packages"),
    _Option(("--principal",), True, None),
    _Option(("--properties-file",), True, "properties_file"),
    _Option(("--proxy-user",), True, None),
    _Option(("--py-files",), True, "py_files"),
    _Option(("--queue",), True, None),
    _Option(("--repositories",), True, "repositories"),
    _Option(("--status",), True, None),
    _Option(("--total-executor-cores",), True, "total_executor_cores"),
    _Option(("--help", "-h"), False, None),
    _Option(("--supervise",), False, None),
    _Option(("--usage-error",), False, None),
    _Option(("--verbose", "-v"), False, None),
    _Option(("--version",), False, None),
    _Option(("--load-spark-defaults",), False, None),
)
_BY_NAME = {name: option for option in _OPTIONS for name in option.names}
_LIST_FIELDS = frozenset(
    {"jars", "py_files", "files", "archives", "packages", "exclude_packages", "repositories"}
)
# Options that make spark-submit do something other than run an application.
_ACTIONS = {
    "--kill": "kill a submitted driver",
    "--status": "report a submitted driver's status",
    "--help": "print its help",
    "--usage-error": "print its usage",
    "--version": "print its version",
}


@dataclass(frozen=True)
class SubmitLine:
    """A parsed spark-submit line: its options, the application and the application's arguments.

    Values are kept as given (no path resolution, no unit parsing). List options (``--jars``,
    ``--py-files``, ...) are split on commas, items stripped of surrounding spaces and empty ones
    dropped; repeated list options accumulate. For the other options the last one wins, as in
    spark-submit.
    """

    program: str  # argv[0] as given
    app: str  # the application resource (path or URI), as given
    app_args: tuple[str, ...] = ()  # the application's arguments, verbatim
    master: str | None = None
    deploy_mode: str | None = None
    main_class: str | None = None  # --class
    name: str | None = None  # --name
    conf: dict[str, str] = field(default_factory=dict, hash=False)  # --conf/-c, last wins
    jars: tuple[str, ...] = ()
    py_files: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    archives: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    exclude_packages: tuple[str, ...] = ()
    repositories: tuple[str, ...] = ()
    properties_file: str | None = None
    driver_memory: str | None = None
    driver_cores: str | None = None
    driver_java_options: str | None = None
    driver_library_path: str | None = None
    driver_class_path: str | None = None
    executor_memory: str | None = None
    executor_cores: str | None = None
    num_executors: str | None = None
    total_executor_cores: str | None = None
    # every other option or switch, (canonical name, value or None), in the order given
    other: tuple[tuple[str, str | None], ...] = ()

    @property
    def kind(self) -> str:
        """``"python"`` for a .py application, ``"jar"`` for a .jar, else ``"other"``."""
        if self.app.endswith(".py"):
            return "python"
        return "jar" if self.app.endswith(".jar") else "other"

    def to_argv(self) -> list[str]:
        """A spark-submit argv meaning the same: program, options, application, its arguments.

        Options come in the table's order, each as ``--opt value`` (so empty values and values
        starting with ``-`` survive), then ``other`` in its order.
        """
        argv = [self.program]
        for option in _OPTIONS:
            argv += _option_argv(option.names[0], option.field, self)
        for name, value in self.other:
            argv += [name] if value is None else [name, value]
        return [*argv, self.app, *self.app_args]


def _option_argv(name: str, field_name: str | None, line: SubmitLine) -> list[str]:
    """The arguments that give ``line``'s value of one field back to spark-submit."""
    if field_name is None:
        return []
    value = getattr(line, field_name)
    if field_name == "conf":
        return [arg for key, text in value.items() for arg in (name, f"{key}={text}")]
    if field_name in _LIST_FIELDS:
        return [name, ",".join(value)] if value else []
    return [] if value is None else [name, value]


def parse_submit_line(argv: Sequence[str]) -> SubmitLine:
    """Parse a spark-submit line given as its argv list (argv[0] is the spark-submit program).

    Raises UsageError, with one line saying what to fix, for a line that is not spark-submit's,
    a bad or unknown option, no application, cluster deploy mode (the driver would run on
    another host), or an action that runs no application (--kill, --status, --help, --version).
    """
    args = list(argv)
    if not args:
        raise UsageError(f"the spark-submit line is empty: {_RESTATE}")
    program = args[0]
    if program.replace("\\", "/").rsplit("/", 1)[-1] not in _PROGRAMS:
        raise UsageError(f"the line starts with {program!r}, not spark-submit: {_RESTATE}")
    found, rest = _scan(args[1:])
    for option, _ in found:
        if option.names[0] in _ACTIONS:
            raise UsageError(
                f"{option.names[0]} makes spark-submit {_ACTIONS[option.names[0]]}, not run an "
                f"application: give the line that runs the application instead"
            )
    if not rest:
        raise UsageError(
            "the spark-submit line has no application (a .py file, a .jar or spark-internal "
            "after the options): add it, as spark-submit needs one"
        )
    line = _build(program, found, rest[0], tuple(rest[1:]))
    _check_deploy_mode(line)
    return line


def _scan(args: list[str]) -> tuple[list[tuple[_Option, str | None]], list[str]]:
    """Spark's option loop: the options with their values, then the application and its args."""
    found: list[tuple[_Option, str | None]] = []
    i = 0
    while i < len(args):
        written, value = args[i], None
        if match := _EQ_FORM.fullmatch(written):
            written, value = match.group(1), match.group(2)
        option = _BY_NAME.get(written)
        if option is None:
            if written.startswith("-"):
                raise UsageError(
                    f"unknown spark-submit option {written!r} before the application: correct "
                    f"or remove it (spark-submit's options are listed by `spark-submit --help`)"
                )
            return found, args[i:]
        if option.takes_value and value is None:
            if i + 1 == len(args):
                raise UsageError(
                    f"{written} needs a value but ends the line: give it one ({written} VALUE) "
                    f"before the application"
                )
            i += 1
            value = args[i]
        found.append((option, value if option.takes_value else None))  # Spark drops --switch=x
        i += 1
    return found, []


def _build(
    program: str, found: list[tuple[_Option, str | None]], app: str, app_args: tuple[str, ...]
) -> SubmitLine:
    """The SubmitLine the scanned options make: last value wins, lists accumulate."""
    values: dict[str, Any] = {}
    conf: dict[str, str] = {}
    lists: dict[str, list[str]] = {name: [] for name in _LIST_FIELDS}
    other: list[tuple[str, str | None]] = []
    for option, value in found:
        if option.field is None:
            other.append((option.names[0], value))
        elif option.field == "conf":
            key, text = _conf_pair(str(value))
            conf[key] = text
        elif option.field in _LIST_FIELDS:
            lists[option.field] += _items(str(value))
        else:
            values[option.field] = value
    values.update({name: tuple(items) for name, items in lists.items()})
    return SubmitLine(program, app, app_args, conf=conf, other=tuple(other), **values)


def _conf_pair(text: str) -> tuple[str, str]:
    """KEY and VALUE of a ``--conf KEY=VALUE`` (split at the first ``=``, as Spark does)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UsageError(f"--conf {text!r} is not KEY=VALUE: write it as --conf KEY=VALUE")
    return key, value


def _check_deploy_mode(line: SubmitLine) -> None:
    """Client or cluster mode; whether the run's master takes cluster mode is the run's to say
    (experiment/runner.py: a standalone master or YARN, given with --master)."""
    if line.deploy_mode not in (None, "client", "cluster"):
        raise UsageError(
            f"--deploy-mode {line.deploy_mode!r} is neither client nor cluster: "
            "give client (the driver here) or cluster (with --master spark://... or yarn)"
        )


def _items(text: str) -> list[str]:
    """The items of a comma-separated list, stripped, empty ones dropped."""
    return [item.strip() for item in text.split(",") if item.strip()]


def merge_list(*values: str | Iterable[str] | None) -> str:
    """Comma-join list-valued settings (spark.jars, spark.plugins, --py-files...).

    Each value is a comma-separated string, an iterable of such strings, or None. The first
    occurrence of each item is kept, in order; empty items are dropped:
    ``merge_list("a.jar,b.jar", ["b.jar", "c.jar"]) == "a.jar,b.jar,c.jar"``.
    """
    merged: dict[str, None] = {}
    for value in values:
        parts = [value] if isinstance(value, str) else (value or ())
        for part in parts:
            merged.update(dict.fromkeys(_items(part)))
    return ",".join(merged)


def merge_java_options(*values: str | None) -> str:
    """Space-join extraJavaOptions strings in order, dropping empty ones.

    Nothing is deduplicated: a JVM flag given twice can mean something (the last one wins).
    """
    return " ".join(text.strip() for text in values if text and text.strip())
