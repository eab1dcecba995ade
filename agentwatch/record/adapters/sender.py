"""Which harness sent a hook payload, told from the payload's own shape.

Several harnesses run hook configs written for another: VS Code reads Claude
Code's settings files and `.github/hooks/`, Copilot CLI reads the repository's
`.claude/settings.json` and `.github/hooks/`, Cursor reads Claude Code's
settings. The harness named on the hook's command line therefore says which
config the hook came from (`via`), not who sent the event. Within that group
each sender's payload has keys no other member sends (docs/record.md,
"Sender"):

- Cursor: `conversation_id`, `generation_id`, `cursor_version` or `workspace_roots`;
- VS Code (its own agent): the camelCase event key `hookEventName`;
- Copilot CLI: either no event key at all (its camelCase format: `toolArgs`,
  `sessionId`, epoch-ms `timestamp`) or `hook_event_name` with a
  `timestamp` (a string in its VS Code-compatible format, epoch ms in its
  `notification` payload);
- Codex (VS Code with the Codex harness selected): `hook_event_name`, no
  `timestamp`, and `turn_id`, or `model` on an event other than SessionStart;
- Claude Code: `hook_event_name` and no `timestamp`.

Only a harness that runs the config file can be the sender: Claude Code's
settings are run by all four, the file Copilot and VS Code share by those two,
and the files of Cursor, Codex, Gemini CLI, Cline and OpenHands by their own
harness alone, which keeps the name on the command line. VS Code runs the
first two with the payload of the agent harness selected in it, so a Claude-
or Codex-shaped payload through them is named claude-code or codex.
"""

from __future__ import annotations

from typing import Any

# For the harness a hook was installed for: the harnesses that run that config file.
# VS Code runs these files with the payload of the agent harness selected in it (Local: its
# own, Copilot, Claude or Codex: that harness's; code.visualstudio.com/docs/agents/reference/
# hooks-reference), so a Claude- or Codex-shaped payload can arrive through either.
RUN_BY = {
    "claude-code": frozenset({"claude-code", "vscode", "copilot", "cursor", "codex"}),
    "copilot": frozenset({"copilot", "vscode", "claude-code", "codex"}),
    "vscode": frozenset({"copilot", "vscode", "claude-code", "codex"}),
}
_CURSOR_KEYS = ("conversation_id", "generation_id", "cursor_version", "workspace_roots")
_COPILOT_CAMEL_KEYS = ("toolArgs", "toolResult", "initialPrompt", "sessionId", "stopReason", "errorContext")


def sender(installed_for: str, payload: Any) -> str:
    """The harness that sent `payload`, given the harness its hook was installed for."""
    candidates = RUN_BY.get(installed_for)
    if candidates is None or not isinstance(payload, dict):
        return installed_for
    found = _shape(payload)
    return found if found in candidates else installed_for


def _shape(payload: dict) -> str | None:
    if any(key in payload for key in _CURSOR_KEYS):
        return "cursor"
    if _text(payload.get("hookEventName")):
        return "vscode"
    if _text(payload.get("hook_event_name")):
        stamp = payload.get("timestamp")
        if _text(stamp) or _epoch_ms(stamp):
            return "copilot"
        return "codex" if _codex(payload) else "claude-code"
    if any(key in payload for key in _COPILOT_CAMEL_KEYS) or _epoch_ms(payload.get("timestamp")):
        return "copilot"
    return None


def _codex(payload: dict) -> bool:
    """Codex's payloads carry `turn_id` within a turn and `model` on every event; Claude Code's
    name a model only at SessionStart, where the two cannot be told apart (read as Claude's)."""
    if "turn_id" in payload:
        return True
    if "prompt_id" in payload:  # Claude Code's own turn key
        return False
    return "model" in payload and payload.get("hook_event_name") != "SessionStart"


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _epoch_ms(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 10**11


def via_config(argv: Any) -> str | None:
    """The config file named by `--via PATH` (or `--via=PATH`) among the hook's extra arguments."""
    if not isinstance(argv, list):
        return None
    for i, word in enumerate(argv):
        if not isinstance(word, str):
            continue
        if word == "--via" and i + 1 < len(argv) and isinstance(argv[i + 1], str) and argv[i + 1]:
            return argv[i + 1]
        if word.startswith("--via=") and len(word) > 6:
            return word[6:]
    return None
