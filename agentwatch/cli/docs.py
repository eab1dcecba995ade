"""`agentwatch docs [TOPIC]`: the documentation that ships with the package, readable where it is installed.

Every help text that cites `docs/NAME.md` means the page `agentwatch docs NAME`
prints; the wheel carries docs/*.md as agentwatch/docs/ (pyproject.toml), and a
source checkout reads them from docs/.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Optional

import typer

from agentwatch.cli.app import app, fail


def docs_dir() -> Path:
    """The installed pages (agentwatch/docs/ in a wheel), else the checkout's docs/."""
    packaged = Path(str(resources.files("agentwatch"))) / "docs"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "docs"


def topics() -> list[str]:
    return sorted(p.stem for p in docs_dir().glob("*.md"))


@app.command("docs")
def docs_cmd(
    topic: Optional[str] = typer.Argument(None, metavar="TOPIC", help="A page's name, e.g. chain for docs/chain.md; none lists them."),
    path: bool = typer.Option(False, "--path", help="Print the page's file path instead of its text."),
) -> None:
    """Print a page of the documentation installed with agentwatch.

    A help text's `docs/NAME.md` is `agentwatch docs NAME`. With no TOPIC, the
    list of pages. Exit 0 printed, 2 no such page.
    """
    names = topics()
    if topic is None:
        sys.stdout.write("".join(f"{name}\n" for name in names))
        return
    name = topic.removeprefix("docs/").removesuffix(".md")
    if name not in names:
        fail(f"no page {topic!r} (one of: {', '.join(names)})", 2)
    page = docs_dir() / f"{name}.md"
    sys.stdout.write(f"{page}\n" if path else page.read_text(encoding="utf-8"))
