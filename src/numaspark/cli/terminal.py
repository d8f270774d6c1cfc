"""The terminal a command talks to: its printing, its progress display, and the one handler
that turns a user's mistake into one line and an exit code.

Results go to stdout, progress and warnings to stderr (so ``--json`` output and
redirected tables stay clean). The long work shown under its progress bars is in
cli/progress.py; the views themselves are in report/console.py.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rich import progress as bars
from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.measure import measure_renderables
from rich.table import Table

from numaspark.errors import NumasparkError
from numaspark.experiment.store import ResultStore
from numaspark.report import console as views
from numaspark.supervise import ledger


class Interrupted(Exception):
    """Ctrl-C or SIGTERM after every started process was stopped: exit 130."""


class _Bars(bars.Progress):
    """A progress display that leaves no bar behind when a user error ends the work: the
    error is then the one line the user reads."""

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None or not issubclass(kind, NumasparkError):
            super().__exit__(kind, value, traceback)
            return
        self.live.transient, quiet = True, self.console.quiet
        self.console.quiet = not self.console.is_terminal  # not even an empty line in a log
        try:
            super().__exit__(kind, value, traceback)
        finally:
            self.console.quiet = quiet


#: in a log (stderr not a terminal), long work says where it is at most this often
LOG_PROGRESS_EVERY_S = 60.0


class _LogLines:
    """The progress display's calls, written to a log as lines: the first change, then what
    runs at most once a minute (`LOG_PROGRESS_EVERY_S`), then the last. A live display in a log
    file would be one frame at the end, or control characters."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.tasks: list[bars.Task] = []
        self.written, self.line = -LOG_PROGRESS_EVERY_S, ""

    def __enter__(self) -> _LogLines:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            for task in self.tasks:
                self._write(task, force=True)

    def add_task(self, description: str, total: float | None = None) -> int:
        task = bars.Task(len(self.tasks), description, total, completed=0, _get_time=time.monotonic)
        self.tasks.append(task)  # written at its first change: a user's error may come first
        return task.id

    def update(self, task_id: int, **changes) -> None:
        task = self.tasks[task_id]
        for name in ("description", "completed", "total"):
            if name in changes:
                setattr(task, name, changes[name])
        self._write(task)

    def advance(self, task_id: int, advance: float = 1) -> None:
        self.tasks[task_id].completed += advance
        self._write(self.tasks[task_id])

    def _write(self, task: bars.Task, force: bool = False) -> None:
        now = time.monotonic()
        done = f"{task.completed:g}" + (f"/{task.total:g}" if task.total else "")
        line = f"[{done}] {task.description}"
        if line == self.line or (not force and now - self.written < LOG_PROGRESS_EVERY_S):
            return
        self.written, self.line = now, line
        self.console.print(f"{time.strftime('%H:%M:%S')} {line}", highlight=False, markup=False)


#: the widest a view is measured at in a pipe or a file (a table takes what its content needs)
PIPED_WIDTH_LIMIT = 1_000_000


def _whole_values(renderable: object, capped: bool = False) -> None:
    """A view's tables: a value wider than its column folded, never cut to an ellipsis (also
    in a table within a table or a group); for a pipe or a file (not ``capped``), no column
    capped in width either."""
    if isinstance(renderable, Group):
        for part in renderable.renderables:
            _whole_values(part, capped)
    elif isinstance(renderable, Table):
        for column in renderable.columns:
            if not capped:
                column.max_width = None
            if column.overflow == "ellipsis" or column.no_wrap:
                column.overflow, column.no_wrap = "fold", False
            for cell in column.cells:
                _whole_values(cell, capped)


