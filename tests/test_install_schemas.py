"""What `agentwatch install` writes has the structure each harness's published JSON schema defines.

The schemas below are this test's own (draft 2020-12), written from the facts the published
schemas state: the required keys, the types, the event-name enums and the timeout units. They
follow:

- Claude Code: SchemaStore/schemastore src/schemas/json/claude-code-settings.json (the revision
  whose `hooks` object lists 31 events, PreToolUse … DirectoryAdded; `$defs.hookMatcher`,
  `$defs.hookCommand`): `hooks` admits no other key, a matcher group and a command hook admit no
  other key, `timeout` is a number of seconds above 0.
- Codex: SchemaStore/schemastore src/schemas/json/codex-hooks.json (commit 26d28a1): `hooks` is
  required and the only top-level key, at least one event, groups and handlers at least one each,
  `timeout` an integer number of seconds. The schema lists ten events and admits others; Codex's
  hooks engine (openai/codex codex-rs/hooks) adds SessionEnd, StopFailure and Interrupt, the only
  other names agentwatch may write.
- Gemini CLI: google-gemini/gemini-cli schemas/settings.schema.json (commit 5411f11, version
  0.56.0-nightly): eleven events under `hooks`, each an array of `{matcher, hooks: [{name, type,
  command, description, timeout}]}`, `timeout` in milliseconds.

Each installed config is checked with the versions the harness CLIs report in these tests (all
events) and with no version (the events every build accepts).
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from agentwatch.cli import app

CLAUDE_EVENTS = [
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "Notification", "UserPromptSubmit",
    "Stop", "StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "Elicitation",
    "ElicitationResult", "TeammateIdle", "TaskCompleted", "Setup", "InstructionsLoaded", "CwdChanged", "FileChanged",
    "ConfigChange", "WorktreeCreate", "WorktreeRemove", "SessionStart", "SessionEnd", "PostToolBatch",
    "TaskCreated", "PermissionDenied", "UserPromptExpansion", "MessageDisplay", "DirectoryAdded",
]
CLAUDE_COMMAND_KEYS = ["type", "command", "timeout", "async", "asyncRewake", "shell", "if", "statusMessage", "args"]

CLAUDE = {
    "type": "object",
    "properties": {
        "hooks": {
            "type": "object",
            "propertyNames": {"enum": CLAUDE_EVENTS},
            "additionalProperties": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["hooks"],
                    "properties": {
                        "matcher": {"type": "string"},
                        "hooks": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["type", "command"],
                                "propertyNames": {"enum": CLAUDE_COMMAND_KEYS},
                                "properties": {
                                    "type": {"const": "command"},
                                    "command": {"type": "string", "minLength": 1},
                                    "timeout": {"type": "number", "exclusiveMinimum": 0},  # seconds
                                    "async": {"type": "boolean"},
                                },
                            },
                        },
                    },
                    "additionalProperties": False,
                },
            },
        },
    },
}

CODEX_EVENTS = [
    "SessionStart", "PreToolUse", "PermissionRequest", "PostToolUse", "PreCompact", "PostCompact",
    "UserPromptSubmit", "SubagentStart", "SubagentStop", "Stop",
]
CODEX_ENGINE_EVENTS = ["SessionEnd", "StopFailure", "Interrupt"]

CODEX = {
    "type": "object",
    "required": ["hooks"],
    "additionalProperties": False,
    "properties": {
        "hooks": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"enum": CODEX_EVENTS + CODEX_ENGINE_EVENTS},
            "additionalProperties": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["hooks"],
                    "properties": {
                        "matcher": {"type": "string"},
                        "hooks": {
                            "type": "array",
                            "minItems": 1,
                            "items": {
                                "type": "object",
                                "required": ["type", "command"],
                                "properties": {
                                    "type": {"const": "command"},
                                    "command": {"type": "string", "minLength": 1},
                                    "timeout": {"type": "integer", "minimum": 0},  # seconds
                                    "async": {"type": "boolean"},
                                    "statusMessage": {"type": "string"},
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}

GEMINI_EVENTS = [
    "BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "Notification", "SessionStart", "SessionEnd",
    "PreCompress", "BeforeModel", "AfterModel", "BeforeToolSelection",
]

GEMINI = {
    "type": "object",
    "properties": {
        "hooks": {
            "type": "object",
            "propertyNames": {"enum": GEMINI_EVENTS},
            "additionalProperties": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "matcher": {"type": "string"},
                        "hooks": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "propertyNames": {"enum": ["name", "type", "command", "description", "timeout"]},
                                "properties": {
                                    "name": {"type": "string"},
                                    "type": {"const": "command"},
                                    "command": {"type": "string"},
                                    "description": {"type": "string"},
                                    # milliseconds: a value under a second is a seconds value in the wrong unit
                                    "timeout": {"type": "number", "minimum": 1000},
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}

SCHEMAS = {"claude-code": CLAUDE, "codex": CODEX, "gemini-cli": GEMINI}
FILES = {"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini-cli": ".gemini/settings.json"}
VERSIONS = {"claude": "2.1.240 (Claude Code)", "codex": "codex-cli 0.152.1", "gemini": "0.56.0"}


@pytest.fixture
def home(isolated_env, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return Path(isolated_env)


def with_clis(tmp_path: Path, monkeypatch, outputs: dict[str, str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for program, output in outputs.items():
        (bin_dir / program).write_text(f"#!/bin/sh\nprintf '%s\\n' {shlex.quote(output)}\n")
        (bin_dir / program).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir) if not outputs else f"{bin_dir}:{os.environ.get('PATH', '')}")


@pytest.mark.parametrize("harness", sorted(SCHEMAS))
@pytest.mark.parametrize("versions", ["current", "unknown"])
def test_installed_config_has_the_published_structure(harness, versions, home, tmp_path, monkeypatch):
    with_clis(tmp_path, monkeypatch, VERSIONS if versions == "current" else {})
    result = CliRunner().invoke(app, ["install", harness])
    assert result.exit_code == 0, result.output
    doc = json.loads((home / FILES[harness]).read_text())
    validator = jsonschema.Draft202012Validator(SCHEMAS[harness])
    assert [e.message for e in validator.iter_errors(doc)] == []


@pytest.mark.parametrize("harness", sorted(SCHEMAS))
def test_the_schemas_reject_what_the_harnesses_would(harness):
    """The test's schemas are not vacuous: each refuses an unknown event and a wrong timeout unit."""
    validator = jsonschema.Draft202012Validator(SCHEMAS[harness])
    # Claude: seconds above 0; Codex: a whole number of seconds; Gemini: milliseconds, not seconds
    timeout = {"claude-code": 0, "codex": 10.5, "gemini-cli": 10}[harness]
    handler = {"type": "command", "command": "true", "timeout": timeout}
    bad_timeout = {"hooks": {"SessionStart": [{"hooks": [handler]}]}}
    unknown_event = {"hooks": {"OnEverything": [{"hooks": [{"type": "command", "command": "true"}]}]}}
    for doc in (bad_timeout, unknown_event):
        assert list(validator.iter_errors(doc)) != [], doc
    if harness == "claude-code":  # additionalProperties false on the command hook
        extra = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true", "onFailure": "block"}]}]}}
        assert list(validator.iter_errors(extra)) != []
