"""How option values read in `--help`: a person's word (PATH, N, TEXT), never a Python type.

typer prints each parameter's type in angle brackets (`<bool>`, `<int range>`,
`<list[str]>`) and a range as `[1<=x<=100000]`. Here a flag shows no value at
all, a parameter with a metavar shows it, and one without a word for its kind;
a range reads `1 to 100000`; a group lists each command's first sentence
whole (click cuts it with `...`). Overrides of typer's display hooks, made
when the command line is imported, so every command and the generated
docs/cli.md agree.
"""

from __future__ import annotations

from typing import Any

from typer import core

_WORDS = {"int": "N", "float": "NUMBER", "str": "TEXT", "Path": "PATH", "path": "PATH", "datetime": "TIME"}


def _value_word(param: Any, ctx: Any) -> str | None:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    if param.metavar:
        return None if isinstance(param, core.TyperArgument) else param.metavar  # an argument is named by it already
    desc = param.type_descriptor
    if desc.is_choice:
        return "|".join(str(c) for c in desc.choices or ())
    if desc.is_path:
        return "PATH"
    bare = param.bare_type().removeprefix("list[").removesuffix("]")
    word = _WORDS.get(bare, bare.upper())
    return word


def _range(param: Any) -> str | None:
    low, high = getattr(param, "min", None), getattr(param, "max", None)
    if low is None and high is None:
        return None
    if high is None:
        return f"at least {low:g}"
    if low is None:
        return f"at most {high:g}"
    return f"{low:g} to {high:g}"


def _whole_first_sentence(self: Any, limit: int = 45) -> str:
    """A command's line in its group's list: the first sentence whole (it wraps at the width),
    where click cuts it at `limit` characters with `...`."""
    return _short_help(self, 10_000)


_short_help = core._click.core.Command.get_short_help_str


def install() -> None:
    core._click.core.Command.get_short_help_str = _whole_first_sentence  # type: ignore[method-assign]
    for cls in (core._TyperParameter, core.TyperArgument, core.TyperOption):
        cls.display_type_rich = _value_word  # type: ignore[method-assign,assignment]
    core.TyperArgument._get_number_range_help_str = _range  # type: ignore[method-assign,assignment]
    core.TyperOption._get_number_range_help_str = _range  # type: ignore[method-assign,assignment]


def _argument_name(param: Any) -> str:
    """An argument's one spelling: its metavar, its choices or its upper-case name; `...` when repeatable."""
    choices = param.type_descriptor.choices if param.type_descriptor.is_choice else None
    if param.metavar:
        name = param.metavar.strip("[]{}").removesuffix("...")
    elif choices:
        name = "|".join(str(c) for c in choices)  # literal values keep their case
    else:
        name = (param.name or "arg").upper()
    return name + ("..." if param.nargs != 1 else "")


def _usage_name(param: Any) -> str:
    """In the usage line: NAME when required, [NAME] when not."""
    name = _argument_name(param)
    return name if param.required else f"[{name}]"


def _error_hint(param: Any) -> str:
    """An argument as an error names it ("Missing argument 'QUERY'."), spelt as its usage line does."""
    return f"'{_argument_name(param)}'"


def install_argument_names() -> None:
    core.TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign,assignment]
    core.TyperArgument._rich_display_name = _argument_name  # type: ignore[method-assign,assignment]
    core.TyperArgument.get_error_hint = _error_hint  # type: ignore[method-assign,assignment]
