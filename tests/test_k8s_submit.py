"""Spark's own Kubernetes client takes the files `plan --target k8s --out DIR` writes: with
no API server, spark-submit fails only when it connects."""

from __future__ import annotations

import re
import socket
import subprocess

import pytest
from conftest import run_cli, topology_file

from numaspark.spark.home import LOOPBACK, spark_env, spark_home

# the errors Spark raises for a configuration it refuses before it connects: a missing or
# malformed file, a bad volume, a conf value it cannot parse
CONFIGURATION_ERRORS = re.compile(
    r"SparkException|IllegalArgumentException|NoSuchFileException|Could not load pod|"
    r"NumberFormatException|IllegalStateException|ConfigException"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


@pytest.mark.jvm
@pytest.mark.parametrize("conf", ["spark-defaults.conf", "spark-defaults.plugin.conf"])
def test_spark_submit_takes_the_k8s_files_up_to_the_api_server(conf, tmp_path, no_spark_left):
    """pyspark's spark-submit, cluster mode, an application at a local:// path in the image,
    --properties-file the written conf (the kubelet's binding, and the plugin's alternative):
    it builds the driver pod, reads the executor pod template and the volume confs, and
    fails only at connecting to 127.0.0.1:PORT, where nothing listens. The executor template
    is also given as the driver's, only so that Spark's own loader (fabric8) parses it here:
    in cluster mode the executor's is parsed in the driver pod. ~10 s."""
    out = tmp_path / "k8s"
    run_cli(
        "plan",
        "--xml",
        str(topology_file("24em64t-2n6c2t-pci.xml")),
        "--bind",
        "node",
        "--executors-per-node",
        "1",
        "--target",
        "k8s",
        "--image",
        "apache/spark:4.0.0",
        "--out",
        str(out),
        check=True,
    )
    port = _free_port()
    argv = [
        str(spark_home() / "bin" / "spark-submit"),
        "--master",
        f"k8s://https://{LOOPBACK}:{port}",
        "--deploy-mode",
        "cluster",
        "--properties-file",
        str(out / conf),
        "--conf",
        f"spark.kubernetes.driver.podTemplateFile={out / 'executor-pod-template.yaml'}",
        "--conf",
        "spark.kubernetes.driver.podTemplateContainerName=spark-executor",
        "local:///opt/spark/examples/src/main/python/pi.py",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=spark_env())
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    refused = [
        line
        for line in output.splitlines()
        if f"{LOOPBACK}:{port}" in line and "Connection refused" in line
    ]
    assert refused, output[-3000:]
    assert "KubernetesClientException" in output
    assert not CONFIGURATION_ERRORS.search(output), CONFIGURATION_ERRORS.search(output)
    print(refused[0].strip())  # the line docs/clusters.md quotes
