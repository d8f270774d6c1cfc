"""Every ``--help`` as a user reads it at 80 columns: whole sentences, an example, no overlong line.

Rendered in-process with click's test runner (no JVM, no subprocess: the whole tree takes well
under a second), from the top-level app down to every sub-command of every sub-app.

The rule for a sentence broken in the middle (``broken_lines``). Two consecutive lines of the
same description (one option's, argument's or command's text, or one paragraph of a command's
help) are a break in the middle of a sentence when all of these hold:

- the first line does not end a sentence: its last character is not ``.``, ``!`` or ``?``
  (so "CPUs," counts: a comma, a semicolon or a colon continue the sentence);
- the second line continues it: its first character is not a capital letter (lower case, a
  digit, ``--name``, an opening bracket or quote);
- the second line's first word would have fit on the first line within the 80 columns (the
  first line's length, a space and that word make at most 80).

The last condition is what tells a hard break, or a description column squeezed too narrow,
from normal wrapping: the formatter fills each line to the width before it breaks, so after a
normal break the next word never fits. Lines of the same description are found by their
columns: a continuation line starts at the column where the line before it has its
description (after two or more spaces) or at the same indent as a continuation line; inside
the sections (Arguments:, Options:, Commands:) two lines at the entries' indent are two
entries, not one. Blank lines are skipped, so a description cut into two paragraphs in
mid-sentence is caught as well. A line that starts with ``numaspark`` is a command to type (an example), not
a continuation.
"""

from __future__ import annotations

import functools
import itertools
import re

import pytest
import typer.main
from typer.testing import CliRunner

from numaspark.cli.commands import app

WIDTH = 80
SENTENCE_END = (".", "!", "?")
# a section of click's help ("Options:") or of a rich panel's top border
SECTION = re.compile(r"^([A-Z][\w ]*:|╭.*)$")
BOX = str.maketrans("│╭╮╰╯─", "      ")


def command_paths(command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command's path under ``command`` (itself first), walking the click tree."""
    found = [path]
    if hasattr(command, "list_commands"):  # a group (typer's own copy of click's)
        ctx = command.context_class(command)
        for name in command.list_commands(ctx):
            found += command_paths(command.get_command(ctx, name), (*path, name))
    return found


ROOT = typer.main.get_command(app)
PATHS = command_paths(ROOT)


def command_at(path: tuple[str, ...]):
    command = ROOT
    for name in path:
        command = command.get_command(command.context_class(command), name)
    return command


@functools.cache
def render(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(
        app, [*path, "--help"], terminal_width=WIDTH, env={"COLUMNS": str(WIDTH)}
    )
    assert result.exit_code == 0, result.output
    return result.output


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def continues(before: str, line: str, in_section: bool) -> bool:
    """Whether ``line`` goes on with the description ``before`` holds (see the module's rule)."""
    col = indent(line)
    if line.lstrip().startswith("numaspark "):
        return False
    if col == indent(before):
        return col > 0 and (col > 2 or not in_section)
    return col > indent(before) and before[col - 2 : col] == "  " and before[col : col + 1] != " "


def broken_lines(page: str, width: int = WIDTH) -> list[tuple[str, str]]:
    """The pairs of lines of ``page`` where one description breaks in mid-sentence (the rule)."""
    found, in_section = [], False
    lines = [
        raw.translate(BOX).rstrip() if raw.startswith("│") else raw for raw in page.splitlines()
    ]
    # blank lines are left out: a description split into two paragraphs mid-sentence is broken too
    for before, line in itertools.pairwise(line for line in lines if line.strip()):
        if SECTION.match(line):
            in_section = True
        if not continues(before, line, in_section):
            continue
        text = line.strip()
        word = text.split()[0]
        if (
            not before.endswith(SENTENCE_END)
            and not text[0].isupper()
            and len(before) + 1 + len(word) <= width
        ):
            found.append((before, line))
    return found


def test_the_rule_catches_a_hard_break_and_a_narrow_column():
    hard = (
        "Options:\n  --hosts <str>  Place executors here: CPUs,\n                 nodes and heap.\n"
    )
    assert broken_lines(hard) == [
        ("  --hosts <str>  Place executors here: CPUs,", "                 nodes and heap.")
    ]
    narrow = "Options:\n  --repeat <int>  Measured\n                  iterations per run.\n"
    assert len(broken_lines(narrow)) == 1
    prose = "Usage: numaspark x\n\n  Place executors on the machine (or on\n  each host.\n"
    assert len(broken_lines(prose)) == 1
    split = (
        "Options:\n  --repeat <int>  Measured iterations per\n\n                  configuration.\n"
    )
    assert len(broken_lines(split)) == 1


def test_the_rule_lets_normal_wrapping_pass():
    full = "a" * 70 + " bbbbbbbbb"  # the next word takes the line past 80 columns
    page = f"Options:\n  --x <str>  {full}\n             ccc.\n  --y  Next entry.\n"
    assert broken_lines(page) == []
    sentences = "Options:\n  --x  The end.\n       more after a full stop.\n"
    assert broken_lines(sentences) == []
    capital = "Options:\n  --x  Ends here\n       Then a new start.\n"
    assert broken_lines(capital) == []
    example = "  Example:\n    numaspark run wordcount\n    numaspark plan\n"
    assert broken_lines(example) == []


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(("numaspark", *p)))
def test_help_reads_as_whole_sentences(path):
    page = render(path)
    name = " ".join(("numaspark", *path))
    broken = broken_lines(page)
    assert not broken, f"{name} --help breaks a sentence:\n" + "\n".join(
        f"{a!r}\n{b!r}" for a, b in broken
    )
    long = [line for line in page.splitlines() if len(line) > WIDTH]
    # click shortens a command's first sentence to fit the list: it must fit whole
    _, _, listed = page.partition("\nCommands:\n")
    cut = [line for line in listed.splitlines() if line.endswith("...")]
    assert not cut, f"{name} --help lists a command's first sentence cut short: {cut}"
    assert not long, f"{name} --help has lines over {WIDTH} columns: {long}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(("numaspark", *p)))
def test_help_has_an_example(path):
    """An "Example:" (or "e.g.") with a command line of this very command."""
    lines = render(path).splitlines()
    name = " ".join(("numaspark", *path))
    marked = [i for i, line in enumerate(lines) if re.search(r"\bExamples?:|\be\.g\.", line)]
    commands = [
        line.strip()
        for i in marked
        for line in lines[i : i + 4]
        if re.search(rf"(^|\s){re.escape(name)}(\s|$)", line.strip())
    ]
    assert commands, f"{name} --help has no example of {name}"


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(("numaspark", *p)))
def test_each_help_is_a_sentence(path):
    """Each option's and argument's help, and each paragraph of the command's (its example
    apart), starts with a capital (or a non-letter such as --name) and ends with a full stop."""
    command = command_at(path)
    paragraphs = [p.strip() for p in (command.help or "").split("\n\n") if p[:1] != "\b"]
    helps = {f"the command's paragraph {i + 1}": text for i, text in enumerate(paragraphs)}
    helps |= {p.name: (getattr(p, "help", None) or "").strip() for p in command.params}
    wrong = [
        f"{name}: {text!r}"
        for name, text in helps.items()
        if name != "help" and not (text[:1] and not text[0].islower() and text.endswith("."))
    ]
    assert not wrong, " ".join(("numaspark", *path)) + ":\n" + "\n".join(wrong)
