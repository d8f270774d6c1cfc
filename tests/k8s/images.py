"""The local Kubernetes' two images, built here from Debian's packages with no registry, and
imported into its containerd (issue 60):

- the sandbox ("pause") image: Debian's busybox-static, whose shell waits until it is told to
  stop (pause's whole job in a pod that shares no process namespace);
- the Spark image: Java 17 and Python 3 from Debian, pyspark's jars and Python package (the
  pip wheel this venv has, which Spark's images are built from too), numaspark's plugin jar at
  /opt/numaspark/numaspark-affinity.jar, and an entrypoint for Spark's ``driver`` and
  ``executor`` arguments (the wheel ships none).

The packages come through this machine's own apt (its sources, whatever registry they name),
resolved by apt itself as for an empty system (``Dir::State::status`` of an empty file), and
unpacked with ``dpkg-deb -x``; no maintainer script runs, so what those would make (the java
alternative, /etc/passwd) is written here. Each image is an OCI archive in the cache, rebuilt
when what it is built from changes: a single uncompressed layer, the layout written here (no
tool for it is installed: docker has no daemon here, and buildah, umoci and skopeo are not in
Debian 12's default set this code may count on).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from parts import CACHE, PartsError

SPARK_PACKAGES = (
    "openjdk-17-jre-headless",
    "python3",
    "bash",
    "coreutils",
    "dash",
    "tini",
    "procps",
    "base-files",
    "libc-bin",
    "grep",
    "sed",
    "findutils",
)
PAUSE_PACKAGES = ("busybox-static",)
JAVA_HOME = "/usr/lib/jvm/java-17-openjdk-amd64"
SPARK_HOME = "/opt/spark/python/pyspark"
PLUGIN_JAR = "/opt/numaspark/numaspark-affinity.jar"
ENTRYPOINT = "/opt/numaspark/entrypoint.sh"
PAUSE_SCRIPT = "trap 'exit 0' TERM INT; while :; do /bin/busybox sleep 3600 & wait $!; done"

# Spark's driver and executor commands as Spark's Kubernetes backend gives them to its image:
# the executor's settings arrive as environment variables (SPARK_EXECUTOR_*, SPARK_JAVA_OPT_N).
ENTRYPOINT_SCRIPT = f"""#!/bin/bash
# numaspark's Spark image: Spark's Kubernetes backend starts a pod's container with `driver` or
# `executor` and its settings in the environment; anything else runs as given.
set -euo pipefail
export JAVA_HOME={JAVA_HOME} SPARK_HOME={SPARK_HOME}
classpath="${{SPARK_CONF_DIR:-$SPARK_HOME/conf}}:$SPARK_HOME/jars/*"
if [ -n "${{SPARK_EXTRA_CLASSPATH:-}}" ]; then classpath="$classpath:$SPARK_EXTRA_CLASSPATH"; fi
# SPARK_JAVA_OPT_0, _1, ...: the executor's JVM options, in their order
mapfile -t java_opts < <(env | grep '^SPARK_JAVA_OPT_' | sort -t_ -k4 -n | sed 's/^[^=]*=//')
case "${{1:-}}" in
  driver)
    shift
    exec /usr/bin/tini -s -- "$SPARK_HOME/bin/spark-submit" \\
      --conf "spark.driver.bindAddress=$SPARK_DRIVER_BIND_ADDRESS" --deploy-mode client "$@"
    ;;
  executor)
    shift
    exec /usr/bin/tini -s -- "$JAVA_HOME/bin/java" "${{java_opts[@]}}" \\
      -Xms"$SPARK_EXECUTOR_MEMORY" -Xmx"$SPARK_EXECUTOR_MEMORY" -cp "$classpath" \\
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \\
      --driver-url "$SPARK_DRIVER_URL" --executor-id "$SPARK_EXECUTOR_ID" \\
      --cores "$SPARK_EXECUTOR_CORES" --app-id "$SPARK_APPLICATION_ID" \\
      --hostname "$SPARK_EXECUTOR_POD_IP" --resourceProfileId "$SPARK_RESOURCE_PROFILE_ID" \\
      --podName "$SPARK_EXECUTOR_POD_NAME"
    ;;
  *)
    exec "$@"
    ;;
