"""A corpus of bad inputs for every command, as a new user would bring them.

    .venv/bin/python tests/badinputs.py          # runs it, prints the counts (scripts/badinputs.sh)

Each case is a real `numaspark` subprocess on inputs made in a scratch
directory: missing, empty, binary and special files; directories where files
go and files where directories go; unwritable outputs; malformed options; and
generated mutations of the recorded event logs, of real servers' hwloc XML and
of a recorded results directory (cut short, bytes flipped, fields of the wrong
type). A bad input must end with exit 2 and one line on stderr that names it
(typer's usage errors keep their usage lines, and their last line says what
was wrong), never a traceback, within the time bound. An input that is only
partly damaged may instead be used, with a warning that says what was skipped
("warn" cases): then exit 0 and at least one warning line, never a traceback.
tests/test_badinputs.py runs the same corpus under pytest.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import multiprocessing.connection
import multiprocessing.forkserver
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
TOPOLOGIES = Path(
    os.environ.get("NUMASPARK_TOPOLOGIES", TESTS.parents[1] / "shared" / "topologies")
)
TIME_BOUND_S = 45.0


class CorpusShrank(RuntimeError):
    """An input the corpus is made from was not found: its cases would vanish unseen."""


def _found(directory: Path, pattern: str, at_least: int = 1) -> list[Path]:
    """``directory``'s files matching ``pattern``, sorted; fewer than ``at_least`` is an error,
    never a corpus that shrank unnoticed (a generator over an empty glob yields no cases)."""
    found = sorted(directory.glob(pattern))
    if len(found) < at_least:
        raise CorpusShrank(
            f"{directory}/{pattern}: {len(found)} files, the corpus needs "
            f"{at_least} (set NUMASPARK_TOPOLOGIES for the servers' XML)"
        )
    return found


def _bytes(count: int) -> bytes:
    """Random bytes, the same on every run (a case that fails, fails again: seeded by size)."""
    return random.Random(count).randbytes(count)


@dataclass(frozen=True)
class Case:
    name: str
    args: list[str]
    expect: str = "error"  # "error": exit 2, one line; "warn": exit 0 with a warning, or "error"
    says: str = ""  # text the error line must hold, when the case pins it
    stdin: str | None = None


@dataclass
class Outcome:
    case: Case
    returncode: int | None
    stderr: str
    seconds: float
    problems: list[str] = field(default_factory=list)


# --- making inputs ---------------------------------------------------------------------------


def _write(path: Path, data: bytes | str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data)
    else:
        path.write_bytes(data)
    return str(path)


def _results_dir(root: Path, name: str, lines: list[str]) -> str:
    directory = root / name
    _write(directory / "results.jsonl", "".join(line + "\n" for line in lines))
    return str(directory)


def _recorded_run() -> dict:
    text = (FIXTURES / "runs" / "wordcount-core" / "results.jsonl").read_text()
    return json.loads(text.splitlines()[-1])


def _mutated_runs(root: Path) -> list[Case]:
    """A recorded run with one field given the wrong type or a NUL byte: each is named and
    skipped; alone in its file, it is an error."""
    base = _recorded_run()
    mutations = {
        "status-int": ("status", 3),
        "wall-str": ("wall_time_s", "fast"),
        "wall-list": ("wall_time_s", [1]),
        "spec-str": ("spec", "wordcount"),
        "metrics-list": ("metrics", [1, 2]),
        "warnings-str": ("warnings", "oops"),
        "environment-int": ("environment", 7),
        "measurements-str": ("measurements", "x"),
        "effective-dict": ("effective_placement", {"a": 1}),
        "check-list": ("check", [True]),
    }
    cases = []
    for label, (key, value) in mutations.items():
        bad = dict(base, **{key: value})
        alone = _results_dir(root, f"runs-{label}", [json.dumps(bad)])
        mixed = _results_dir(root, f"mixed-{label}", [json.dumps(base), json.dumps(bad)])
        cases.append(Case(f"results: {label} alone", ["results", alone], says="no line is a run"))
        cases.append(
            Case(f"classify: {label} beside a good run", ["classify", mixed], expect="warn")
        )
    nul = json.loads(json.dumps(base))
    nul["spec"]["workload"] = "word\x00count"
    for command in ("results", "report", "classify", "advise"):
        directory = _results_dir(root, f"nul-{command}", [json.dumps(nul)])
        cases.append(Case(f"{command}: a NUL byte in a run", [command, directory], says="NUL byte"))
    metric = json.loads(json.dumps(base))
    metric["metrics"]["executorRunTime"] = "12"
    cases.append(
        Case(
            "results: a metric as a string",
            ["results", _results_dir(root, "metric-str", [json.dumps(metric)])],
            says="executorRunTime",
        )
    )
    return cases


def _event_log_mutations(root: Path) -> list[Case]:
    """The recorded logs cut short and with bytes flipped: usable logs warn, the rest err."""
    rng = random.Random(20)
    cases = []
    logs = FIXTURES / "eventlogs"
    plain = (logs / "plain").read_bytes()
    for fraction in (0.02, 0.3, 0.7, 0.97):
        path = _write(root / "ev" / f"plain-cut-{fraction}", plain[: int(len(plain) * fraction)])
        cases.append(
            Case(f"analyze: plain log cut at {fraction:.0%}", ["analyze", path], expect="warn")
        )
    for name in ("lz4.lz4", "snappy.snappy"):
        raw = (logs / name).read_bytes()
        for fraction in (0.1, 0.5, 0.9):
            flipped = bytearray(raw)
            for _ in range(8):
                at = int(len(raw) * fraction) + rng.randrange(64)
                flipped[at % len(raw)] ^= 0xFF
            path = _write(root / "ev" / f"flip-{fraction}-{name}", bytes(flipped))
            cases.append(
                Case(
                    f"analyze: {name} with bytes flipped at {fraction:.0%}",
                    ["analyze", path],
                    expect="warn",
                )
            )
            cut = _write(root / "ev" / f"cut-{fraction}-{name}", raw[: int(len(raw) * fraction)])
            cases.append(
                Case(f"whatif: {name} cut at {fraction:.0%}", ["whatif", cut], expect="warn")
            )
    (source,) = _found(logs / "rolling-zstd", "events_1_*")
    raw = source.read_bytes()
    for fraction in (0.05, 0.5, 0.95):
        directory = root / "ev" / f"eventlog_v2_zstd-{fraction}"
        flipped = bytearray(raw)
        flipped[int(len(raw) * fraction)] ^= 0xFF
        _write(directory / source.name, bytes(flipped))
        cases.append(
            Case(
                f"analyze: zstd log with a byte flipped at {fraction:.0%}",
                ["analyze", str(directory)],
                expect="warn",
            )
        )
    lines = plain.decode().splitlines()
    junk = [
        _write(root / "ev" / "only-tasks", "\n".join(x for x in lines if "TaskEnd" in x)),
        _write(root / "ev" / "one-line", lines[0]),
    ]
    cases += [
        Case(
            "analyze: task ends without the application's start",
            ["analyze", junk[0]],
            says="no Spark application events",
        ),
        Case(
            "analyze: only the first line", ["analyze", junk[1]], says="no Spark application events"
        ),
    ]
    wrong = [json.loads(x) for x in lines]
    for event in wrong:
        if event["Event"] == "SparkListenerTaskEnd":
            event["Task Metrics"]["Executor Run Time"] = "slow"
            event["Task Info"]["Finish Time"] = None
    path = _write(root / "ev" / "string-metrics", "\n".join(json.dumps(e) for e in wrong))
    cases.append(Case("analyze: metrics written as strings", ["analyze", path], expect="warn"))
    return cases


def _topology_mutations(root: Path) -> list[Case]:
    cases = []
    files = _found(TOPOLOGIES, "*.xml", at_least=5)[:5]
    for xml in files:
        text = xml.read_text()
        for fraction in (0.1, 0.5, 0.9):
            path = _write(
                root / "xml" / f"{xml.stem}-{fraction}.xml", text[: int(len(text) * fraction)]
            )
            cases.append(
                Case(f"topology: {xml.name} cut at {fraction:.0%}", ["topology", "--xml", path])
            )
    text = files[0].read_text()
    v3 = text.replace('<topology version="2.0">', '<topology version="3.0">')
    assert v3 != text, f"{files[0]} is no hwloc 2 export: the v3 case would test nothing"
    path = _write(root / "xml" / "v3.xml", v3)
    cases.append(
        Case(
            "topology: an hwloc 3 export", ["topology", "--xml", path], says="--export-xml-flags v2"
        )
    )
    cases.append(
        Case("plan: an hwloc 3 export", ["plan", "--xml", path], says="--export-xml-flags v2")
    )
    return cases


def _unusable(directory: Path, suffix: str) -> dict[str, str]:
    """What any input file can be instead of itself: missing, a directory, empty, binary."""
    (directory / "dir").mkdir(parents=True, exist_ok=True)
    return {
        "missing": str(directory / f"nope{suffix}"),
        "directory": str(directory / "dir"),
        "empty": _write(directory / f"empty{suffix}", ""),
        "binary": _write(directory / f"binary{suffix}", _bytes(2048)),
    }


def _tables(root: Path) -> dict[str, str]:
    t = root / "tables"
    return {
        **_unusable(t, ".csv"),
        "header-only": _write(t / "header.csv", "concurrency,time_s\n"),
        "one-column": _write(t / "one.csv", "concurrency\n1\n2\n"),
        "three-columns": _write(
            t / "three.csv", "concurrency,time_s,extra\n1,10,0\n2,6,0\n4,4,0\n"
        ),
        "text-values": _write(t / "text.csv", "concurrency,time_s\none,ten\ntwo,six\n"),
        "nan": _write(t / "nan.csv", "concurrency,time_s\n1,10\n2,nan\n4,4\n"),
        "inf": _write(t / "inf.csv", "concurrency,time_s\n1,10\n2,inf\n4,4\n"),
        "negative": _write(t / "neg.csv", "concurrency,time_s\n-1,10\n2,6\n4,4\n"),
        "zero-time": _write(t / "zero.csv", "concurrency,time_s\n1,0\n2,6\n4,4\n"),
        "one-row": _write(t / "row.csv", "concurrency,time_s\n1,10\n"),
        "duplicates": _write(t / "dup.csv", "concurrency,time_s\n1,10\n1,10\n1,10\n"),
        "utf16": _write(t / "utf16.csv", "concurrency,time_s\n1,10\n2,6\n".encode("utf-16")),
        "grid-nan": _write(
            t / "grid-nan.csv", "executors,cores_per_executor,wall_s\n1,1,10\n1,2,nan\n2,1,inf\n"
        ),
        "grid-text": _write(
            t / "grid-text.csv", "executors,cores_per_executor,wall_s\n1,1,fast\n1,2,slow\n"
        ),
        "grid-no-wall": _write(
            t / "grid-nowall.csv", "executors,cores_per_executor,time\n1,1,10\n1,2,8\n"
        ),
        "grid-one": _write(t / "grid-one.csv", "executors,cores_per_executor,wall_s\n1,1,10\n"),
        "grid-only-wall": _write(t / "grid-wall.csv", "wall_s\n10\n8\n"),
    }


def _specs(root: Path) -> dict[str, str]:
    s = root / "specs"
    return {
        **_unusable(s, ".toml"),
        "not-toml": _write(s / "bad.toml", "[experiment\nname = \n"),
        "unknown-workload": _write(
            s / "wl.toml", '[experiment]\nname = "x"\nworkloads = ["nope"]\n'
        ),
        "wrong-type": _write(
            s / "type.toml", '[experiment]\nname = "x"\nworkloads = "wordcount"\nrepeat = "two"\n'
        ),
        "unknown-key": _write(
            s / "key.toml", '[experiment]\nname = "x"\nworkloads = ["wordcount"]\nbogus = 1\n'
        ),
        "zero-repeat": _write(
            s / "zero.toml", '[experiment]\nname = "x"\nworkloads = ["wordcount"]\nrepeat = 0\n'
        ),
        "json": _write(s / "spec.json", '{"experiment": {"name": "x"}}'),
    }


# --- the corpus ------------------------------------------------------------------------------


def corpus(root: Path) -> list[Case]:
    """Every case, its inputs made under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    file_not_dir = _write(root / "a-file", "not a directory\n")
    binary = _write(root / "binary.bin", _bytes(4096))
    empty = _write(root / "empty", "")
    emptydir = root / "emptydir"
    emptydir.mkdir(exist_ok=True)
    emptydir = str(emptydir)
    unwritable = "/proc/numaspark-cannot-write-here"
    plain = str(FIXTURES / "eventlogs" / "plain")
    good_results = str(FIXTURES / "runs" / "wordcount-core")
    xml = str(_found(TOPOLOGIES, "24em64t*.xml")[0])
    array = _results_dir(root, "array", [json.dumps([_recorded_run(), _recorded_run()])])
    zstd_garbage = _write(
        root / "eventlog_v2_garbage" / "events_1_x.zstd",
        zstandard.ZstdCompressor().compress(_bytes(2000)),
    )
    zlib_file = _write(root / "log.gz", zlib.compress(b"hello"))
    cases: list[Case] = []
    add = cases.append

    # typer's usage errors: keep typer's form, the last line says what was wrong
    for args in (
        ["bogus-command"],
        ["plan", "--bind", "bogus"],
        ["plan", "--executors", "x"],
        ["plan", "--mode", "remote"],
        ["plan", "--target", "mesos"],
        ["plan", "--mem-policy", "everywhere"],
        ["plan", "--pu-order", "zigzag"],
        ["run", "--bind", "bogus", "wordcount"],
        ["run", "wordcount", "--repeat", "two"],
        ["run", "wordcount", "--mode", "cloud"],
        ["run", "wordcount", "--timeout", "soon"],
        ["run"],
        ["sweep"],
        ["fit"],
        ["analyze"],
        ["whatif"],
        ["report"],
        ["advise"],
        ["topology", "--nope"],
        ["tune", "--budget", "many"],
        ["probe", "--loads", "x"],
        ["launch", "--executors", "x", "--", "true"],
        ["study", "nope"],
        ["study", "layouts"],
        ["cluster", "nope"],
        ["datagen"],
        ["results", "--csv"],
        ["fit", "--predict"],
        ["plan", "--executors"],
        ["plan", "--driver-cores", "1.5"],
    ):
        add(Case("usage: " + " ".join(args), args))

    # topology
    for label, value in (
        ("empty", ""),
        ("spaces", "   "),
        ("unknown type", "pack:2 bogus:2"),
        ("no count", "pack core pu"),
        ("zero", "pack:0 core:2 pu:1"),
        ("negative", "pack:-1 core:2"),
        ("huge", "pack:1000 core:1000 pu:1000"),
        ("huge numa", "numa:100000 core:1 pu:1"),
        ("letters", "pack:x"),
        ("float", "pack:1.5 core:2"),
        ("only pu", "pu:0"),
    ):
        add(Case(f"topology --synthetic {label}", ["topology", "--synthetic", value]))
        add(Case(f"plan --synthetic {label}", ["plan", "--synthetic", value]))
    for label, path in (
        ("missing", "/nonexistent/server.xml"),
        ("directory", emptydir),
        ("empty", empty),
        ("binary", binary),
        ("text", file_not_dir),
        ("json", _write(root / "t.json", "{}")),
        ("/dev/null", "/dev/null"),
        ("other xml", _write(root / "other.xml", "<html><body/></html>")),
        (
            "no topology",
            _write(root / "root.xml", '<?xml version="1.0"?><topology version="2.0"/>'),
        ),
    ):
        add(Case(f"topology --xml {label}", ["topology", "--xml", path]))
        add(Case(f"plan --xml {label}", ["plan", "--xml", path]))
        add(Case(f"probe --xml {label}", ["probe", "--xml", path]))
    add(
        Case("topology: --xml and --synthetic", ["topology", "--xml", xml, "--synthetic", "pack:1"])
    )

    # plan
    for args, says in (
        (["--executors", "0"], ""),
        (["--executors", "-2"], ""),
        (["--executors", "99"], "allows"),
        (["--cores-per-executor", "0"], ""),
        (["--cores-per-executor", "99"], ""),
        (["--executors-per-node", "0"], ""),
        (["--executors-per-node", "99"], ""),
        (["--memory-per-executor", "lots"], ""),
        (["--memory-per-executor", "0"], ""),
        (["--memory-per-executor", "-4g"], ""),
        (["--memory-per-executor", "99999t"], ""),
        (["--driver-memory", "big"], ""),
        (["--driver-cores", "99"], "driver"),
        (["--driver-cores", "0"], ""),
        (["--driver-cores", "-1"], ""),
        (["--nodes", "7"], ""),
        (["--nodes", "x"], ""),
        (["--nodes", "0-"], ""),
        (["--nodes", ""], ""),
        (["--executors", "1", "--executors-per-node", "1"], "not both"),
        (["--bind", "core", "--cores-per-executor", "3", "--executors", "1"], ""),
        (["--hosts", ""], ""),
        (["--hosts", ",,"], ""),
        (["--hosts-file", empty], ""),
        (["--hosts-file", binary], ""),
        (["--hosts-file", "/nonexistent.toml"], ""),
        (["--hosts-file", _write(root / "h.toml", "[hosts]\nx = 1\n")], ""),
    ):
        add(Case("plan " + " ".join(args), ["plan", *args], says=says))
    add(
        Case(
            "plan --xml NODES --nodes 3",
            ["plan", "--xml", xml, "--nodes", "3", "--bind", "node"],
            says="NUMA node 3",
        )
    )
    # plan by devices (a DGX-2: 8 GPUs and 2 CPUs a node), refused in one line
    dgx2 = str(_found(TOPOLOGIES, "nvidiaDGX2.xml")[0])
    for args, says in (
        (["--gpus-per-executor", "9"], "give at most 8"),
        (["--gpus-per-executor", "1", "--bind", "node"], "too few for the 8 executor(s)"),
        (["--gpus-per-executor", "0"], "at least 1"),
        (["--gpus-per-executor", "x"], ""),
        (["--resource", "fpga=1"], "gpu, accelerator, nic, nvme"),
        (["--resource", "gpu"], "NAME=N"),
        (["--resource", "nic=1"], "has no NIC"),
        (["--gpus-per-executor", "2", "--resource", "gpu=2"], "twice"),
        (["--gpus-per-executor", "4", "--executors", "2"], "leave out"),
        (["--gpus-per-executor", "4", "--mode", "local"], "--mode standalone"),
    ):
        add(Case("plan DGX-2 " + " ".join(args), ["plan", "--xml", dgx2, *args], says=says))
    # plan --out: the files to apply, refused in one line where they cannot be written
    for args, says in (
        (["--target", "k8s", "--out", file_not_dir], "cannot write"),
        (["--target", "yarn", "--out", unwritable], "cannot write"),
        (["--target", "k8s", "--out", f"{file_not_dir}/sub"], "cannot write"),
        (["--out", emptydir], "--target"),
        (["--target", "yarn", "--plugin-jar", "https://x/a.jar"], "--target k8s"),
        (["--image", "spark:4"], "--target k8s"),
    ):
        add(
            Case(
                "plan " + " ".join(args), ["plan", "--xml", xml, "--bind", "node", *args], says=says
            )
        )

    # run, launch, datagen, cluster: refused before any JVM starts
    for args, says in (
        (["nope"], "unknown workload"),
        (["wordcount", "--size", "galactic"], ""),
        (["wordcount", "--repeat", "0"], ""),
        (["wordcount", "--repeat", "-1"], ""),
        (["wordcount", "--warmup", "-1"], ""),
        (["wordcount", "--out", file_not_dir], ""),
        (["wordcount", "--out", unwritable], ""),
        (["wordcount", "--data", file_not_dir], ""),
        (["wordcount", "--data", unwritable], ""),
        (["wordcount", "--executors", "99"], ""),
        (["wordcount", "--conf", "novalue"], ""),
        (["wordcount", "--param", "x"], ""),
        (["wordcount", "--param", "nosuch=1"], ""),
        (["wordcount", "--timeout", "-5"], ""),
        (["wordcount", "--interval", "fast"], ""),
        (["wordcount", "--duration", "long"], ""),
        (["wordcount", "--master", "bogus://x"], ""),
        (["wordcount", "--rate", "-1"], ""),
        (["wordcount", "--cluster", file_not_dir], ""),
        (["wordcount", "--cluster", "/nonexistent/cluster"], ""),
        (["wordcount", "--executor-wait", "0s"], "--executor-wait"),
        (
            ["wordcount", "--master", "spark://127.0.0.1:1", "--master-ui", "http://127.0.0.1:1"],
            "--master-ui",
        ),
        (["wordcount", "--numa-balancing", "maybe"], "give on or off"),
        (
            ["wordcount", "--numa-balancing", "on", "--master", "spark://127.0.0.1:1"],
            "--numa-balancing",
        ),
        (["wordcount", "--xml", xml], ""),
    ):
        add(Case("run " + " ".join(args), ["run", *args], says=says))
    for args in (
        ["--", "/nonexistent/program"],
        ["--executors", "99", "--", "true"],
        [],
        ["--out", file_not_dir, "--", "true"],
        ["--duration", "forever", "--", "true"],
        ["--mem-nodes", "9", "--", "true"],
    ):
        add(Case("launch " + " ".join(args), ["launch", *args]))
    for args in (
        ["nope"],
        ["wordcount", "--size", "galactic"],
        ["wordcount", "--data", file_not_dir],
        ["wordcount", "--data", unwritable],
        ["wordcount", "--seed", "x"],
    ):
        add(Case("datagen " + " ".join(args), ["datagen", *args]))
    for args in (
        ["up", file_not_dir],
        ["up", unwritable],
        ["status", "/nonexistent/c"],
        ["status", file_not_dir],
        ["down", "/nonexistent/c"],
        ["status", emptydir],
        ["up", str(root / "c"), "--executors", "99"],
    ):
        add(Case("cluster " + " ".join(args), ["cluster", *args]))
    for args in (
        ["layouts", "nope"],
        ["binding", "wordcount", "--repeat", "0"],
        ["cosched", "nope"],
        ["scaling", "wordcount", "--out", file_not_dir],
        ["executors", "wordcount", "--size", "galactic"],
    ):
        add(Case("study " + " ".join(args), ["study", *args]))
    for args in (
        ["--size", "lots", "--dry-run"],
        ["--latency-size", "x", "--dry-run"],
        ["--loads", "0", "--dry-run"],
        ["--repeat", "0", "--dry-run"],
        ["--size", "-1", "--dry-run"],
    ):
        add(Case("probe " + " ".join(args), ["probe", *args]))

    # event logs
    for label, path in (
        ("missing", "/nonexistent/log"),
        ("/dev/null", "/dev/null"),
        ("empty", empty),
        ("binary", binary),
        ("empty directory", emptydir),
        ("a text file", file_not_dir),
        ("results.jsonl", good_results + "/results.jsonl"),
        ("zstd of garbage", str(Path(zstd_garbage).parent)),
        ("gzip", zlib_file),
        ("lzf", _write(root / "log.lzf", "x")),
        ("a JSON array", _write(root / "arr.json", "[1,2]")),
        ("a fifo-like /dev/zero", "/dev/zero"),
    ):
        add(Case(f"analyze {label}", ["analyze", path]))
        add(Case(f"whatif {label}", ["whatif", path]))
        add(Case(f"advise {label}", ["advise", path]))
    for args in (
        ["--tasks", unwritable + "/t.parquet"],
        ["--stages", unwritable + "/s.csv"],
        ["--tasks", emptydir],
        ["--tasks", str(root / "t.txt")],
        ["--stages", str(root / "s.xlsx")],
    ):
        add(Case("analyze " + " ".join(args), ["analyze", plain, *args]))
    for cores in ("0", "x", "-1", "", "1,,2", "1.5"):
        add(Case(f"whatif --cores {cores!r}", ["whatif", plain, "--cores", cores]))

    # results directories
    results_inputs = {
        "missing": "/nonexistent/out",
        "a file": file_not_dir,
        "empty dir": emptydir,
        "JSON array": array,
        "binary": _results_dir(root, "bin", []),
        "empty lines": _results_dir(root, "blank", ["", ""]),
        "a directory as results.jsonl": str(
            (root / "dirres" / "results.jsonl").mkdir(parents=True) or root / "dirres"
        ),
        "not JSON": _results_dir(root, "text", ["hello", "world"]),
    }
    Path(results_inputs["binary"], "results.jsonl").write_bytes(_bytes(3000))
    for label, directory in results_inputs.items():
        for command in ("results", "report", "classify", "advise"):
            add(Case(f"{command} {label}", [command, directory]))
    for args in (
        ["--csv", unwritable + "/r.csv"],
        ["--parquet", unwritable + "/r.parquet"],
        ["--table", unwritable + "/t.csv"],
        ["--csv", emptydir],
        ["--parquet", file_not_dir + "/x"],
    ):
        add(Case("results " + " ".join(args), ["results", good_results, *args]))
    for args in (
        ["-o", unwritable + "/r.html"],
        ["-o", emptydir],
        ["-o", file_not_dir + "/r.html"],
    ):
        add(Case("report " + " ".join(args), ["report", good_results, *args]))

    # tables: fit and tune --replay
    tables = _tables(root)
    for label, path in tables.items():
        if not label.startswith("grid"):
            add(Case(f"fit {label}", ["fit", path]))
    for args in (["--predict", "x"], ["--predict", "0"], ["--predict", "-4"]):
        add(
            Case(
                "fit " + " ".join(args),
                ["fit", _write(root / "ok.csv", "concurrency,time_s\n1,10\n2,6\n4,4\n"), *args],
            )
        )
    for label in (
        "missing",
        "directory",
        "empty",
        "binary",
        "header-only",
        "text-values",
        "utf16",
        "grid-nan",
        "grid-text",
        "grid-no-wall",
        "grid-one",
        "grid-only-wall",
    ):
        add(Case(f"tune --replay {label}", ["tune", "--replay", tables[label]]))
    grid = _write(
        root / "grid.csv", "executors,cores_per_executor,wall_s\n1,1,10\n1,2,8\n2,1,7\n2,2,9\n"
    )
    for args in (
        ["--budget", "0"],
        ["--budget", "-3"],
        ["--noise", "-1"],
        ["--minimize", "nope"],
        ["--budget-time", "soon"],
        ["--noise", "nan"],
        ["--column", "nope=workers"],
        ["--column", "executors=nodez"],
        ["--column", "executors"],
        ["--column", "executors=workers", "--column", "cores_per_executor=executors"],
    ):
        add(Case("tune " + " ".join(args), ["tune", "--replay", grid, *args]))
    add(
        Case(
            "tune --column without --replay",
            ["tune", "wordcount", "--column", "a=workers"],
            says="give --replay TABLE",
        )
    )
    add(
        Case(
            "tune: a workload and --replay",
            ["tune", "wordcount", "--replay", grid],
            says="not both",
        )
    )
    add(Case("tune: neither", ["tune"]))
    add(
        Case(
            "tune: real runs on another machine",
            ["tune", "wordcount", "--synthetic", "numa:4 core:8"],
            says="--replay table",
        )
    )
    # --xml names a cluster's hosts (--master); a study here or on --hosts refuses it
    spec = _write(root / "xml-spec.toml", '[[workloads]]\nname = "wordcount"\n')
    for command, extra, says in (
        (["study", "binding", "wordcount"], [], "describes the hosts of a cluster"),
        (["sweep", spec], [], "describes the hosts of a cluster"),
        (["study", "layouts", "wordcount"], ["--hosts", "10.0.0.2"], "read with hwloc over SSH"),
        (["run", "wordcount"], ["--master", "yarn", "--xml", str(root / "no.xml")], ""),
    ):
        given = ["--synthetic", "pack:2 numa:2 core:4 pu:2"] if "--xml" not in extra else []
        add(
            Case(
                f"{' '.join(command[:2])}: a topology given {' '.join(extra[:2]) or 'here'}",
                [*command, *extra, *given],
                says=says,
            )
        )
    add(
        Case(
            "study cosched on a cluster numaspark did not start",
            ["study", "cosched", "wordcount", "terasort", "--master", "spark://127.0.0.1:1"],
            says="cannot be kept to some of a host's nodes: run it here, or with --hosts",
        )
    )
    for args in (
        ["--xml", str(root / "none.xml")],
        ["--synthetic", "numa:0 core:x"],
        ["--xml", tables["binary"]],
    ):
        add(Case("tune --replay " + " ".join(args[:1]), ["tune", "--replay", grid, *args]))
    beside = root / "beside"  # a recorded table whose machine, written beside it, is damaged
    _write(beside / "t.json", json.dumps({"minimize": "wall_s", "synthetic": "numa:0 core:x"}))
    add(
        Case(
            "tune --replay: its TABLE.json machine damaged",
            ["tune", "--replay", _write(beside / "t.csv", Path(grid).read_text())],
            says="the machine in",
        )
    )

    # experiment specs
    for label, path in _specs(root).items():
        add(Case(f"sweep {label}", ["sweep", path, "--out", str(root / "sweep-out")]))
    add(
        Case(
            "sweep --out a file",
            [
                "sweep",
                str(TESTS.parent / "bench" / "specs" / "tune-wordcount.toml"),
                "--out",
                file_not_dir,
            ],
        )
    )

    cases += _mutated_runs(root)
    cases += _event_log_mutations(root)
    cases += _topology_mutations(root)
    return cases


