"""What a rule gives: a `Finding` (a severity, the evidence, a recommendation and the change
that tries it), or `NotAssessed` (with why); `Advice`, all of one subject's; and the rules not
assessed grouped by their cause (`NotAssessedCause`), said once however many subjects share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from numaspark import records
from numaspark.decide.thresholds import Severity
from numaspark.experiment.request import RunRequest
from numaspark.records import Shape

# a severity is stored as its word: none, low, moderate, severe, critical
records.value_type(Severity, lambda severity: severity.word, lambda word: Severity[word.upper()])

# why a rule that found a share over 100% says nothing: the sums it divided are not the
# application's (a log cut short, or damaged), and a share above the whole is no finding
FIGURES_DO_NOT_ADD_UP = "the log's figures do not add up (a damaged or partial log)"


@dataclass
class Finding:
    rule: str
    severity: Severity
    finding: str
    evidence: dict
    recommendation: str = ""
    request: RunRequest | None = None  # the run that tries the change (`advise` checks it)
    # printed, one line: for a stored run, the request's numaspark run once checked; for an
    # event log alone, the spark-submit options of `change` (--conf KEY=VALUE ...); or another
    # command (whatif, plan)
    command: str = ""
    check: str = ""  # one line when the planner did not take the request: why, or unchecked
    # the Spark settings the change sets that differ from the application's own (the lines of
    # its properties file); empty where the change is not one of Spark's settings
    change: dict[str, str] = field(default_factory=dict)

    __json__: ClassVar[Shape] = Shape(skip=("request",))  # the command says what it runs


@dataclass
class NotAssessed:
    rule: str
    why: str  # the cause: the same words wherever the same input is missing
    detail: str = ""  # this rule's own figures, where they say more than the cause

    __json__: ClassVar[Shape] = Shape(omit_empty=("detail",))


def share_beyond_whole(rule: str, share: float | None, what: str) -> NotAssessed | None:
    """`NotAssessed` where ``share`` (``what``, e.g. "GC time over executor run time") is over
    100%: no share of a whole is larger than it, so the figures are not the application's."""
    if share is None or share <= 1.0:
        return None
    return NotAssessed(rule, FIGURES_DO_NOT_ADD_UP, f"{what}: {share:.0%}")


@dataclass
class Advice:
    subject: str  # the configuration or the event log advised on
    findings: list[Finding] = field(default_factory=list)
    not_assessed: list[NotAssessed] = field(default_factory=list)
    # what is wrong with the event log advised on alone (metrics/damage.py's words)
    warnings: list[str] = field(default_factory=list)

    __json__: ClassVar[Shape] = Shape(
        computed=("worst",),
        order=("subject", "worst", "findings", "not_assessed", "warnings"),
        omit_empty=("warnings",),
    )

    @property
    def worst(self) -> Severity:
        return max((f.severity for f in self.findings), default=Severity.NONE)

    @property
    def causes(self) -> list[NotAssessedCause]:
        """This advice's rules not assessed, one entry per cause."""
        return not_assessed_by_cause([self])


@dataclass
class NotAssessedCause:
    """One cause of rules not assessed: the rules it kept from being judged (with their own
    figures, where a rule has them) and the subjects it applies to, of ``of`` advised on."""

    why: str
    rules: list[str]
    subjects: list[str]
    of: int
    details: dict[str, str] = field(default_factory=dict)

    __json__: ClassVar[Shape] = Shape(omit_empty=("details",))

    @property
    def every_subject(self) -> bool:
        return len(self.subjects) == self.of

    def rule_list(self) -> str:
        """The rules, each with its figures where it has them: ``gc (GC ...: 117%), spill``."""
        return ", ".join(
            f"{rule} ({self.details[rule]})" if rule in self.details else rule
            for rule in self.rules
        )


def not_assessed_by_cause(advices: list[Advice]) -> list[NotAssessedCause]:
    """The rules ``advices`` could not assess, one entry per cause (its words), in the order
    first met: what a command says once, however many configurations or logs share it."""
    causes: dict[str, NotAssessedCause] = {}
    for advice in advices:
        for missing in advice.not_assessed:
            cause = causes.setdefault(
                missing.why, NotAssessedCause(missing.why, [], [], len(advices))
            )
            if missing.rule not in cause.rules:
                cause.rules.append(missing.rule)
            if advice.subject not in cause.subjects:
                cause.subjects.append(advice.subject)
            if missing.detail:
                cause.details.setdefault(missing.rule, missing.detail)
    return list(causes.values())
