"""run: the workload registry, data generators and PySpark jobs, and users' applications."""

from numaspark.workloads.catalog import all_workloads, get_workload, register_application
from numaspark.workloads.registry import CheckResult, Size, Workload

__all__ = [
    "CheckResult",
    "Size",
    "Workload",
    "all_workloads",
    "get_workload",
    "register_application",
]