# --- running it ------------------------------------------------------------------------------


def numaspark() -> str:
    found = Path(sys.executable).with_name("numaspark")
    return str(found) if found.exists() else shutil.which("numaspark") or "numaspark"


ENV = {"COLUMNS": "120", "NUMASPARK_START_TIMEOUT": "20"}


def run_case(case: Case, cwd: Path) -> Outcome:
    """The case as a user types it: the `numaspark` script, from a fresh interpreter."""
    env = {**os.environ, **ENV}
    start = time.monotonic()
    # its own session: a case that hangs is killed with everything it started (lstopo, a JVM)
    proc = subprocess.Popen(
        [numaspark(), *case.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env,
        errors="replace",
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(case.stdin or "", timeout=TIME_BOUND_S)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        _, stderr = proc.communicate()
        hung = f"hung: no exit within {TIME_BOUND_S:.0f} s"
        return Outcome(case, None, stderr, TIME_BOUND_S, [hung])
    finally:
        _kill_group(proc.pid)  # whatever it left behind: a case leaves nothing running
    outcome = Outcome(case, proc.returncode, stderr, time.monotonic() - start)
    outcome.problems = judge(case, proc.returncode, stderr)
    return outcome


# Most of a case's time from a fresh interpreter is importing numaspark, typer, rich and
# pandas (0.8 s of 1 s here); the corpus would spend minutes of CI on it. So the cases run in
# processes forked from a server that imported them once (multiprocessing's forkserver): each
# is still a process of its own, with its own argv, working directory, stdin, stdout, stderr,
# session and exit code, running numaspark's real entry point. `run_corpus` also runs the
# first case of every command as above, from a fresh interpreter.
# "__main__": the server imports the main script once, so that no forked case imports it again.
# typer._adapters (and pydantic under it) is what typer imports when it parses a command's
# options, in every case. The packages the commands import when they run (advice, history,
# what-if, the tuner, the HTML report) are preloaded too, and forkfrozen, last, builds the
# command tree and freezes the lot (gc.freeze), so a forked case copies none of it: a case
# that checks its input costs 35 to 60 ms here, against 80 to 180 ms when forkfrozen was
# silently never loaded (the server's path lacked tests/: see `_server`) and 150 to 230 ms
# with the command tree built in every case. A name the installed typer lacks is skipped
# (multiprocessing ignores ImportError).
_PRELOAD = [
    "__main__",
    "numaspark.cli.commands",
    "numaspark.metrics.eventlog",
    "numaspark.report.export",
    "typer._adapters",
    "numaspark.decide.advise",  # what the commands import as they run
    "numaspark.decide.history",
    "numaspark.decide.whatif",
    "numaspark.decide.tune",
    "numaspark.report.html",
    "forkfrozen",  # last: freezes what the others imported (tests/forkfrozen.py)
]
_forkserver = None
# multiprocessing's Process is not thread-safe: start() polls every process started before, and
# two threads reading one exit status lose it (exit 255); so only one thread at a time starts,
# joins or closes one, and the waiting is done on the process's sentinel, outside the lock
_PROCESSES = threading.Lock()


def _server():
    global _forkserver
    if _forkserver is None:
        _forkserver = multiprocessing.get_context("forkserver")
        _forkserver.set_forkserver_preload(_PRELOAD)
        # Python 3.11's fork server ignores the sys.path it is handed, and an ImportError of
        # a preloaded name passes in silence: without tests/ on its path, forkfrozen (the
        # command tree built once, gc.freeze) was never loaded. The server gets it through
        # its environment, given only while it starts.
        before = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), before]))
        try:
            multiprocessing.forkserver.ensure_running()
        finally:
            if before is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = before
    return _forkserver


