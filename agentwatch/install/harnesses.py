"""The JSON-configured harnesses: where each keeps its hooks and which events agentwatch registers.

Why these events (docs/install.md has the long form): every tool call must
pair, so the pre-tool event is registered wherever a harness has one, and so
is every event that ends a call other than by success (failure, denial,
interrupt). Session, prompt, stop, subagent, compaction and notification
events are registered where the harness has them. Per-chunk and
per-keystroke events (Gemini AfterModel, Cursor Tab hooks) never are.

Some events exist only in newer builds, and Claude Code and Cursor reject a
whole config over one event name they do not know. Such an event is written
only when the installed harness reports a version that has it (versions.py);
when the version cannot be read, the installer writes the events every
hooks-capable build accepts and says which it left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from . import command as cmd
from .jsonconfig import Layout
from .versions import Version, show

TIMEOUT_S = 10  # the client is bounded to ~2.5 s; this is only a backstop for the harness


@dataclass
class JsonHarness:
    name: str
    layout: Layout
    events: list[str]  # registered with every build that has hooks
    paths: dict[str, Callable[[Path], Path]]  # scope -> (project dir -> config file)
    handler_fields: dict = field(default_factory=dict)  # added to every handler after type/command
    matcher: str | None = None  # grouped layouts: the group's matcher (None: no matcher key)
    event_arg: bool = False  # pass --event NAME (the payload does not name the event)
    gated: list[tuple[str, Version]] = field(default_factory=list)  # (event, first version that has it)
    # Events written instead of `events` when the version is unknown or older than `modern_since`.
    legacy_events: list[str] | None = None
    modern_since: Version | None = None
    retired: dict[str, str] = field(default_factory=dict)  # an event name written before -> its successor
    command_harness: str | None = None  # the harness word on the command line, when not `name`
    also_ours: tuple[str, ...] = ()  # harness words of earlier installs into the same file
    notes: dict[str, list[str]] = field(default_factory=dict)  # scope ("*" for all) -> notes

    @property
    def word(self) -> str:
        return self.command_harness or self.name

    def select(self, version: Version | None) -> tuple[list[str], list[str]]:
        """The events to register for an installed `version` (None: unknown), and why, as notes."""
        modern = self.legacy_events is None or (
            version is not None and self.modern_since is not None and version >= self.modern_since
        )
        events = list(self.events if modern else self.legacy_events or [])
        left_out = []
        for event, since in self.gated:
            if version is not None and version >= since and modern:
                events.append(event)
            else:
                left_out.append(f"{event} (needs {show(since)})")
        notes = []
        if version is None:
            if self.gated or self.legacy_events is not None:
                notes.append(f"{self.name} version unknown (its CLI is not on PATH or printed no version): "
                             "registered only the events every hooks-capable build accepts; "
                             "run install again once it is installed")
        else:
            notes.append(f"{self.name} {show(version)} found: registered the events it has")
        if not modern and self.modern_since is not None:
            notes.append(f"per-action events registered; the tool events (preToolUse, postToolUse, "
                         f"postToolUseFailure, with call ids) need {show(self.modern_since)}")
        if left_out:
            notes.append("left out: " + ", ".join(left_out))
        return events, notes

    def all_events(self) -> list[str]:
        """Every event some version of this installer registers."""
        return list(dict.fromkeys([*self.events, *(self.legacy_events or []), *(e for e, _ in self.gated),
                                   *self.retired]))

    def command(self, event: str | None = None, via: Path | None = None) -> str:
        return cmd.command(self.word, event if self.event_arg else None, via=str(via) if via else None)

    def handler(self, event: str, via: Path | None = None) -> dict:
        handler = {"type": "command", self.layout.command_key: self.command(event, via)}
        handler.update(self.handler_fields)
        return handler

    def entry(self, event: str, via: Path | None = None) -> dict:
        if not self.layout.grouped:
            return self.handler(event, via)
        group: dict = {}
        if self.matcher is not None:
            group["matcher"] = self.matcher
        group["hooks"] = [self.handler(event, via)]
        return group

    def expected(self, events: list[str], via: Path | None = None) -> dict[str, dict]:
        return {event: self.entry(event, via) for event in events}

    def is_ours(self, text: object) -> bool:
        return any(cmd.is_ours(text, word) for word in (self.word, *self.also_ours))

    def notes_for(self, scope: str) -> list[str]:
        return self.notes.get("*", []) + self.notes.get(scope, [])


def _home() -> Path:
    return Path.home()


def _env_dir(name: str, default: Path) -> Path:
    env = os.environ.get(name)
    return Path(env) if env and os.path.isabs(env) else default


def _claude_dir() -> Path:
    return _env_dir("CLAUDE_CONFIG_DIR", _home() / ".claude")


def claude_managed_settings() -> Path | None:
    """Claude Code's managed settings file, whose disableAllHooks or allowManagedHooksOnly turns every
    user and project hook off (code.claude.com/docs/en/settings, "Settings files"); None elsewhere."""
    from agentwatch import platform_layer

    if platform_layer.is_linux():
        return Path("/etc/claude-code/managed-settings.json")
    if platform_layer.is_macos():
        return Path("/Library/Application Support/ClaudeCode/managed-settings.json")
    return None


def _codex_home() -> Path:
    return _env_dir("CODEX_HOME", _home() / ".codex")


def _copilot_home() -> Path:
    return _env_dir("COPILOT_HOME", _home() / ".copilot")


GROUPED = Layout(grouped=True)

CLAUDE_CODE = JsonHarness(
    name="claude-code",
    layout=GROUPED,
    events=[
        "SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse",
        "Stop", "SubagentStop", "PreCompact", "Notification",
    ],
    # The first release that has the event, from the harness's own changelogs
    # (tests/fixtures/gates/claude-code.json quotes each line): anthropics/claude-code
    # CHANGELOG.md, except PostToolUseFailure (anthropics/claude-agent-sdk-python CHANGELOG.md
    # 0.1.26, which bundles CLI 2.1.27) and UserPromptExpansion (first named by
    # anthropics/claude-agent-sdk-typescript CHANGELOG.md 0.3.238, at parity with CLI 2.1.238).
    gated=[
        ("SubagentStart", (2, 0, 43)),
        ("PermissionRequest", (2, 0, 45)),
        ("PostToolUseFailure", (2, 1, 27)),
        ("ConfigChange", (2, 1, 49)),
        ("InstructionsLoaded", (2, 1, 69)),
        ("PostCompact", (2, 1, 76)),
        ("Elicitation", (2, 1, 76)),
        ("ElicitationResult", (2, 1, 76)),
        ("StopFailure", (2, 1, 78)),
        ("PermissionDenied", (2, 1, 89)),
        ("UserPromptExpansion", (2, 1, 238)),
    ],
    paths={"user": lambda project: _claude_dir() / "settings.json",
           "project": lambda project: project / ".claude" / "settings.json"},
    handler_fields={"async": True, "timeout": TIMEOUT_S},
    matcher="*",
    notes={"*": ["VS Code and Cursor also run the hooks in Claude Code's settings files, and Copilot CLI "
                 "those of the repository: their events are recorded too, named by their payload's shape"],
           "project": ["project settings are usually committed: the absolute paths in the command exist "
                       "only on this machine (elsewhere the hook fails open and records nothing)"]},
)

CODEX = JsonHarness(
    name="codex",
    layout=GROUPED,
    events=[
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
        "PreCompact", "PostCompact", "Stop", "SubagentStart", "SubagentStop",
    ],
    # The hooks engine in codex-rs/hooks has these from 0.150.0 (Interrupt: openai/codex #40511).
    gated=[("SessionEnd", (0, 150, 0)), ("StopFailure", (0, 150, 0)), ("Interrupt", (0, 150, 0))],
    paths={"user": lambda project: _codex_home() / "hooks.json",
           "project": lambda project: project / ".codex" / "hooks.json"},
    # No "async": shipped Codex builds skip async hooks entirely ("async hooks are not supported yet").
    handler_fields={"timeout": TIMEOUT_S},
    matcher="",
    notes={"*": ["Codex runs a new or changed hook only after it is trusted: start codex and review "
                 "agentwatch's hooks under /hooks",
                 "Codex runs hooks through $SHELL -lc (a login shell), whose start-up adds to every hook; "
                 "PreToolUse runs in front of every tool call"],
           "project": ["project hooks load only when Codex trusts the project"]},
)

GEMINI_CLI = JsonHarness(
    name="gemini-cli",
    layout=GROUPED,
    events=["SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool",
            "PreCompress", "Notification"],
    paths={"user": lambda project: _home() / ".gemini" / "settings.json",
           "project": lambda project: project / ".gemini" / "settings.json"},
    handler_fields={"name": "agentwatch", "timeout": TIMEOUT_S * 1000},  # milliseconds
    notes={"*": ["on Gemini CLI builds where hooks are still experimental, enable them in settings.json "
                 "(hooksConfig.enabled, or tools.enableHooks on older builds); agentwatch does not flip it",
                 "BeforeTool runs in front of every tool call (Gemini awaits it)"]},
)

OPENHANDS = JsonHarness(
    name="openhands",
    layout=GROUPED,
    events=["SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"],
    paths={"project": lambda project: project / ".openhands" / "hooks.json",
           "user": lambda project: _home() / ".openhands" / "hooks.json"},
    handler_fields={"async": True, "timeout": TIMEOUT_S},
    matcher="*",
    notes={"*": ["OpenHands runs hooks inside its sandbox: the command works only where these paths exist "
                 "(the local runtime); elsewhere forward AGENTWATCH_SOCKET or AGENTWATCH_SPOOL into it",
                 "OpenHands reads only the first of .openhands/hooks.json (in the working directory) and "
                 "~/.openhands/hooks.json that exists: a project file hides the user one"]},
)

CURSOR = JsonHarness(
    name="cursor",
    layout=Layout(grouped=False, skeleton={"version": 1}),
    events=[
        "beforeSubmitPrompt", "preToolUse", "postToolUse", "postToolUseFailure",
        "subagentStart", "subagentStop", "preCompact", "afterAgentResponse", "stop",
    ],
    legacy_events=[
        "beforeSubmitPrompt", "beforeShellExecution", "afterShellExecution", "beforeMCPExecution",
        "afterMCPExecution", "afterFileEdit", "afterAgentResponse", "stop",
    ],
    modern_since=(2, 4, 0),  # cursor.com/changelog/2-4: preToolUse and postToolUse
    # Cursor 2.x validators refused sessionStart as an unknown hook type; 3.x dispatches it.
    gated=[("sessionStart", (3, 0, 0)), ("sessionEnd", (3, 0, 0))],
    paths={"user": lambda project: _home() / ".cursor" / "hooks.json",
           "project": lambda project: project / ".cursor" / "hooks.json"},
    notes={"*": ["some Cursor 2.x releases run only the first hook of an event: a hook listed before "
                 "agentwatch's would hide it there",
                 "preToolUse and beforeShellExecution run in front of every tool call (Cursor awaits them)"]},
)

# Copilot CLI and VS Code read the same files and both accept the Pascal-case
# event names, each sending its own payload for them (Copilot the "VS Code
# compatible" one): one set of entries serves both, and the record names the
# real sender from the payload. The harness word on the command line is
# `copilot` whichever of the two was installed.
#
# Three of Copilot's events exist in camelCase only (github/docs content/copilot/
# reference/hooks-reference.md): `subagentStart` and `notification` are written so.
# VS Code maps `subagentStart` and `SubagentStart` to one hook type
# (microsoft/vscode src/vs/workbench/contrib/chat/test/common/promptSyntax/
# hookSchema.test.ts, normalizeHookTypeId), so the camelCase entry serves it too,
# and writing both would run the hook twice there. `PermissionRequest` has a
# Pascal-case form; VS Code has neither it nor `notification` and skips them.
_SHARED_EVENTS = [
    "SessionStart", "SessionEnd", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
    "Stop", "subagentStart", "SubagentStop", "PreCompact", "ErrorOccurred", "PermissionRequest", "notification",
]
_SHARED_RETIRED = {"SubagentStart": "subagentStart"}
_SHARED_PATHS = {"user": lambda project: _copilot_home() / "hooks" / "agentwatch.json",
                 "project": lambda project: project / ".github" / "hooks" / "agentwatch.json"}
_SHARED_LAYOUT = Layout(grouped=False, skeleton={"version": 1}, dedicated=True, old_command_keys=("bash",))
_SHARED_NOTE = ("Copilot CLI and VS Code both run this file's entries; each event is recorded once, "
                "named copilot or vscode by its payload's shape")

COPILOT = JsonHarness(
    name="copilot",
    layout=_SHARED_LAYOUT,
    events=_SHARED_EVENTS,
    paths=_SHARED_PATHS,
    handler_fields={"timeout": TIMEOUT_S},  # seconds for both (Copilot: alias of timeoutSec)
    retired=_SHARED_RETIRED,
    command_harness="copilot",
    also_ours=("vscode",),
    notes={"*": [_SHARED_NOTE],
           "project": ["the Copilot cloud agent runs these hooks on a GitHub Actions runner, where this "
                       "machine's paths and daemon do not exist: there they fail open and record nothing"]},
)

VSCODE = JsonHarness(
    name="vscode",
    layout=_SHARED_LAYOUT,
    events=_SHARED_EVENTS,
    paths=_SHARED_PATHS,
    handler_fields={"timeout": TIMEOUT_S},
    retired=_SHARED_RETIRED,
    command_harness="copilot",
    also_ours=("vscode",),
    notes={"*": [_SHARED_NOTE],
           "user": ["only newer VS Code builds read ~/.copilot/hooks (its chat.hookFilesLocations setting lists "
                    "the files it reads): on an older build nothing from this file is recorded; install with "
                    "--scope project there"]},
)

JSON_HARNESSES = {h.name: h for h in (CLAUDE_CODE, CODEX, GEMINI_CLI, CURSOR, COPILOT, VSCODE, OPENHANDS)}
