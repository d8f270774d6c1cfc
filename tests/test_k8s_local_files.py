"""The local Kubernetes' files (tests/k8s/, scripts/k8s-local.sh; issue 60), checked without a
cluster: the kubelet's configuration merged from numaspark's kubelet-config.yaml with this
machine's settings winning, containerd's and CNI's configurations as their parsers read them,
and an OCI archive whose index, manifest, config and layer agree by digest. The cluster itself
runs in the long lane (tests/test_k8s_local.py)."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "k8s"))
import configs  # noqa: E402
import images  # noqa: E402

PORTS = {"kubelet": 10250, "kubelet_healthz": 10248}


def test_numasparks_kubelet_file_is_merged_and_this_machines_settings_win(tmp_path):
    theirs = tmp_path / "kubelet-config.yaml"
    theirs.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubelet.config.k8s.io/v1beta1",
                "kind": "KubeletConfiguration",
                "cpuManagerPolicy": "static",
                "topologyManagerPolicy": "single-numa-node",
                "evictionHard": {"memory.available": "500Mi"},
                "cgroupDriver": "systemd",  # a real cluster's: this machine has no systemd
            }
        )
    )
    config = configs.kubelet_config(PORTS, theirs)
    assert config["cpuManagerPolicy"] == "static"
    assert config["topologyManagerPolicy"] == "single-numa-node"
    # the Memory Manager's reservation sums to the file's own eviction threshold: kept whole
    assert config["evictionHard"] == {"memory.available": "500Mi"}
    assert config["cgroupDriver"] == "cgroupfs"
    assert config["failCgroupV1"] is False
    assert config["cgroupRoot"] == f"/{configs.CGROUP_ROOT}"
    # the kubelet as it comes: no manager policy of numaspark's
    assert "cpuManagerPolicy" not in configs.kubelet_config(PORTS, None)


def test_a_file_that_is_not_a_kubelet_configuration_is_refused(tmp_path):
    wrong = tmp_path / "pod.yaml"
    wrong.write_text("apiVersion: v1\nkind: Pod\n")
    with pytest.raises(configs.ClusterError, match="not a KubeletConfiguration"):
        configs.kubelet_config(PORTS, wrong)


def test_containerd_and_cni_configurations_parse():
    config = tomllib.loads(configs.containerd_config("localhost/numaspark/pause:x"))
    assert config["version"] == 3
    cri = config["plugins"]["io.containerd.cri.v1.runtime"]
    assert cri["netns_mounts_under_state_dir"] is True  # down finds the namespaces there
    assert cri["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"] is False
    assert config["plugins"]["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"] == (
        "localhost/numaspark/pause:x"
    )
    cni = json.loads(configs.cni_config())
    (bridge,) = cni["plugins"]
    assert bridge["bridge"] == configs.BRIDGE and bridge["ipMasq"] is False  # no iptables rule
    assert bridge["ipam"]["dataDir"].startswith(str(configs.STATE))


def test_an_oci_archive_agrees_with_itself(tmp_path):
    root = tmp_path / "root"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "hello").write_text("#!/bin/sh\necho hello\n")
    out = tmp_path / "image.tar"
    images.oci_archive(root, "localhost/numaspark/test:1", {"Entrypoint": ["/bin/hello"]}, out)
    with tarfile.open(out) as archive:
        blobs = {
            m.name.rsplit("/", 1)[1]: archive.extractfile(m).read()
            for m in archive.getmembers()
            if m.name.startswith("blobs/sha256/")
        }
        index = json.loads(archive.extractfile("index.json").read())
    for digest, data in blobs.items():
        assert hashlib.sha256(data).hexdigest() == digest
    (entry,) = index["manifests"]
    assert entry["annotations"]["io.containerd.image.name"] == "localhost/numaspark/test:1"
    manifest = json.loads(blobs[entry["digest"][7:]])
    config = json.loads(blobs[manifest["config"]["digest"][7:]])
    (layer,) = manifest["layers"]
    assert config["rootfs"]["diff_ids"] == [layer["digest"]]
    assert config["config"]["Entrypoint"] == ["/bin/hello"]
    with tarfile.open(fileobj=__import__("io").BytesIO(blobs[layer["digest"][7:]])) as t:
        assert "bin/hello" in t.getnames()


def test_two_builds_of_one_jars_sources_share_one_image(tmp_path):
    """Two checkouts of one commit build jars that differ in their entries' times only: one
    Spark image serves both (two runs at once had built two, 900 MB each, and the second's
    pruning deleted the first's before its guest imported it)."""
    first, second = tmp_path / "a" / "plugin.jar", tmp_path / "b" / "plugin.jar"
    for jar, built_at in ((first, b"12:40"), (second, b"12:41")):
        jar.parent.mkdir()
        jar.write_bytes(b"PK jar built at " + built_at)
        jar.with_suffix(".sources").write_text("0123456789abcdef")
    assert images.spark_image_key("4.0.1", first) == images.spark_image_key("4.0.1", second)
    second.with_suffix(".sources").write_text("fedcba9876543210")  # its sources changed
    assert images.spark_image_key("4.0.1", first) != images.spark_image_key("4.0.1", second)
    assert images.spark_image_key("4.0.1", first) != images.spark_image_key("4.1.0", first)
    second.with_suffix(".sources").unlink()  # an installed jar: keyed by its bytes
    key = images.spark_image_key("4.0.1", second)
    second.write_bytes(b"PK another jar")
    assert images.spark_image_key("4.0.1", second) != key


def test_an_image_another_run_asked_for_today_is_kept(tmp_path):
    now = 1_800_000_000.0
    day = images.KEEP_UNUSED_S
    wanted, other_run, marked, stale = (
        tmp_path / f"spark-{k}.tar" for k in ("new", "other", "marked", "stale")
    )
    for path, age in ((wanted, 7 * day), (other_run, 600), (marked, 2 * day), (stale, 2 * day)):
        path.write_bytes(b"image")
        os.utime(path, (now - age, now - age))
    used = marked.with_suffix(".used")  # built two days ago, asked for an hour ago
    used.write_bytes(b"")
    os.utime(used, (now - 3600, now - 3600))
    stale.with_suffix(".used").write_bytes(b"")
    os.utime(stale.with_suffix(".used"), (now - day - 1, now - day - 1))
    (tmp_path / "pause-x.tar").write_bytes(b"pause")
    assert images.prune_spark_images(wanted, now) == [stale]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "pause-x.tar",
        "spark-marked.tar",
        "spark-marked.used",
        "spark-new.tar",
        "spark-new.used",
        "spark-other.tar",
    ]
    assert wanted.stat().st_mtime == now - 7 * day  # the image's own times are left alone
    assert wanted.with_suffix(".used").stat().st_mtime == now  # asked for now: kept a day


def test_the_entrypoint_serves_sparks_executor_arguments():
    """The executor's command is the one Spark's Kubernetes backend expects of its image: every
    variable Spark's ExecutorPodsAllocator sets is read (Spark's own entrypoint.sh reads the
    same)."""
    script = images.ENTRYPOINT_SCRIPT
    for variable in (
        "SPARK_DRIVER_URL",
        "SPARK_EXECUTOR_ID",
        "SPARK_EXECUTOR_CORES",
        "SPARK_APPLICATION_ID",
        "SPARK_EXECUTOR_POD_IP",
        "SPARK_RESOURCE_PROFILE_ID",
        "SPARK_EXECUTOR_POD_NAME",
        "SPARK_EXECUTOR_MEMORY",
    ):
        assert f"${variable}" in script, variable
    assert "KubernetesExecutorBackend" in script
    assert Path(images.PLUGIN_JAR).name == "numaspark-affinity.jar"