def _as_numaspark(
    args: list[str], cwd: str, stdin: str, stdout: str, stderr: str, env: dict[str, str]
) -> None:
    """In the forked process: become `numaspark ARGS` run in ``cwd`` (exits with its code)."""
    os.setsid()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path, flags in (
        (0, stdin, os.O_RDONLY),
        (1, stdout, os.O_WRONLY),
        (2, stderr, os.O_WRONLY),
    ):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 (multiprocessing gave it /dev/null)
    sys.argv = ["numaspark", *args]
    from numaspark.cli import commands as cli

    cli.term.__init__()  # its consoles were made in the server: size them by this environment
    cli.main()


def run_forked(
    args: list[str],
    cwd: Path,
    env: dict[str, str],
    stdin: str = "",
    timeout_s: float | None = TIME_BOUND_S,
) -> tuple[int | None, str, str]:
    """`numaspark ARGS` in a process forked from the preloaded server (see above): its exit
    code (None: it hung past ``timeout_s`` and was killed), stdout and stderr."""
    streams = Path(tempfile.gettempdir()) / f"numaspark-forked-{os.getpid()}"
    streams.mkdir(exist_ok=True)
    stem = streams / f"{threading.get_ident()}-{time.monotonic_ns()}"
    paths = [Path(f"{stem}.{name}") for name in ("in", "out", "err")]
    paths[0].write_text(stdin)
    paths[1].touch()
    paths[2].touch()
    with _PROCESSES:
        proc = _server().Process(
            target=_as_numaspark, args=(list(args), str(cwd), *(str(p) for p in paths), env)
        )
        proc.start()
    try:
        hung = not multiprocessing.connection.wait([proc.sentinel], timeout_s)
    finally:
        _kill_group(proc.pid)  # whatever it left behind (or all of it, if it hung)
        with _PROCESSES:
            proc.join()
            returncode = proc.exitcode
            proc.close()
    stdout, stderr = (p.read_text(errors="replace") for p in paths[1:])
    for path in paths:
        path.unlink()
    return (None if hung else returncode), stdout, stderr


