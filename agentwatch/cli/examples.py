"""Every command's `--help` ends with an Examples section and its exit codes.

Kept here, apart from the commands, so a command's module stays about what it
does; `attach` adds them to the registered commands as their epilog (click
prints an epilog after the options, and a paragraph starting with \\b as it is).
A command whose help already states its exit codes gets only the examples.
"""

from __future__ import annotations

from typing import Any

from agentwatch.cli.jsonerror import VERDICT_COMMANDS

EXAMPLES: dict[str, list[str]] = {
    "import": ["agentwatch import events.jsonl --harness claude-code",
               "agentwatch import - --harness codex --json < old.jsonl"],
    "serve": ["agentwatch serve", "agentwatch serve --log-format json   # under a service manager"],
    "health": ["agentwatch health", "agentwatch health --json | jq .spool"],
    "hook": ["agentwatch hook claude-code < payload.json"],
    "erase": ["agentwatch erase 41 42 --reason \"a secret in a prompt\""],
    "init": ["agentwatch init", "agentwatch init --store /srv/agentwatch/store.db --json"],
    "path": ["agentwatch path", "agentwatch path --json"],
    "sql": ["agentwatch sql \"SELECT tool_name, count(*) FROM events GROUP BY 1\"",
            "agentwatch sql \"SELECT * FROM events LIMIT 100\" > events.tsv",
            "agentwatch sql --json \"pragma table_info(events)\""],
    "tail": ["agentwatch tail -f", "agentwatch tail --from 1 --json | jq .kind",
             "agentwatch tail -f --consumer siem"],
    "reconcile": ["agentwatch reconcile", "agentwatch reconcile --consumer siem --json"],
    "sessions": ["agentwatch sessions --since 2h", "agentwatch sessions --harness codex --json"],
    "show": ["agentwatch show 8a1c2f0e", "agentwatch show 8a1c2f0e -f"],
    "export": ["agentwatch export --format jsonl > records.jsonl",
               "agentwatch export --format otlp --endpoint http://localhost:4318"],
    "verify": ["agentwatch verify", "agentwatch verify --full --json"],
    "key": ["agentwatch key > store.pub"],
    "checkpoint": ["agentwatch checkpoint"],
    "prove": ["agentwatch prove 42 -o proof.bundle"],
    "verify-bundle": ["agentwatch verify-bundle proof.bundle --key store.pub"],
    "archive": ["agentwatch archive --before 90d -o archive.jsonl"],
    "ship": ["agentwatch ship --to postgresql://ship@fleet/agentwatch --once"],
    "install": ["agentwatch install claude-code", "agentwatch install codex --dry-run",
                "agentwatch install --list"],
    "uninstall": ["agentwatch uninstall claude-code"],
    "ui": ["agentwatch ui", "agentwatch ui --port 8765"],
    "processes": ["agentwatch processes --session 8a1c2f0e"],
    "coverage": ["agentwatch coverage --since 1d", "agentwatch coverage 8a1c2f0e --json"],
    "docs": ["agentwatch docs", "agentwatch docs chain | less", "agentwatch docs config --path"],
    "hold add": ["agentwatch hold add --session 8a1c2f0e --reason \"incident 4411\""],
    "hold release": ["agentwatch hold release 3 --reason \"incident closed\""],
    "hold list": ["agentwatch hold list --json"],
    "retention run": ["agentwatch retention run --days 30"],
    "fleet init": ["agentwatch fleet init postgresql://admin@fleet/agentwatch"],
    "fleet purge": ["agentwatch fleet purge postgresql://admin@fleet/agentwatch"],
    "fleet claim move": ["agentwatch fleet claim move postgresql://admin@fleet/aw 1f2e3d \\",
                         "    --login ship2 --host build-2 --reason \"host replaced\""],
    "fleet claim retire": ["agentwatch fleet claim retire postgresql://admin@fleet/aw 1f2e3d \\",
                           "    --reason \"host gone\""],
    "config show": ["agentwatch config show", "agentwatch config show --json"],
    "service print": ["agentwatch service print systemd > ~/.config/systemd/user/agentwatch.service"],
    "service install": ["agentwatch service install --system --member alice --member bob   # as root",
                        "agentwatch service install --system --dry-run   # the plan and its commands"],
    "service uninstall": ["agentwatch service uninstall --system   # as root; keeps the evidence",
                          "agentwatch service uninstall --system --purge   # and deletes it"],
    "service run": ["agentwatch service run --system import s.jsonl   # as root, service stopped"],
}

PIPE_EXIT = ("Exit 141 when stdout closes before the verdict is written (`| head`): never 0 "
             "for a verdict nobody received.")

GENERAL_EXITS = ("Exit codes: 0 done, 2 usage or configuration, 3 store or daemon unreachable, "
                 "130 interrupted (Ctrl-C).")


def epilog(name: str, help_text: str) -> str | None:
    lines = EXAMPLES.get(name)
    if not lines:
        return None
    text = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
    if "exit" not in help_text.lower():
        text += "\n\n" + GENERAL_EXITS
    if name in VERDICT_COMMANDS:
        text += "\n\n" + PIPE_EXIT
    return text


def attach(typer_app: Any, prefix: str = "") -> None:
    """Give each command of `typer_app` (and of its groups) its epilog."""
    for info in typer_app.registered_commands:
        name = prefix + (info.name or info.callback.__name__.replace("_", "-"))
        text = epilog(name, info.help or (info.callback.__doc__ or ""))
        if text is not None and info.epilog is None:
            info.epilog = text
    for group in typer_app.registered_groups:
        sub = group.typer_instance
        attach(sub, f"{prefix}{group.name or sub.info.name} ")


def command_lines(name: str) -> list[str]:
    """The examples of `name` as the commands they run: continued lines joined, pipes and redirections left off."""
    joined: list[str] = []
    for line in EXAMPLES.get(name, []):
        if joined and joined[-1].endswith(" \\"):
            joined[-1] = joined[-1][:-2] + " " + line.strip()
        else:
            joined.append(line)
    out = []
    for line in joined:
        for cut in (" | ", " > ", " < "):
            line = line.split(cut)[0]
        out.append(line)
    return out
