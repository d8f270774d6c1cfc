"""A user's own Spark application as a workload: a PySpark file, a JAR and its main class, or
an existing spark-submit line.

All three forms become one `Application`: a parsed spark-submit line (workloads/submitline.py)
with a name to show and a content hash of the file. Its settings become Spark conf (the
one place numaspark's plan is merged with them, spark/conf.py); the options that have no
conf equivalent (``--class``, ``--verbose``, ``--proxy-user``...) pass through as they were.
numaspark never generates, moves or deletes an application's inputs or outputs: its
arguments, and any URI in them, reach it exactly as given, as an argv list.

An application does its work once, so each iteration of it is one application
(experiment/runner.py), unlike the suite's jobs that loop in one application.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from numaspark import records
from numaspark.errors import UsageError
from numaspark.records import Shape
from numaspark.workloads.submitline import SubmitLine, merge_list, parse_submit_line

CATEGORY = "application"
URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
# the longest name shown for an application (its file's stem is cut to it)
NAME_LIMIT = 60

DEPLOY_MODE_KEY = "spark.submit.deployMode"  # client (the driver here) or cluster

# spark-submit options and the Spark conf key each one sets (SparkSubmitArguments reads
# the key when the option is absent, and the option wins over the key when present)
OPTION_CONF: dict[str, str] = {
    "master": "spark.master",
    "deploy_mode": DEPLOY_MODE_KEY,
    "name": "spark.app.name",
    "driver_memory": "spark.driver.memory",
    "driver_cores": "spark.driver.cores",
    "driver_java_options": "spark.driver.extraJavaOptions",
    "driver_library_path": "spark.driver.extraLibraryPath",
    "driver_class_path": "spark.driver.extraClassPath",
    "executor_memory": "spark.executor.memory",
    "executor_cores": "spark.executor.cores",
    "num_executors": "spark.executor.instances",
    "total_executor_cores": "spark.cores.max",
}
LIST_OPTION_CONF: dict[str, str] = {
    "jars": "spark.jars",
    "py_files": "spark.submit.pyFiles",
    "files": "spark.files",
    "archives": "spark.archives",
    "packages": "spark.jars.packages",
    "exclude_packages": "spark.jars.excludes",
    "repositories": "spark.jars.repositories",
}


@dataclass(frozen=True)
class Application:
    """A user's application: its spark-submit line, the name it is shown by, its file's hash."""

    line: SubmitLine
    name: str
    sha256: str | None  # of the application file; None for a URI numaspark cannot read
    given_line: bool = False  # the user gave the line: its --master and layout count
    check: tuple[str, ...] = ()  # --check: run after each iteration, its exit status decides

    # ``spec.application`` of a run (docs/schemas.md): what the line says, spelled out first
    __json__: ClassVar[Shape] = Shape(
        keys={"main_class": "class"},
        computed=("path", "main_class", "args"),
        order=("path", "sha256", "main_class", "args", "name", "line", "given_line", "check"),
        null_empty=("check",),
    )

    @property
    def path(self) -> str:
        return self.line.app

    @property
    def main_class(self) -> str | None:
        return self.line.main_class

    @property
    def args(self) -> tuple[str, ...]:
        return self.line.app_args

    @property
    def api(self) -> str:
        return "PySpark" if self.line.kind == "python" else "JVM"

    def conf(self) -> dict[str, str]:
        """The application's own Spark settings: its properties file, then its ``--conf``,
        then the options that set a key (the order spark-submit gives them precedence in)."""
        conf = dict(read_properties(self.line.properties_file)) if self.line.properties_file else {}
        conf.update(self.line.conf)
        for option, key in OPTION_CONF.items():
            value = getattr(self.line, option)
            if value is not None:
                conf[key] = value
        for option, key in LIST_OPTION_CONF.items():
            items = getattr(self.line, option)
            if items:
                conf[key] = merge_list(conf.get(key), items)
        return conf

    def passthrough(self) -> list[str]:
        """The line's options that set no conf key, as spark-submit options."""
        argv = ["--class", self.line.main_class] if self.line.main_class else []
        for option, value in self.line.other:
            argv += [option] if value is None else [option, value]
        return argv

    def command(self, options: list[str] | None = None) -> list[str]:
        """How the user names this application to ``numaspark run``, with numaspark's
        ``options`` in their place (before ``--``): advice prints it to be pasted."""
        if self.given_line:
            return [*(options or []), "--", *self.line.to_argv()]
        argv = [self.path, *(["--class", self.main_class] if self.main_class else [])]
        for option, key in (
            ("--py-files", "py_files"),
            ("--files", "files"),
            ("--jars", "jars"),
            ("--packages", "packages"),
        ):
            if getattr(self.line, key):
                argv += [option, ",".join(getattr(self.line, key))]
        if self.check:
            argv += ["--check", shlex.join(self.check)]
        if self.name != _stem(self.path):
            argv += ["--name", self.name]
        argv += options or []
        return [*argv, "--", *self.args] if self.args else argv


