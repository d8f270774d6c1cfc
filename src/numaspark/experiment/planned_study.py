"""A built-in study planned at a venue: the machine it is planned on there, the parts whoever
places the JVMs there can realise, and what the hosts' kernels do that the study cannot
switch. The CLI's ``study`` commands say it and run it."""

from __future__ import annotations

from numaspark.experiment.placing import balancing_as_found, balancing_refused
from numaspark.experiment.studies import STUDIES, Study, StudyRequest, study_at
from numaspark.experiment.venue import Venue
from numaspark.topology import Topology


def plan_study(
    kind: str, venue: Venue, topology: Topology, workload: str, size: str, **how
) -> tuple[Study, list[str]]:
    """Study ``kind`` of ``workload`` at ``venue``, planned on ``topology`` (the venue's
    machine: experiment/placing.py's `planned_topology`); ``how``: the study's repetitions,
    warm-ups, parameters and Spark settings. Its notes: lines the study's reader needs (the
    kernel's NUMA balancing on hosts over SSH, read, where the binding study cannot switch it)."""
    extra = {}
    notes = []
    if kind == "binding":
        # the binding study compares the kernel's NUMA balancing where it can switch it: here
        extra["autonuma"] = balancing_refused(venue) or True
        found = balancing_as_found(venue)
        notes += [found] if found else []
    study = STUDIES[kind](StudyRequest(topology, workload, size, **how), **extra)
    return study_at(study, venue, topology), notes
