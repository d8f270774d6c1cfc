"""Terminal views (rich) of what every command prints: the topology, a placement and its
settings, runs and studies, advice, classification, the tuner's trials, fits, the doctor's
checks and more; one function per view, none of them starts work. The cli/ modules call them
as ``views.X`` of this module, which gathers them from where each is kept: views_machine.py
(the machine, placements, clusters), views_runs.py (runs, studies, fits), views_advice.py
(advice, classification, the tuner) and views_event_logs.py (event logs, one or many)."""

from __future__ import annotations

from numaspark.report.views_advice import (
    SEVERITY_COLOURS,
    advice_lines,
    classification_table,
    trial_failures,
    trials_table,
)
from numaspark.report.views_event_logs import (
    applications_table,
    history_lines,
    history_table,
    log_lines,
    placement_lines,
    whatif_applications_table,
    whatif_table,
)
from numaspark.report.views_machine import (
    cluster_table,
    device_table,
    distance_table,
    doctor_table,
    hosts_view,
    launch_view,
    machine_line,
    placement_view,
    probe_table,
    topology_view,
    yarn_table,
)
from numaspark.report.views_runs import (
    cosched_table,
    fit_views,
    run_lines,
    scaling_lines,
    smt_line,
    study_lines,
    warning_lines,
    workloads_table,
)

__all__ = [
    "SEVERITY_COLOURS",
    "advice_lines",
    "applications_table",
    "classification_table",
    "cluster_table",
    "cosched_table",
    "device_table",
    "distance_table",
    "doctor_table",
    "fit_views",
    "history_lines",
    "history_table",
    "hosts_view",
    "launch_view",
    "log_lines",
    "placement_lines",
    "placement_view",
    "probe_table",
    "run_lines",
    "scaling_lines",
    "smt_line",
    "study_lines",
    "machine_line",
    "topology_view",
    "trial_failures",
    "trials_table",
    "warning_lines",
    "whatif_applications_table",
    "whatif_table",
    "workloads_table",
    "yarn_table",
]
