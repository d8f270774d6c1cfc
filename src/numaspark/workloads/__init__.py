"""run: the workload registry, data generators and PySpark jobs."""

from numaspark.workloads.registry import CheckResult, Size, Workload, all_workloads, get_workload

__all__ = ["CheckResult", "Size", "Workload", "all_workloads", "get_workload"]