esac
"""


def _run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise PartsError(f"{' '.join(map(str, argv[:3]))} failed: {done.stderr.strip()[-300:]}")
    return done


def resolve(packages: tuple[str, ...]) -> list[str]:
    """Every package (``name=version``) an empty Debian system needs for ``packages``, as apt
    resolves it (no recommends)."""
    with tempfile.NamedTemporaryFile() as empty:
        done = _run(
            [
                "apt-get",
                "-o",
                f"Dir::State::status={empty.name}",
                "-o",
                "Debug::NoLocking=1",
                "install",
                "--print-uris",
                "-qq",
                "--no-install-recommends",
                *packages,
            ]
        )
    wanted = []
    for line in done.stdout.splitlines():
        found = re.match(r"^'\S+' (\S+?)_(\S+?)_(\S+?)\.deb ", line)
        if found:
            name, version = found.group(1), found.group(2).replace("%3a", ":")
            wanted.append(f"{name}={version}")
    if not wanted:
        raise PartsError(f"apt resolved nothing for {', '.join(packages)}: is apt-get update done?")
    return sorted(wanted)


def download(wanted: list[str]) -> list[Path]:
    """The packages' .deb files, fetched into the cache where missing."""
    debs = CACHE / "debs"
    debs.mkdir(parents=True, exist_ok=True)

    def file_of(spec: str) -> Path | None:
        name, version = spec.split("=", 1)
        matches = list(debs.glob(f"{name}_{version.replace(':', '%3a')}_*.deb"))
        return matches[0] if matches else None

    missing = [spec for spec in wanted if file_of(spec) is None]
    if missing:
        _run(["apt-get", "download", "-q", *missing], cwd=debs)
    files = [file_of(spec) for spec in wanted]
    if None in files:
        raise PartsError(
            f"apt-get download left out {[s for s, f in zip(wanted, files, strict=False) if not f]}"
        )
    return files  # type: ignore[return-value]


def unpack(debs: list[Path], root: Path) -> None:
    for deb in debs:
        _run(["dpkg-deb", "-x", deb, root])


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def oci_archive(root: Path, name: str, config: dict, out: Path) -> None:
    """An OCI image archive of ``root`` as one uncompressed layer, named ``name`` for
    containerd (``io.containerd.image.name``)."""
    layer_path = out.with_suffix(".layer")
    with tarfile.open(layer_path, "w", format=tarfile.PAX_FORMAT) as layer:
        for entry in sorted(root.iterdir()):
            layer.add(entry, arcname=entry.name)
    digest = hashlib.sha256()
    with layer_path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    layer_digest = "sha256:" + digest.hexdigest()
    image_config = {
        "architecture": "amd64",
        "os": "linux",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    }
    config_bytes = json.dumps(image_config).encode()
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.oci.image.config.v1+json",
            "digest": _digest(config_bytes),
            "size": len(config_bytes),
        },
        "layers": [
            {
                "mediaType": "application/vnd.oci.image.layer.v1.tar",
                "digest": layer_digest,
                "size": layer_path.stat().st_size,
            }
        ],
    }
    manifest_bytes = json.dumps(manifest).encode()
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": _digest(manifest_bytes),
                "size": len(manifest_bytes),
                "annotations": {
                    "io.containerd.image.name": name,
                    "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1],
                },
            }
        ],
    }
    partial = out.with_suffix(".partial")
    with tarfile.open(partial, "w") as archive:

        def add(path: str, data: bytes) -> None:
            info = tarfile.TarInfo(path)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))

        add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        add("index.json", json.dumps(index).encode())
        add(f"blobs/sha256/{_digest(config_bytes)[7:]}", config_bytes)
        add(f"blobs/sha256/{_digest(manifest_bytes)[7:]}", manifest_bytes)
        archive.add(layer_path, arcname=f"blobs/sha256/{layer_digest[7:]}")
    layer_path.unlink()
    partial.replace(out)


def _spark_inputs() -> tuple[str, Path, Path]:
    """The key of the Spark image's inputs, pyspark's package directory and the plugin jar."""
    import pyspark  # noqa: PLC0415 (the venv's, as the tests and numaspark use)

    from numaspark.spark.affinity import build_jar  # noqa: PLC0415

    jar = build_jar()
    return spark_image_key(pyspark.__version__, jar), Path(pyspark.__file__).parent, jar


def spark_image_key(pyspark_version: str, jar: Path) -> str:
    """What the Spark image is built from, hashed: pyspark's version, the entrypoint, Debian's
    packages, and the plugin jar's sources digest (build_jar's stamp beside it), not the jar's
    bytes: Maven stamps each build's entries with the time, so two checkouts of one commit would
    build two 900 MB images. A jar with no stamp (an installed one) keys by its bytes."""
    stamp = jar.with_suffix(".sources")
    made_from = stamp.read_bytes() if stamp.exists() else jar.read_bytes()
    key = hashlib.sha256()
    key.update(pyspark_version.encode() + ENTRYPOINT_SCRIPT.encode())
    key.update(" ".join(SPARK_PACKAGES).encode() + made_from)
    return key.hexdigest()[:12]


# an older Spark image is deleted once no run has asked for it for this long: a run from another
# checkout (another commit's jar) may be booting a guest that imports it minutes from now
KEEP_UNUSED_S = 24 * 3600


