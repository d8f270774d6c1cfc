"""The workload registry: each workload is a data generator, a PySpark job and a check."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from numaspark.errors import UsageError
from numaspark.units import parse_size
from numaspark.workloads.application import Application

JOBS_DIR = Path(__file__).resolve().parent / "jobs"


@dataclass(frozen=True)
class Size:
    """How much input: a named profile resolved to rows, or an explicit row count."""

    label: str  # what the user asked for: "tiny", "64MB", "100000rows"
    rows: int  # the unit the generator counts (lines, records)


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    details: str


@dataclass(frozen=True)
class Workload:
    name: str
    category: str  # "core", "sql", "ml", "graph", "streaming"
    api: str  # "RDD", "DataFrame", ...
    description: str
    job: str  # file name under jobs/, run by spark-submit
    generator: Callable[[Path, Size, int, dict], dict]  # (dir, size, seed, params) -> facts
    check: Callable[[dict, dict], CheckResult]  # (manifest facts, job answer) -> verdict
    profiles: dict[str, int]  # named size -> rows
    row_bytes: int  # approximate bytes per row, to turn "64MB" into rows
    params: dict[str, object] = field(default_factory=dict)
    # what the job needs to know of its input beyond the parameters (grep's keyword)
    job_params: Callable[[dict], dict] | None = None
    seeded: bool = True  # False where the data is fixed by its size (TPC-H)
    # streaming workloads read numaspark's live source ("words" or "clicks") instead of files
    stream: str | None = None
    # a user's application (workloads/application.py): no generator, no answer to check
    application: Application | None = None

    @property
    def streaming(self) -> bool:
        return self.stream is not None

    def with_params(self, overrides: dict[str, str]) -> Workload:
        """This workload with parameters set from ``KEY=VALUE`` text, typed as the defaults."""
        params = dict(self.params)
        for key, text in overrides.items():
            if key not in params:
                known = ", ".join(sorted(self.params)) or "none"
                raise UsageError(
                    f"{self.name} has no parameter {key!r}: its parameters are {known}"
                )
            params[key] = _typed(key, text, params[key])
        return replace(self, params=params)

    def job_arguments(self, facts: dict) -> dict:
        return {**self.params, **(self.job_params(facts) if self.job_params else {})}

    @property
    def job_path(self) -> Path:
        if self.application is not None:
            return Path(self.application.path)
        return JOBS_DIR / self.job

    def size(self, text: str) -> Size:
        return parse_size_spec(text, self)


def _typed(key: str, text: str, default: object) -> object:
    kind = type(default)
    try:
        if kind is bool:
            if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return text.lower() in ("true", "1", "yes")
        return kind(text)
    except ValueError:
        raise UsageError(f"bad --param {key}={text!r}: expected a {kind.__name__}") from None


def parse_size_spec(text: str, workload: Workload) -> Size:
    """``tiny``/``small``/``large``/``huge``, ``64MB``/``1GB``, or ``100000rows``."""
    label = text.strip().lower()
    if label in workload.profiles:
        return Size(label, workload.profiles[label])
    if label.endswith("rows") and label[:-4].isdigit():
        if int(label[:-4]) == 0:
            raise UsageError(
                f"bad --size {text!r}: a workload needs at least one row, e.g. 1000rows"
            )
        return Size(label, int(label[:-4]))

    try:
        nbytes = parse_size(label, "--size")
    except UsageError:
        raise UsageError(
            f"bad --size {text!r}: use a profile ({', '.join(workload.profiles)}), bytes like 64MB, "
            "or rows like 100000rows"
        ) from None
    return Size(label, max(1, nbytes // workload.row_bytes))


REGISTRY: dict[str, Workload] = {}  # every workload by name (workloads/catalog.py asks)


def register(workload: Workload) -> Workload:
    REGISTRY[workload.name] = workload
    return workload


def check_equal(what: str, got, want) -> CheckResult:
    return CheckResult(got == want, f"{what} {got}, expected {want}")


def check_close(what: str, got, want, rel: float = 1e-6) -> CheckResult:
    ok = got is not None and abs(got - want) <= rel * max(1.0, abs(want))
    return CheckResult(ok, f"{what} {got}, expected {want}")


def check_all(*results: CheckResult) -> CheckResult:
    return CheckResult(all(r.passed for r in results), "; ".join(r.details for r in results))