def utf8_streams() -> None:
    """stdout and stderr write UTF-8 to a pipe or a file whatever the locale says (a C
    locale's ASCII would fail on the first box-drawing line or ellipsis); on a terminal whose
    encoding cannot show a character, it is replaced rather than fail the command."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
        if encoding == "utf8" or not hasattr(stream, "reconfigure"):
            continue
        if stream.isatty():
            stream.reconfigure(errors="replace")
        else:
            stream.reconfigure(encoding="utf-8")


# the kinds of --json document whose fields changed meaning or moved: their version
# (docs/schemas.md); tune/2: the trials of each held context under contexts[] (issue 58)
VERSIONS = {"tune": 2}


class Terminal:
    def __init__(self) -> None:
        self.out = Console()
        # stderr lines (progress, warnings, errors) are never wrapped: a log keeps each whole
        self.err = Console(stderr=True, soft_wrap=True)
        self._progress_said = -LOG_PROGRESS_EVERY_S

    def print(self, *renderables: RenderableType, **options) -> None:
        """On a terminal, at its width, a value too wide for its column folded. In a pipe or a file, nothing is cut, folded or
        ellipsised: what is printed is as wide as its widest line needs (rich would otherwise
        fit it to 80 columns, or COLUMNS, and cut what does not fit)."""
        if self.out.is_terminal:
            for renderable in renderables:
                _whole_values(renderable, capped=True)
            self.out.print(*renderables, **options)
            return
        for renderable in renderables:
            _whole_values(renderable)
        measured = self.out.options.update(markup=options.get("markup"))
        need = measure_renderables(
            self.out, measured.update_width(PIPED_WIDTH_LIMIT), renderables
        ).maximum
        self.out.width = max(need, self.out.width)
        try:
            self.out.print(*renderables, **options)
        finally:
            self.out.width = None  # sized again from COLUMNS or the default, as at the start

    def json(self, data: object) -> None:
        sys.stdout.write(json.dumps(data, indent=2) + "\n")

    def document(self, kind: str, data: dict) -> None:
        """A command's ``--json``: one object, its ``schema`` first, ``numaspark.KIND/N``
        (docs/schemas.md has a section for each; N is 1 unless `VERSIONS` says)."""
        self.json({"schema": f"numaspark.{kind}/{VERSIONS.get(kind, 1)}", **data})

    def lines(self, lines: list[str]) -> None:
        for line in lines:
            self.out.print(line, highlight=False, soft_wrap=True)

    def note(self, label: str, text: str, colour: str = "yellow") -> None:
        """One labelled line on stderr: a warning, a skipped configuration, a failure."""
        self.err.print(f"[{colour}]{label}[/] {escape(text)}", highlight=False, soft_wrap=True)

    def warn(self, warnings: list[str]) -> None:
        for warning in views.warning_lines(warnings):
            self.note("warning:", warning)

    def failed(self, results: list, name: Callable = lambda r: f"run {r.run_id}") -> list:
        """Say why each failed run failed; the failed runs."""
        failed = [r for r in results if not r.ok and r.status != "disturbed"]
        for r in results:
            if r.status == "disturbed":  # a right answer, timed while Spark replaced an executor
                self.note(f"{name(r)} not counted:", str(r.failure_reason))
        for r in failed:
            self.note(f"{name(r)} failed:", str(r.failure_reason), "red")
        return failed

    def say(self, message: str) -> None:
        """One timestamped line on stderr; a running application's progress (``progress:``)
        at most once a minute in a log (stderr not a terminal)."""
        if message.startswith("progress:") and not self.err.is_terminal:
            if time.monotonic() - self._progress_said < LOG_PROGRESS_EVERY_S:
                return
            self._progress_said = time.monotonic()
        self.err.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {escape(message)}", highlight=False)

    def progress(self, remaining: bool = False, thread: bool = True) -> bars.Progress | _LogLines:
        """What runs now, how many of how many, the time so far (and the time left): a live
        display on a terminal, one line a minute in a log. ``thread`` False: no thread redraws
        it (work that forks worker processes), each update given ``refresh=True`` does."""
        if not self.err.is_terminal:
            return _LogLines(self.err)
        columns = [
            bars.TextColumn("{task.description}"),
            bars.BarColumn(),
            bars.MofNCompleteColumn(),
            bars.TimeElapsedColumn(),
        ]
        if remaining:
            columns.append(bars.TimeRemainingColumn())
        return _Bars(*columns, console=self.err, transient=False, auto_refresh=thread)

    def main(self, app) -> int:
        """Run ``app`` (typer's, or the click command it builds); its exit code. Usage errors keep typer's form (usage, a hint)
        and end with one line that says what was wrong (exit 2); ours are one line on stderr,
        never a traceback; a path that cannot be read or written is one line (exit 2); Ctrl-C
        and SIGTERM exit 130."""
        import typer

        # click's base of usage errors; typer exports its subclasses, not the base itself
        ClickException = next(
            c
            for c in typer.BadParameter.__mro__  # noqa: N806
            if c.__name__ == "ClickException"
        )

        utf8_streams()
        ResultStore.notify = lambda note: self.note("warning:", note)
        ledger.notify = lambda note: self.note("cleaned up:", note)
        try:
            code = app(standalone_mode=False)
        except ClickException as exc:
            exc.show()  # "Usage: ...", "Try ... --help", then "Error: <what was wrong>"
            return exc.exit_code
        except NumasparkError as exc:
            self.error(str(exc))
            return exc.exit_code
        except OSError as exc:  # an output path not writable, a directory where a file goes
            where = f"{exc.filename}: " if exc.filename else ""
            self.error(f"{where}{exc.strerror or exc}: give a path this user can read or write")
            return 2
        except Interrupted:  # what was stopped and kept is said already
            return 130
        except (KeyboardInterrupt, typer.Abort):
            self.err.print("Interrupted.")
            return 130
        return code if isinstance(code, int) else 0

    def error(self, message: str) -> None:
        # escaped: a message that names "[cluster]" or "[[workloads]]" is not rich's markup
        self.err.print(f"[bold red]Error:[/] {escape(message)}", highlight=False, soft_wrap=True)

    @contextlib.contextmanager
    def interruptible(self, out: Path | None) -> Iterator[None]:
        """Ctrl-C or SIGTERM: every started JVM is already stopped (the run loop's scope);
        say what was kept. ``out`` is where runs are stored; None when a command stores none."""

        try:
            yield
        except KeyboardInterrupt:
            if out is None:
                self.err.print("Interrupted: every launched process stopped")
            else:
                store = ResultStore(out)
                self.err.print(
                    f"Interrupted: every Spark JVM stopped; {store.count()} finished "
                    f"run(s) kept in {store.path}"
                )
            raise Interrupted from None
