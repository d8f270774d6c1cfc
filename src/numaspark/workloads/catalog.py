"""The workloads this process knows: the suite's built-ins (registered when first asked for)
and the users' applications named to it (on the command line or in a spec).

Only this module loads the built-ins, so the registry (workloads/registry.py) stays below
them: builtin.py and streams.py register into it on import.
"""

from __future__ import annotations

from pathlib import Path

from numaspark.errors import UsageError
from numaspark.workloads.application import CATEGORY as APPLICATION
from numaspark.workloads.application import Application
from numaspark.workloads.registry import REGISTRY, CheckResult, Size, Workload, register


def register_application(application: Application) -> Workload:
    """The workload of a user's application, known by its name to every command of this
    process (a sweep's configurations, a study's, the tuner's trials)."""
    _load_builtin()
    known = REGISTRY.get(application.name)
    if known is not None and known.application is None:
        raise UsageError(
            f"{application.path}: its name {application.name!r} is a built-in "
            "workload's: give it another with --name"
        )
    if known is not None and known.application != application:
        raise UsageError(
            f"two applications are named {application.name!r} ({known.job} and "
            f"{application.path}, or their arguments differ): name them apart "
            "with --name, or name = ... in the spec"
        )
    return register(
        Workload(
            name=application.name,
            category=APPLICATION,
            api=application.api,
            description=" ".join([application.path, *application.args])[:200],
            job=application.path,
            generator=_no_generator,
            check=_no_answer,
            profiles={},
            row_bytes=1,
            seeded=False,
            application=application,
        )
    )


def forget_applications() -> None:
    """Forget the users' applications registered so far (one process running several
    commands: the tests)."""
    for name in [n for n, w in REGISTRY.items() if w.application is not None]:
        del REGISTRY[name]


def _no_generator(directory: Path, size: Size, seed: int, params: dict) -> dict:
    raise UsageError("a user's application brings its own data: numaspark generates none")


def _no_answer(facts: dict, answer: dict) -> CheckResult:
    return CheckResult(True, "an application is checked by its exit status and --check")


def get_workload(name: str) -> Workload:
    _load_builtin()
    try:
        return REGISTRY[name]
    except KeyError:
        raise UsageError(
            f"unknown workload {name!r}: choose one of {', '.join(sorted(REGISTRY))} "
            "(numaspark workloads lists them)"
        ) from None


def all_workloads() -> list[Workload]:
    _load_builtin()
    return sorted(REGISTRY.values(), key=lambda w: (w.category, w.name))


def _load_builtin() -> None:
    # lazy: the built-ins' generators import numpy, which a command that never asks for a
    # workload (topology, plan, results) should not pay for at start-up
    import numaspark.workloads.builtin
    import numaspark.workloads.streams  # noqa: F401 - they register on import