def prune_spark_images(wanted: Path, now: float | None = None) -> list[Path]:
    """Mark ``wanted`` as asked for now and delete the other Spark images beside it that no run
    has asked for in ``KEEP_UNUSED_S`` (900 MB each): the deleted ones. The mark is the mtime of
    a small file beside the image (``spark-KEY.used``), not the image's own: in the guest the
    cache is an overlay of this machine's, where a change to the image's times would copy its
    900 MB into the guest's memory (and fail there for want of room)."""
    now = time.time() if now is None else now
    mark = wanted.with_suffix(".used")
    mark.touch()
    os.utime(mark, (now, now))
    gone = []
    for older in sorted(wanted.parent.glob("spark-*.tar")):
        used = older.with_suffix(".used")
        last = max(older.stat().st_mtime, used.stat().st_mtime if used.exists() else 0)
        if older != wanted and now - last > KEEP_UNUSED_S:
            older.unlink()
            used.unlink(missing_ok=True)
            gone.append(older)
    return gone


def build_images(echo=print) -> dict:
    """Both images in the cache (built where missing): {'pause': NAME, 'spark': NAME,
    'pause_archive': PATH, 'spark_archive': PATH}."""
    images = CACHE / "images"
    images.mkdir(parents=True, exist_ok=True)
    # one builder at a time (runs from two checkouts at once would write one .layer file)
    with open(images / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build_images(images, echo)


def _build_images(images: Path, echo) -> dict:
    pause_key = hashlib.sha256((PAUSE_SCRIPT + " ".join(PAUSE_PACKAGES)).encode()).hexdigest()
    pause = f"localhost/numaspark/pause:{pause_key[:12]}"
    pause_archive = images / f"pause-{pause_key[:12]}.tar"
    if not pause_archive.exists():
        echo("building the pause image (Debian's busybox-static)")
        with tempfile.TemporaryDirectory(dir=images) as tmp:
            root = Path(tmp) / "root"
            unpack(download(resolve(PAUSE_PACKAGES)), root)
            shutil.copy2(root / "bin/busybox", Path(tmp) / "busybox")
            shutil.rmtree(root)
            (root / "bin").mkdir(parents=True)
            shutil.copy2(Path(tmp) / "busybox", root / "bin/busybox")
            oci_archive(
                root,
                pause,
                {"Entrypoint": ["/bin/busybox", "sh", "-c", PAUSE_SCRIPT]},
                pause_archive,
            )
    spark_key, pyspark_dir, jar = _spark_inputs()
    spark = f"localhost/numaspark/spark:{spark_key}"
    spark_archive = images / f"spark-{spark_key}.tar"
    if not spark_archive.exists():
        echo("building the Spark image (Debian's Java 17 and Python 3, pyspark, the plugin)")
        with tempfile.TemporaryDirectory(dir=images) as tmp:
            root = Path(tmp) / "root"
            unpack(download(resolve(SPARK_PACKAGES)), root)
            (root / "etc").mkdir(exist_ok=True)
            (root / "etc/passwd").write_text(
                "root:x:0:0:root:/root:/bin/bash\nspark:x:185:185:spark:/opt/spark:/bin/bash\n"
            )
            (root / "etc/group").write_text("root:x:0:\nspark:x:185:\n")
            (root / "usr/bin/java").symlink_to(f"{JAVA_HOME}/bin/java")
            site = root / "opt/spark/python"
            site.mkdir(parents=True)
            shutil.copytree(pyspark_dir, site / "pyspark", symlinks=True)
            py4j = pyspark_dir.parent / "py4j"
            if py4j.is_dir():
                shutil.copytree(py4j, site / "py4j", symlinks=True)
            (root / "opt/numaspark").mkdir(parents=True)
            shutil.copy2(jar, root / PLUGIN_JAR.lstrip("/"))
            entry = root / ENTRYPOINT.lstrip("/")
            entry.write_text(ENTRYPOINT_SCRIPT)
            entry.chmod(0o755)
            for sub in ("tmp", "root", "opt/spark/work-dir"):
                (root / sub).mkdir(parents=True, exist_ok=True)
            (root / "tmp").chmod(0o1777)
            oci_archive(
                root,
                spark,
                {
                    "Entrypoint": [ENTRYPOINT],
                    "Env": [
                        f"JAVA_HOME={JAVA_HOME}",
                        f"SPARK_HOME={SPARK_HOME}",
                        "PYTHONPATH=/opt/spark/python",
                        "PYSPARK_PYTHON=/usr/bin/python3",
                        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                    ],
                    "WorkingDir": "/opt/spark/work-dir",
                },
                spark_archive,
            )
    prune_spark_images(spark_archive)
    return {
        "pause": pause,
        "spark": spark,
        "pause_archive": str(pause_archive),
        "spark_archive": str(spark_archive),
    }


def import_images(bins: Path, images: dict, echo=print) -> None:
    """Both archives into containerd's k8s.io namespace (where the kubelet's images live)."""
    from configs import PATIENCE, STATE  # noqa: PLC0415 (beside this script)

    for kind in ("pause", "spark"):
        echo(f"importing {images[kind]}")
        _run(
            [
                bins / "ctr",
                "--address",
                STATE / "run/containerd.sock",
                "-n",
                "k8s.io",
                "images",
                "import",
                images[f"{kind}_archive"],
            ],
            timeout=900 * PATIENCE,
            env={**os.environ, "PATH": f"{bins}:{os.environ.get('PATH', '')}"},
        )
