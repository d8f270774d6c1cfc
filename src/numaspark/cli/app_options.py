"""A user's application as the workload (workloads/application.py): the options that name it
besides its file or spark-submit line, handed to a command as one `AppOptions`
(``@with_application``); what a spark-submit line's own settings say (`line_settings`); a
co-scheduled workload given as one word (`cosched_workload`)."""

from __future__ import annotations

import dataclasses
import inspect
import shlex
from dataclasses import dataclass
from typing import Annotated

import typer

from numaspark.cli.option_group import Opt, option_group
from numaspark.cli.placement_options import PlacementOptions
from numaspark.errors import UsageError
from numaspark.placement import Mode
from numaspark.workloads import application as apps
from numaspark.workloads.catalog import get_workload, register_application

APPLICATION = [
    inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=option)
    for name, option in (
        (
            "app_args",
            Annotated[
                list[str] | None,
                typer.Argument(
                    help="Your application's arguments, after '--' (or: -- spark-submit [its options] APP [ARGS]).",
                    show_default=False,
                ),
            ],
        ),
        (
            "main_class",
            Annotated[
                str | None,
                Opt(
                    "--class",
                    help="Your JAR's main class (default: the Main-Class of its manifest).",
                ),
            ],
        ),
        (
            "name",
            Annotated[
                str | None,
                Opt(
                    "--name",
                    help="The name your application's runs are shown by (default: the file's stem).",
                ),
            ],
        ),
        (
            "py_files",
            Annotated[
                str | None, Opt("--py-files", help="Your application's spark-submit --py-files.")
            ],
        ),
        (
            "files",
            Annotated[str | None, Opt("--files", help="Your application's spark-submit --files.")],
        ),
        (
            "jars",
            Annotated[str | None, Opt("--jars", help="Your application's spark-submit --jars.")],
        ),
        (
            "packages",
            Annotated[
                str | None, Opt("--packages", help="Your application's spark-submit --packages.")
            ],
        ),
        (
            "check",
            Annotated[
                str | None,
                Opt(
                    "--check",
                    help="A command run after each of your application's runs (NUMASPARK_RUN_DIR set; not a shell); its exit status is the run's check.",
                ),
            ],
        ),
    )
]


@dataclass(frozen=True)
class AppOptions:
    """What names a user's application besides its file or line (``@with_application``)."""

    app_args: list[str] | None = None
    main_class: str | None = None
    name: str | None = None
    py_files: str | None = None
    files: str | None = None
    jars: str | None = None
    packages: str | None = None
    check: str | None = None

    def workload(self, text: str | None):
        """The workload ``text`` names: a built-in, or the user's application (a file, or a
        spark-submit line given after ``--``), registered under its name for this process."""
        if text is None:
            raise UsageError(
                "give a workload (numaspark workloads), your application (a .py or "
                "a .jar), or your line after '--': -- spark-submit ... APP"
            )
        args = list(self.app_args or [])
        if text == "spark-submit" or text.endswith("/spark-submit"):
            if self.main_class or self.py_files or self.files or self.jars or self.packages:
                raise UsageError(
                    "--class, --py-files, --files, --jars and --packages belong in "
                    "your spark-submit line when you give one"
                )
            return register_application(apps.from_line([text, *args], self.name, self.check))
        if apps.is_application(text):
            options = {
                "--py-files": self.py_files,
                "--files": self.files,
                "--jars": self.jars,
                "--packages": self.packages,
            }
            return register_application(
                apps.from_file(text, args, self.main_class, options, self.name, self.check)
            )
        given = [
            o
            for o, v in (
                ("arguments after --", args),
                ("--class", self.main_class),
                ("--check", self.check),
                ("--py-files", self.py_files),
                ("--jars", self.jars),
                ("--files", self.files),
                ("--packages", self.packages),
            )
            if v
        ]
        if given:
            raise UsageError(
                f"{text} is a built-in workload: {', '.join(given)} are for your own "
                "application (a .py or a .jar)"
            )
        return get_workload(text)


# the options that name a user's application, handed to a command as one
# ``application: AppOptions`` (its arguments come last, after ``--``)
with_application = option_group("application", APPLICATION, AppOptions)


def line_settings(
    where: PlacementOptions, mode, master: str | None, workload
) -> tuple[PlacementOptions, object, str | None]:
    """Where a spark-submit line's own settings say it runs, for what numaspark's options
    leave open: its ``--master`` (``local[N]`` is local mode with N task slots; any other is
    a cluster numaspark did not start) and its executors, cores and heap."""
    application = getattr(workload, "application", None)
    if application is None or not application.given_line:
        return where, mode, master
    line = application.line
    changes: dict = {}
    if line.master and line.master.startswith("local"):
        if master is not None:
            raise UsageError(f"your line runs {line.master} and --master says {master}: give one")
        mode = Mode.LOCAL
        slots = line.master.removeprefix("local").strip("[]").split(",")[0]
        if where.cores_per_executor is None and slots.isdigit():
            changes["cores_per_executor"] = int(slots)
        elif where.cores_per_executor is None and not slots:
            changes["cores_per_executor"] = 1
    elif line.master:
        if master is not None and master != line.master:
            raise UsageError(
                f"your line's --master {line.master} and numaspark's --master "
                f"{master} differ: give one"
            )
        master = line.master
    if where.executors is None and where.executors_per_node is None and line.num_executors:
        changes["executors"] = _count(line.num_executors, "--num-executors")
    if where.cores_per_executor is None and line.executor_cores:
        changes["cores_per_executor"] = _count(line.executor_cores, "--executor-cores")
    if where.memory_per_executor == "auto" and line.executor_memory:
        changes["memory_per_executor"] = line.executor_memory
    return dataclasses.replace(where, **changes), mode, master


def _count(text: str, option: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"your line's {option} {text!r}: give a whole number of at least 1")
    return int(text)


def cosched_workload(text: str) -> str:
    """A co-scheduled workload's name: a built-in, or an application given with its
    arguments as one word (``'./etl.py in out'``, split as a shell would, never run by one)."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"{text!r}: {exc}: quote it as a shell would") from None
    if not words:
        raise UsageError("an empty workload: give a name or your application")
    if len(words) == 1 and not apps.is_application(words[0]):
        return get_workload(words[0]).name
    return AppOptions(app_args=words[1:]).workload(words[0]).name
