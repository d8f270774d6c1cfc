"""Options handed to a command as one argument, declared once as the class that holds them.

typer reads a command's options from its signature and has no option groups of its own:
`option_group` makes a decorator that shows a command the group's options and hands it one
object made of their values; `options_of` reads a dataclass's fields as those options.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing

import typer

Opt = typer.Option


def option_group(argument: str, parameters: list[inspect.Parameter], make):
    """A decorator that gives a command ``parameters`` as one argument, ``argument``, made by
    ``make(**values)``. typer reads a command's options from its signature and has no option
    groups of its own, so the wrapper shows the command's own parameters and then these."""

    def decorate(command):
        own = [
            p
            for p in inspect.signature(command, eval_str=True).parameters.values()
            if p.name != argument
        ]

        @functools.wraps(command)
        def wrapper(**options):
            grouped = make(**{p.name: options.pop(p.name) for p in parameters})
            return command(**{argument: grouped}, **options)

        wrapper.__signature__ = inspect.Signature([*own, *parameters])
        return wrapper

    return decorate


def options_of(group: type) -> list[inspect.Parameter]:
    """A dataclass's fields as a command's options, for `option_group`: each field's type is
    its option (typer's ``Annotated``) and its default the option's, so that a group of
    options is declared once, as the class that holds them."""
    hints = typing.get_type_hints(group, include_extras=True)
    return [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=field.default,
            annotation=hints[field.name],
        )
        for field in dataclasses.fields(group)
    ]
