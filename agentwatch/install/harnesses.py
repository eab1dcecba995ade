"""The JSON-configured harnesses: where each keeps its hooks and which events agentwatch registers.

Why these events (docs/install.md has the long form): post-tool events carry
a tool call's input and output, so one hook per call is enough; a pre-tool
event is added only where it is free for the agent (run async) and the only
way to see calls that never ran (blocked by another hook, denied, failed
without a post event): Claude Code and OpenHands. Per-chunk and per-keystroke
events (Gemini AfterModel, Cursor Tab hooks) are never registered. Session,
prompt, stop, subagent, compaction and notification events are, where the
harness has them. Claude Code rejects its whole settings file over one event
name it does not know, so only events every hooks-capable build knows are
written there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import command as cmd
from .jsonconfig import Layout

TIMEOUT_S = 10  # the client is bounded to ~2.5 s; this is only a backstop for the harness


@dataclass
class JsonHarness:
    name: str
    layout: Layout
    events: list[str]
    paths: dict[str, Callable[[Path], Path]]  # scope -> (project dir -> config file)
    handler_fields: dict = field(default_factory=dict)  # added to every handler after type/command
    matcher: str | None = None  # grouped layouts: the group's matcher (None: no matcher key)
    event_arg: bool = False  # pass --event NAME (the payload does not name the event)
    notes: dict[str, list[str]] = field(default_factory=dict)  # scope ("*" for all) -> notes

    def command(self, event: str | None = None) -> str:
        return cmd.command(self.name, event if self.event_arg else None)

    def handler(self, event: str) -> dict:
        handler = {"type": "command", self.layout.command_key: self.command(event)}
        handler.update(self.handler_fields)
        return handler

    def entry(self, event: str) -> dict:
        if not self.layout.grouped:
            return self.handler(event)
        group: dict = {}
        if self.matcher is not None:
            group["matcher"] = self.matcher
        group["hooks"] = [self.handler(event)]
        return group

    def expected(self) -> dict[str, dict]:
        return {event: self.entry(event) for event in self.events}

    def is_ours(self, text: object) -> bool:
        return cmd.is_ours(text, self.name)

    def notes_for(self, scope: str) -> list[str]:
        return self.notes.get("*", []) + self.notes.get(scope, [])


def _home() -> Path:
    return Path.home()


def _claude_dir() -> Path:
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env) if env and os.path.isabs(env) else _home() / ".claude"


def _codex_home() -> Path:
    env = os.environ.get("CODEX_HOME")
    return Path(env) if env and os.path.isabs(env) else _home() / ".codex"


GROUPED = Layout(grouped=True)
VSCODE_ALSO = (
    "VS Code agent hooks also read this file and run these entries (recorded as {name}); "
    "install only one of copilot and vscode per scope"
)

CLAUDE_CODE = JsonHarness(
    name="claude-code",
    layout=GROUPED,
    events=[
        "SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse",
        "Stop", "SubagentStop", "PreCompact", "Notification",
    ],
    paths={"user": lambda project: _claude_dir() / "settings.json",
           "project": lambda project: project / ".claude" / "settings.json"},
    handler_fields={"async": True, "timeout": TIMEOUT_S},
    matcher="*",
    notes={"*": ["VS Code agent hooks also read Claude Code settings files and run these entries "
                 "(recorded as claude-code)"],
           "project": ["project settings are usually committed: the absolute paths in the command exist "
                       "only on this machine (elsewhere the hook fails open and records nothing)"]},
)

CODEX = JsonHarness(
    name="codex",
    layout=GROUPED,
    events=[
        "SessionStart", "SessionEnd", "UserPromptSubmit", "PostToolUse", "PermissionRequest",
        "PreCompact", "Stop", "SubagentStart", "SubagentStop",
    ],
    paths={"user": lambda project: _codex_home() / "hooks.json",
           "project": lambda project: project / ".codex" / "hooks.json"},
    # No "async": shipped Codex builds skip async hooks entirely ("async hooks are not supported yet").
    handler_fields={"timeout": TIMEOUT_S},
    matcher="",
    notes={"*": ["Codex runs a new or changed hook only after it is trusted: start codex and review "
                 "agentwatch's hooks under /hooks",
                 "Codex runs hooks through $SHELL -lc (a login shell), whose start-up adds to every hook"],
           "project": ["project hooks load only when Codex trusts the project"]},
)

GEMINI_CLI = JsonHarness(
    name="gemini-cli",
    layout=GROUPED,
    events=["SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "AfterTool", "PreCompress", "Notification"],
    paths={"user": lambda project: _home() / ".gemini" / "settings.json",
           "project": lambda project: project / ".gemini" / "settings.json"},
    handler_fields={"name": "agentwatch", "timeout": TIMEOUT_S * 1000},  # milliseconds
    notes={"*": ["on Gemini CLI builds where hooks are still experimental, enable them in settings.json "
                 "(hooksConfig.enabled, or tools.enableHooks on older builds); agentwatch does not flip it"]},
)

OPENHANDS = JsonHarness(
    name="openhands",
    layout=GROUPED,
    events=["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"],
    paths={"project": lambda project: project / ".openhands" / "hooks.json"},
    handler_fields={"async": True, "timeout": TIMEOUT_S},
    matcher="*",
    notes={"*": ["OpenHands runs hooks inside its sandbox: the command works only where these paths exist "
                 "(the local runtime); elsewhere forward AGENTWATCH_SOCKET or AGENTWATCH_SPOOL into it"]},
)

CURSOR = JsonHarness(
    name="cursor",
    layout=Layout(grouped=False, skeleton={"version": 1}),
    events=[
        "sessionStart", "sessionEnd", "beforeSubmitPrompt", "afterShellExecution", "afterMCPExecution",
        "afterFileEdit", "afterAgentResponse", "stop",
    ],
    paths={"user": lambda project: _home() / ".cursor" / "hooks.json",
           "project": lambda project: project / ".cursor" / "hooks.json"},
    notes={"*": ["some Cursor 2.x releases run only the first hook of an event: a hook listed before "
                 "agentwatch's would hide it there"]},
)

_SHARED = Layout(grouped=False, skeleton={"version": 1}, dedicated=True)
_SHARED_PATHS = {"user": lambda project: _home() / ".copilot" / "hooks" / "agentwatch.json",
                 "project": lambda project: project / ".github" / "hooks" / "agentwatch.json"}

COPILOT = JsonHarness(
    name="copilot",
    layout=Layout(grouped=False, command_key="bash", skeleton=_SHARED.skeleton, dedicated=True),
    events=["sessionStart", "sessionEnd", "userPromptSubmitted", "postToolUse", "errorOccurred",
            "agentStop", "subagentStop"],
    paths=_SHARED_PATHS,
    handler_fields={"timeoutSec": TIMEOUT_S},
    event_arg=True,  # camelCase payloads do not name their event
    notes={"*": [VSCODE_ALSO.format(name="copilot")],
           "project": ["the Copilot cloud agent runs these hooks on a GitHub Actions runner, where this "
                       "machine's paths and daemon do not exist: there they fail open and record nothing"]},
)

VSCODE = JsonHarness(
    name="vscode",
    layout=_SHARED,
    events=["SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "SubagentStart", "SubagentStop", "Stop"],
    paths=_SHARED_PATHS,
    handler_fields={"timeout": TIMEOUT_S},
    notes={"*": ["Copilot CLI also reads this file; install only one of copilot and vscode per scope"]},
)

JSON_HARNESSES = {h.name: h for h in (CLAUDE_CODE, CODEX, GEMINI_CLI, CURSOR, COPILOT, VSCODE, OPENHANDS)}
