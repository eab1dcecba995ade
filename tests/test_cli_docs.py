"""Every `docs/NAME.md` a help text cites is readable where agentwatch is installed (issue 31, item 4):
the wheel ships docs/ (tests/test_wheel.py checks it in an installed wheel) and `agentwatch docs NAME`
prints the page."""

from __future__ import annotations

import re
from pathlib import Path

import typer.main
from typer.testing import CliRunner

from agentwatch.cli import app
from agentwatch.cli.docs import docs_dir, topics

ROOT = Path(__file__).resolve().parent.parent
CITED = re.compile(r"docs/([a-z0-9_-]+)\.md")  # docs/NAME.md, the placeholder, is not a page


def every_help() -> dict[str, str]:
    """Each command's --help, as a person sees it, by its name."""
    out: dict[str, str] = {}

    def walk(command, path: list[str]) -> None:
        result = CliRunner().invoke(app, [*path, "--help"], terminal_width=80)
        assert result.exit_code == 0, (path, result.output)
        out[" ".join(path) or "agentwatch"] = result.output
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return out


def test_every_page_a_help_cites_is_shipped_and_printed_by_docs():
    helps = every_help()
    cited = {name for text in helps.values() for name in CITED.findall(re.sub(r"\s*│\s*", " ", text))}
    assert len(cited) >= 10  # the helps do cite pages
    assert sorted(cited - set(topics())) == []
    assert docs_dir() == ROOT / "docs"  # a checkout reads its own docs/; a wheel carries the same files
    for name in sorted(cited):
        result = CliRunner().invoke(app, ["docs", name])
        assert (result.exit_code, result.stdout) == (0, (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8"))


def test_docs_lists_its_pages_and_refuses_an_unknown_one():
    result = CliRunner().invoke(app, ["docs"])
    assert result.stdout.splitlines() == sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    assert CliRunner().invoke(app, ["docs", "docs/chain.md"]).exit_code == 0
    missing = CliRunner().invoke(app, ["docs", "nope"])
    assert missing.exit_code == 2 and missing.stderr.startswith("agentwatch: no page 'nope' (one of: architecture,")


def test_the_root_help_says_where_the_pages_are():
    assert "agentwatch docs NAME" in CliRunner().invoke(app, ["--help"], terminal_width=80).stdout


def test_every_help_reads_at_80_columns_with_human_value_names():
    """No Python types (`<bool>`, `<int range>`, `list[str]`), no option name or default cut short."""
    helps = every_help()
    assert len(helps) >= 30
    for name, text in helps.items():
        assert max(len(line) for line in text.splitlines()) <= 80, name
        assert not re.search(r"<(bool|int|float|str|path)\b|list\[|\d<=x|…", text), (name, text)
        assert not set(text) & set("╭╮╰╯│"), name  # plain text, no box to cut into
    assert "--batch-size N  Rows per transaction.  [default: 1000; 1 to 100000]" in helps["import"]
    assert "--full-verify-interval SECONDS" in helps["serve"]


def test_every_command_has_examples_that_parse_and_states_its_exit_codes():
    """Each example is parsed by the command it shows (an option it names exists, its values convert)."""
    import shlex

    from agentwatch.cli.examples import EXAMPLES, command_lines

    helps = every_help()
    commands = {name for name in helps if name != "agentwatch" and "Commands:" not in helps[name]}
    assert sorted(commands - set(EXAMPLES)) == []
    root = typer.main.get_command(app)
    for name in sorted(commands):
        text = helps[name]
        assert "\nExamples:\n" in text.replace("  Examples:", "Examples:"), name
        assert "exit" in text.lower(), name
        for example in command_lines(name):
            words = shlex.split(example, comments=True)
            assert words[0] == "agentwatch" and " ".join(words[1:]).startswith(name), example
            context = root.make_context("agentwatch", words[1:], resilient_parsing=False)
            command, sub = root, words[1:]
            while hasattr(command, "commands"):
                command = command.commands[sub[0]]
                sub = sub[1:]
            command.make_context(name, sub, parent=context)


def test_arguments_have_one_spelling():
    """NAME required, [NAME] optional, NAME... repeatable: no {NAME}, [[NAME]], {SEQ...}... or [seq]."""
    usages = {name: text.splitlines()[0] for name, text in every_help().items() if "Commands:" not in text}
    for name, usage in usages.items():
        assert not re.search(r"[{}]|\[\[|\]\.\.\.|\[[a-z]+\]", usage), (name, usage)
    assert usages["erase"] == "Usage: agentwatch erase [OPTIONS] SEQ..."
    assert usages["prove"] == "Usage: agentwatch prove [OPTIONS] [SEQ]"
    assert usages["import"] == "Usage: agentwatch import [OPTIONS] FILE|-"
