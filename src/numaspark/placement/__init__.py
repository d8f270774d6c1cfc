"""place: executor layouts and bindings on a topology, rendered for numactl, Spark, YARN, k8s."""

from numaspark.placement.kubelet import k8s_settings
from numaspark.placement.manager_files import Platform, platform_files, write_files
from numaspark.placement.model import (
    PLACEMENT_SCHEMA,
    Binding,
    JvmPlacement,
    Layout,
    MemPolicy,
    Mode,
    Placement,
    PuOrder,
)
from numaspark.placement.planner import memory_on, plan, spark_overhead
from numaspark.placement.render import (
    BINDER_ENV,
    Binder,
    bind_argv,
    bindexec_argv,
    bound_from_inside,
    inside_slice_cpus,
    numactl_argv,
    placement_to_dict,
    shipped_plugin_conf,
    spark_conf,
    spark_defaults_text,
    yarn_settings,
)

__all__ = [
    "BINDER_ENV",
    "Binder",
    "bind_argv",
    "bindexec_argv",
    "PLACEMENT_SCHEMA",
    "Binding",
    "JvmPlacement",
    "Layout",
    "MemPolicy",
    "Mode",
    "Placement",
    "Platform",
    "PuOrder",
    "inside_slice_cpus",
    "k8s_settings",
    "memory_on",
    "numactl_argv",
    "placement_to_dict",
    "plan",
    "bound_from_inside",
    "shipped_plugin_conf",
    "spark_conf",
    "spark_defaults_text",
    "spark_overhead",
    "platform_files",
    "write_files",
    "yarn_settings",
]
