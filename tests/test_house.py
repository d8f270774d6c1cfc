"""The house's own rules, checked on the tracked files (issue 51).

No tracked file names an absolute path of the machine it was written on: a home (/root,
/home/NAME, /Users/NAME), this project's work folder (/work), or the folder this checkout
sits in, whatever it is. Such a path works where it was written and nowhere else: a default
that pointed at one machine's fetched datasets failed the fast lane on every other machine.
Recorded fixtures (tests/fixtures/) keep what the machine they were recorded on printed;
system paths (/proc, /sys, /tmp, /usr) are the same everywhere and are fine."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ("tests/fixtures/",)
# a path that starts a word: not the tail of a URL, a variable ($work/home) or a longer path
MACHINE_PATH = re.compile(r"(?<![\w$}.~\-/])/(?:root|home/[^/\s`'\"]+|Users/[^/\s`'\"]+|work)/")


def tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    names = [n for n in listed.stdout.decode().split("\0") if n and not n.startswith(RECORDED)]
    return [ROOT / n for n in names if (ROOT / n).is_file()]


def machine_paths(path: Path, text: str, checkout: Path) -> list[str]:
    """Each line of TEXT that names a machine's own path, as 'FILE:LINE: the line'."""
    own = (f"{checkout}/", f"{checkout.parent}/")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if MACHINE_PATH.search(line) or any(o in line for o in own):
            found.append(f"{path.relative_to(checkout)}:{number}: {line.strip()}")
    return found


def test_no_tracked_file_names_a_path_of_one_machine():
    found = []
    for path in tracked_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue  # a binary file names no path a reader follows
        found += machine_paths(path, text, ROOT)
    assert found == [], (
        "paths of one machine (say where instead: an option, $HOME, a relative path):\n"
        + "\n".join(found)
    )


def test_the_path_check_finds_each_kind_and_passes_the_rest(tmp_path):
    """A deliberate break of each kind is found; URLs, variables and system paths are not."""
    checkout = tmp_path / "clone"
    # built from pieces, so that this file itself names no such path
    work, root, home, users = ("/" + name for name in ("work", "root", "home", "Users"))
    planted = [
        f"default=Path('{work}/.mirror')",
        f"PYTHONPATH={root}/src",
        f"see {home}/alice/data.csv",
        f"cp x {users}/bob/y",
        f"open('{checkout}/bench/x.csv')",
        f"open('{tmp_path}/other-checkout/src')",
    ]
    fine = [
        "https://example.org/home/x/y",
        'HOME="$work/home"',
        "/proc/self/status and /sys/devices/system/node/ and /tmp/x",
        "~/numaspark/bin/pip",
        "/usr/lib/jvm/",
    ]
    text = "\n".join(planted + fine)
    found = machine_paths(checkout / "f.py", text, checkout)
    assert [f.split(": ", 1)[1] for f in found] == planted


#: where the formatter may be told to keep a hand layout, at most (issue 51)
FMT_SKIPS_ALLOWED = 10
FMT_SWITCH = re.compile(r"#\s*fmt:\s*(skip|off)\b")


def test_the_formatter_owns_the_layout():
    """`ruff format` lays out src/ and tests/ (the lint step checks it); at most ten places
    keep a hand layout, each with a comment on the line above that says why."""
    found, unexplained = [], []
    for path in tracked_files():
        relative = path.relative_to(ROOT).as_posix()
        if not relative.startswith(("src/", "tests/")) or path.suffix != ".py":
            continue
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            if FMT_SWITCH.search(line) and "FMT_SWITCH" not in line:
                found.append(f"{relative}:{number}")
                if number < 2 or not lines[number - 2].strip().startswith("#"):
                    unexplained.append(f"{relative}:{number}")
    assert len(found) <= FMT_SKIPS_ALLOWED, found
    assert not unexplained, f"say why above each: {unexplained}"


LONGEST_FUNCTION = 60  # lines, decorators apart: a function one screen shows whole


def long_functions(text: str, name: str) -> list[str]:
    """Each function (or method) of TEXT longer than LONGEST_FUNCTION lines, as NAME:LINE."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > LONGEST_FUNCTION:
                found.append(f"{name}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_in_src_is_longer_than_a_screen():
    found = []
    for path in sorted((ROOT / "src" / "numaspark").rglob("*.py")):
        found += long_functions(path.read_text(), path.relative_to(ROOT).as_posix())
    assert not found, f"split them: {found}"


def test_the_length_check_counts_a_long_function_and_passes_a_short_one():
    short = "def f():\n" + "    x = 1\n" * 59
    assert long_functions(short, "s.py") == []
    assert long_functions(short + "    x = 2\n", "l.py") == ["l.py:1 f (61 lines)"]