def run_case_forked(case: Case, cwd: Path) -> Outcome:
    """The case in a process forked from the preloaded server (see above)."""
    start = time.monotonic()
    returncode, _, stderr = run_forked(case.args, cwd, {**os.environ, **ENV}, case.stdin or "")
    if returncode is None:
        return Outcome(
            case, None, stderr, TIME_BOUND_S, [f"hung: no exit within {TIME_BOUND_S:.0f} s"]
        )
    outcome = Outcome(case, returncode, stderr, time.monotonic() - start)
    outcome.problems = judge(case, returncode, stderr)
    return outcome


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def judge(case: Case, code: int, stderr: str) -> list[str]:
    """What is wrong with how a command answered a bad input (empty: nothing)."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    if "Traceback" in stderr:
        return ["traceback"]
    if case.expect == "warn" and code == 0:
        return (
            []
            if any("warning" in line.lower() for line in lines)
            else ["accepted without a warning"]
        )
    if code == 0:
        return ["accepted silently (exit 0)"]
    if code != 2:
        return [f"exit {code}, not 2"]
    errors = [line for line in lines if line.startswith("Error:")]
    usage = any(line.startswith("Usage:") for line in lines)
    if usage:  # typer's convention: usage, a hint, then the line that says what was wrong
        if not lines[-1].startswith("Error:"):
            return ["usage error whose last line does not say what was wrong"]
    else:
        others = [line for line in lines if not line.startswith("warning:")]
        if len(errors) != 1 or len(others) != 1 or not lines[-1].startswith("Error:"):
            return [f"{len(lines)} lines on stderr, not one error line"]
    if case.says and case.says not in lines[-1]:
        return [f"the error does not say {case.says!r}"]
    return []


def run_corpus(
    root: Path,
    workers: int = 4,
    progress: bool = False,
    part: tuple[int, int] = (0, 1),
    fresh_firsts: bool = True,
) -> list[Outcome]:
    """Run every case (or every ``part[1]``-th from ``part[0]``: a part of the corpus); with
    ``fresh_firsts`` the first case of each command from a fresh interpreter."""
    every = corpus(root / "inputs")
    cases = every[part[0] :: part[1]]
    cwd = root / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    # the first case of each command (in the whole corpus) from a fresh interpreter, the rest
    # forked (see above)
    firsts = {c.args[0]: c for c in reversed(every)}.values()
    fresh = {id(c) for c in firsts} if fresh_firsts else set()

    def one(case: Case) -> Outcome:
        return (run_case if id(case) in fresh else run_case_forked)(case, cwd)

    outcomes = []
    with ThreadPoolExecutor(workers) as pool:
        for done, outcome in enumerate(pool.map(one, cases), 1):
            outcomes.append(outcome)
            if progress and outcome.problems:
                print(
                    f"[{done}/{len(cases)}] {outcome.case.name}: {'; '.join(outcome.problems)}\n    "
                    + "\n    ".join(outcome.stderr.strip().splitlines()[-6:]),
                    flush=True,
                )
    return outcomes


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="numaspark-badinputs-") as tmp:
        started = time.monotonic()
        outcomes = run_corpus(Path(tmp), progress=True)
        kinds: dict[str, int] = {}
        for o in outcomes:
            for p in o.problems:
                key = p.split(":")[0].split(" (")[0]
                kinds[key] = kinds.get(key, 0) + 1
        clean = sum(1 for o in outcomes if not o.problems)
        errors = sum(1 for o in outcomes if not o.problems and o.returncode == 2)
        warned = sum(1 for o in outcomes if not o.problems and o.returncode == 0)
        print(
            f"\n{len(outcomes)} bad inputs in {time.monotonic() - started:.0f} s: {clean} handled "
            f"({errors} one clear line and exit 2, {warned} used with a warning), "
            f"{len(outcomes) - clean} not: {kinds or 'none'}"
        )
        print(f"slowest: {max(o.seconds for o in outcomes):.1f} s")
        return 0 if clean == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
