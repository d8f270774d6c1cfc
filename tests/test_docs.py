"""The docs: the site builds with --strict (a broken link, anchor or a page left out of the
nav fails), and every code block marked runnable prints what the page says it prints.

A runnable block is a ```console block right after the line `<!-- runnable -->` (or
`<!-- runnable: exit N -->` for an example that shows an error): one `$ numaspark ...`
command, then its output as the page shows it. The output is compared as doctest compares
it (doctest's own checker, with ELLIPSIS and NORMALIZE_WHITESPACE): `...` stands for any
text, and runs of spaces are one, so a table's column widths may differ from the page's.
Mark only examples that run here in well under 30 s, and need no Spark."""

from __future__ import annotations

import doctest
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- runnable(?::\s*exit\s+(\d+))?\s*-->\s*$")


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    argv: tuple[str, ...]
    expected: str
    exit_code: int

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def examples(path: Path, root: Path = ROOT) -> list[Example]:
    """The runnable blocks of one page; a marker not followed by a console block with one
    `$ numaspark` command is an error, so a typo cannot turn an example off."""
    lines = path.read_text().splitlines()
    found = []
    for i, line in enumerate(lines):
        marker = MARKER.match(line)
        if not marker:
            continue
        where = f"{path.relative_to(root)}:{i + 1}"
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```console":
            raise AssertionError(f"{where}: a runnable marker must be followed by ```console")
        end = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise AssertionError(f"{where}: the console block is never closed")
        body = lines[i + 2 : end]
        commands = [n for n, text in enumerate(body) if text.startswith("$ ")]
        if len(commands) != 1 or commands[0] != 0:
            raise AssertionError(f"{where}: give one `$ numaspark ...` line first in the block")
        argv = shlex.split(body[0][2:])
        if argv[:1] != ["numaspark"]:
            raise AssertionError(f"{where}: a runnable example runs numaspark, not {argv[:1]}")
        found.append(Example(str(path.relative_to(root)), i + 1, tuple(argv[1:]),
                             "\n".join(body[1:]) + "\n", int(marker.group(1) or 0)))  # fmt: skip
    return found


ALL = [example for page in PAGES for example in examples(page)]


def test_the_pages_have_runnable_examples() -> None:
    # the front page and the reference both show real output; an empty list would pass
    assert len(ALL) >= 3, ALL
    assert any(e.page == "README.md" for e in ALL)


@pytest.mark.parametrize("example", ALL, ids=str)
def test_a_runnable_example_prints_what_its_page_shows(example: Example) -> None:
    proc = run_cli(*example.argv)
    output = proc.stdout + proc.stderr
    assert proc.returncode == example.exit_code, (
        f"{example}: exit {proc.returncode}, the page says {example.exit_code}\n{output}")  # fmt: skip
    checker = doctest.OutputChecker()
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    if not checker.check_output(example.expected, output, flags):
        diff = checker.output_difference(doctest.Example("", example.expected), output, flags)
        pytest.fail(f"{example}: the output differs from the page's\n{diff}", pytrace=False)


def test_a_marker_without_its_block_is_an_error(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- runnable -->\n```bash\nnumaspark version\n```\n")
    with pytest.raises(AssertionError, match="must be followed by ```console"):
        examples(page, root=tmp_path)
    page.write_text("<!-- runnable -->\n```console\n$ ls /\n```\n")
    with pytest.raises(AssertionError, match="runs numaspark"):
        examples(page, root=tmp_path)


def _mkdocs(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(site)], cwd=root, capture_output=True, text=True, check=False,
                          env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"})  # fmt: skip


def test_the_site_builds_with_strict(tmp_path: Path) -> None:
    """The strict build (`--strict`, and `strict: true` in mkdocs.yml for `mkdocs build`):
    the site builds; a copy with one broken link does not."""
    proc = _mkdocs(ROOT, tmp_path / "site")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "clusters" / "index.html").is_file()
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy)
    with (copy / "docs" / "show.md").open("a") as page:
        page.write("\nSee [the tuner](no-such-page.md).\n")
    broken = _mkdocs(copy, tmp_path / "broken")
    assert broken.returncode != 0 and "no-such-page.md" in broken.stdout + broken.stderr, broken