# a spark-submit line is stored as its argv
records.value_type(SubmitLine, SubmitLine.to_argv, parse_submit_line)


def from_file(
    path: str,
    args: list[str],
    main_class: str | None = None,
    options: dict[str, str | None] | None = None,
    name: str | None = None,
    check: str | None = None,
) -> Application:
    """``numaspark run ./job.py`` or ``./job.jar [--class C]``: the file, its arguments, and
    the spark-submit options numaspark passes on (``--py-files``, ``--files``...)."""
    local = _local_file(path)
    if path.endswith(".jar") and main_class is None and local is not None:
        main_class = manifest_main_class(local)
    if path.endswith(".jar") and main_class is None:
        raise UsageError(
            f"{path}: give its main class with --class (its manifest names no Main-Class)"
        )
    argv = ["spark-submit", *(["--class", main_class] if main_class else [])]
    for option, value in (options or {}).items():
        if value:
            argv += [option, value]
    return _application(
        parse_submit_line([*argv, path, *args]), local, name, check, given_line=False
    )


def from_line(argv: list[str], name: str | None = None, check: str | None = None) -> Application:
    """``numaspark run -- spark-submit [options] APP [ARGS]``: a line as it stands in a script."""
    line = parse_submit_line(argv)
    local = _local_file(line.app)
    if (
        line.kind == "jar"
        and line.main_class is None
        and local is not None
        and manifest_main_class(local) is None
    ):
        raise UsageError(
            f"{line.app}: the line gives no --class and the JAR's manifest "
            "names no Main-Class: add --class to the line"
        )
    return _application(line, local, name, check, given_line=True)


def is_application(text: str) -> bool:
    """Whether a workload argument names an application rather than a built-in."""
    return (
        text.endswith((".py", ".jar"))
        or "/" in text
        or text == "spark-submit"
        or text.endswith("/spark-submit")
    )


def _application(
    line: SubmitLine, local: Path | None, name: str | None, check: str | None, given_line: bool
) -> Application:
    if line.kind not in ("python", "jar"):
        raise UsageError(
            f"{line.app}: numaspark runs a PySpark file (.py) or a JAR (.jar); give one of those"
        )
    shown = name or _stem(line.app)
    if not shown or not re.fullmatch(r"[\w.@+-]+", shown):
        raise UsageError(f"--name {shown!r}: use letters, digits and . _ - + @ only")
    try:
        check_argv = tuple(shlex.split(check)) if check else ()
    except ValueError as exc:
        raise UsageError(f"--check {check!r}: {exc}: quote it as a shell would") from None
    sha = _sha256(local) if local is not None else None
    return Application(line=line, name=shown, sha256=sha, given_line=given_line, check=check_argv)


def _stem(path: str) -> str:
    """The name an application is shown by unless given one: its file's stem."""
    return Path(path.split("?")[0]).stem[:NAME_LIMIT]


def _local_file(path: str) -> Path | None:
    """The application's file on this machine (a path or a file:// URI), checked to exist;
    None for another scheme (hdfs://, s3a://...: spark-submit fetches it, numaspark leaves
    it alone)."""
    if URI.match(path) and not path.startswith("file://"):
        return None
    local = Path(path.removeprefix("file://"))
    if not local.is_file():
        raise UsageError(
            f"{path}: no such file: give the path of your application "
            "(a .py or a .jar), or a built-in workload's name (numaspark workloads)"
        )
    return local


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def manifest_main_class(jar: Path) -> str | None:
    """The ``Main-Class`` of a JAR's manifest, if it names one."""
    try:
        with zipfile.ZipFile(jar) as archive:
            text = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    # manifest lines wrap at 72 bytes, a continuation starting with one space
    text = re.sub(r"\r?\n ", "", text)
    match = re.search(r"^Main-Class:\s*(\S+)\s*$", text, re.MULTILINE)
    return match.group(1) if match else None


def read_properties(path: str) -> dict[str, str]:
    """A spark-submit ``--properties-file``, read as Spark reads it: Java's Properties rules
    (``key=value``, ``key: value`` or ``key value``; continuation lines, escapes, comments;
    javaproperties implements them), UTF-8, each value trimmed (Spark's
    ``Utils.getPropertiesFromFile``)."""
    # lazy: this package is shipped to executors (the suite's tasks import it) whose Python
    # has only the standard library and pyspark
    import javaproperties

    try:
        with open(path, encoding="utf-8") as text:
            found = javaproperties.load(text)
    except OSError as exc:
        raise UsageError(f"--properties-file {path}: cannot read it ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"--properties-file {path}: not a Java properties file ({exc})") from None
    return {key: value.strip() for key, value in found.items()}
