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
        found.append(
            Example(
                str(path.relative_to(root)),
                i + 1,
                tuple(argv[1:]),
                "\n".join(body[1:]) + "\n",
                int(marker.group(1) or 0),
            )
        )
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
        f"{example}: exit {proc.returncode}, the page says {example.exit_code}\n{output}"
    )
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
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1"},
    )


@pytest.mark.slow
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


# --- the defaults the pages state are the commands' own ------------------------------------

#: "`--option ...` (default VALUE" or "(the default: VALUE", up to the parenthesis' end or a
#: clause's
DEFAULT_STATED = re.compile(
    r"`(--[a-z][a-z-]*)[^`]*`\**\s*\((?:the )?default(?::| is)?\s+`?([^`);,:]+)"
)


def cli_options() -> dict[str, dict[str, tuple[object, str]]]:
    """Every numaspark command's options: {--option: {command: (default, help)}}."""
    import typer

    from numaspark.cli.commands import app

    found: dict[str, dict[str, tuple[object, str]]] = {}

    def walk(command, path: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*path, name])
        for param in getattr(command, "params", []):
            for opt in (o for o in getattr(param, "opts", []) if o.startswith("--")):
                found.setdefault(opt, {})[" ".join(path)] = (param.default, param.help or "")

    walk(typer.main.get_command(app), [])
    return found


def _norm(value: object) -> str:
    text = str(getattr(value, "value", value))
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    return re.sub(r"\s+", "", text).lower()


#: a paragraph about one of the benches or scripts: its options are theirs, not numaspark's
NOT_NUMASPARK = re.compile(r"\b(bench|scripts)/[\w-]+\.(py|sh)\b")


def stated_defaults() -> list[tuple[str, str, str]]:
    """(page:line, option, value) for each default a page states of a numaspark option."""
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        start = 0  # the paragraph's first line
        for number, line in enumerate(lines, 1):
            if not line.strip():
                start = number
                continue
            if re.match(r"\s*([-*]|\d+\.) ", line):  # a list item is a paragraph of its own
                start = number - 1
            paragraph = "\n".join(lines[start:number])
            for match in DEFAULT_STATED.finditer(line):
                if NOT_NUMASPARK.search(paragraph):
                    continue
                where = f"{page.relative_to(ROOT)}:{number}"
                found.append((where, match.group(1), match.group(2).strip()))
    return found


def test_each_default_a_page_states_is_the_commands_own() -> None:
    """A page's "(default X)" for a numaspark option is the default of a command that has it,
    or, where that default is computed (None), the first word of the one its --help states.
    Options of the scripts and benches (not numaspark commands) are not checked here."""
    options = cli_options()
    checked, wrong = 0, []
    for where, option, value in stated_defaults():
        if option not in options:
            continue
        checked += 1
        defaults = options[option]
        said = {_norm(d) for d, _ in defaults.values() if d is not None}
        helps = [re.search(r"\(default:\s*([^);,]+)", h) for d, h in defaults.values() if d is None]
        said |= {_norm(h.group(1).split()[0]) for h in helps if h}
        if _norm(value) not in said and _norm(value.split()[0]) not in said:
            wrong.append(f"{where}: {option} default {value!r}; the commands say {sorted(said)}")
    assert not wrong, "\n".join(wrong)
    assert checked >= 5  # the statements this test exists for are found


def test_a_stated_default_that_differs_is_found() -> None:
    """The check's own break: the default docs/yarn.md stated before it was mended."""
    [match] = DEFAULT_STATED.finditer("- **`--executor-wait`** (default 60 s) applies: an app")
    assert match.groups() == ("--executor-wait", "60 s")
    assert {_norm(d) for d, _ in cli_options()["--executor-wait"].values()} == {"300s"}


# --- the options the pages give a command are that command's ------------------------------

#: a numaspark command in a code line or an inline code span: its words up to a pipe, a
#: redirection, a `;` or `&&`, or the span's end
COMMAND = re.compile(r"(?<![\w/.-])numaspark((?:[ \t]+[^\s`|;&>]+)+)")
FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def code_pieces(text: str) -> list[tuple[int, str]]:
    """(line, code) of every code line of a page (fenced, or indented four spaces) and every
    inline code span; a line ending in a backslash goes on with the next, and a span may
    wrap over lines, as the pages write long commands."""
    pieces = []
    for match in FENCED.finditer(text):
        first = text.count("\n", 0, match.start()) + 2
        pieces.append((first, re.sub(r"\\\n\s*", " ", match.group(1))))
    prose = FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    lines = prose.splitlines()
    number = 0
    while number < len(lines):
        start, line = number, lines[number]
        if line.startswith("    "):
            while line.endswith("\\") and number + 1 < len(lines):
                number += 1
                line = line[:-1] + " " + lines[number].strip()
            pieces.append((start + 1, line))
        number += 1
    for match in re.finditer(r"`([^`]+)`", prose):
        pieces.append((prose.count("\n", 0, match.start()) + 1, match.group(1).replace("\n", " ")))
    return pieces


def options_given(text: str, where: str) -> list[tuple[str, str, str]]:
    """(where, command, --option) for each option a numaspark command is given in ``text``'s
    code, the command resolved through its subcommands (`study smt`, `cluster up`); an
    argument after a bare `--` is the application's own."""
    import typer

    from numaspark.cli.commands import app

    root = typer.main.get_command(app)
    found = []
    for line, code in code_pieces(text):
        for match in COMMAND.finditer(code):
            words, command, path = match.group(1).split(), root, []
            while words and words[0] in getattr(command, "commands", {}):
                command = command.commands[words[0]]
                path.append(words.pop(0))
            if command is root:
                continue
            for word in words[: words.index("--") if "--" in words else None]:
                if re.match(r"--[a-z]", word):
                    option = word.split("=")[0].rstrip(".,:)")
                    found.append((f"{where}:{line}", " ".join(path), option))
    return found


def _lacking(given: list[tuple[str, str, str]]) -> list[str]:
    import typer

    from numaspark.cli.commands import app

    root = typer.main.get_command(app)
    wrong = []
    for where, path, option in given:
        command = root
        for name in path.split():
            command = command.commands[name]
        options = {"--help", "-h"}
        for param in command.params:
            options |= {*param.opts, *getattr(param, "secondary_opts", [])}
        if option not in options:
            wrong.append(f"{where}: `numaspark {path}` has no {option} (its --help lacks it)")
    return wrong


def test_every_option_a_page_gives_a_command_is_in_its_help() -> None:
    """An option the README or a docs page gives a numaspark command, in a code block or an
    inline span, is one of that command's options: a page that says `run --plugin-jar`
    (only `plan` has it) fails here."""
    given = [g for page in PAGES for g in options_given(page.read_text(), page.name)]
    assert len(given) >= 250  # the pages' commands are found: an empty list would pass
    wrong = _lacking(given)
    assert not wrong, "\n".join(wrong)


def test_an_option_a_command_lacks_is_found() -> None:
    """The check's own break: docs/quickstart.md:97 as it read before it was mended, an
    indented command wrapped with a backslash, and an inline span wrapped over two lines."""
    text = (
        "Add the plugin: `numaspark run wordcount\n--plugin-jar numaspark-affinity.jar`.\n\n"
        "    numaspark study smt wordcount --repeat 3 \\\n        --no-such-option 3\n"
    )
    assert sorted(_lacking(options_given(text, "page"))) == [
        "page:1: `numaspark run` has no --plugin-jar (its --help lacks it)",
        "page:4: `numaspark study smt` has no --no-such-option (its --help lacks it)",
    ]
