"""What a rule gives: a `Finding` (a severity, the evidence, a recommendation and the changed
request that tries it), or `NotAssessed` (with why); and `Advice`, all of one subject's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from numaspark import records
from numaspark.decide.thresholds import Severity
from numaspark.experiment.request import RunRequest
from numaspark.records import Shape

# a severity is stored as its word: none, low, moderate, severe, critical
records.value_type(Severity, lambda severity: severity.word, lambda word: Severity[word.upper()])


@dataclass
class Finding:
    rule: str
    severity: Severity
    finding: str
    evidence: dict
    recommendation: str = ""
    request: RunRequest | None = None  # the run that tries the change (`advise` checks it)
    command: str = ""  # printed: the request's numaspark run once checked, or another command
    check: str = ""  # one line when the planner did not take the request: why, or unchecked

    __json__: ClassVar[Shape] = Shape(skip=("request",))  # the command says what it runs


@dataclass
class NotAssessed:
    rule: str
    why: str


@dataclass
class Advice:
    subject: str  # the configuration or the event log advised on
    findings: list[Finding] = field(default_factory=list)
    not_assessed: list[NotAssessed] = field(default_factory=list)

    __json__: ClassVar[Shape] = Shape(
        computed=("worst",), order=("subject", "worst", "findings", "not_assessed")
    )

    @property
    def worst(self) -> Severity:
        return max((f.severity for f in self.findings), default=Severity.NONE)
