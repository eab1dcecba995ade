"""Reading a harness's version from what its CLI prints for --version."""

from __future__ import annotations

import pytest

from agentwatch.install import versions


@pytest.mark.parametrize("printed,version", [
    ("2.1.119 (Claude Code)", (2, 1, 119)),
    ("codex-cli 0.152.1", (0, 152, 1)),
    ("0.56.0-nightly.20260806.g761f604c1", (0, 56, 0)),
    ("3.18.25\n4a1b2c3d\nx64", (3, 18, 25)),
    ("GitHub Copilot CLI 1.0", (1, 0, 0)),
    ("build 20260806 of tool 1.2.3", (1, 2, 3)),
    ("2025.08.25-896bbe1", None),  # cursor-agent: a date, not a release number
    ("2026.01.09-1a2b3c4 (cursor 2.3.35)", (2, 3, 35)),
    ("no version here", None),
    ("", None),
])
def test_the_first_dotted_number_is_the_version(printed, version):
    assert versions.parse(printed) == version


def test_a_program_that_fails_or_is_missing_gives_no_version(tmp_path, monkeypatch):
    (tmp_path / "claude").write_text("#!/bin/sh\necho 2.1.200\nexit 3\n")
    (tmp_path / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert versions.version_of("claude-code") is None  # exits non-zero
    assert versions.version_of("codex") is None  # not on PATH
    (tmp_path / "codex").write_text("#!/bin/sh\necho codex-cli 0.150.0\n")
    (tmp_path / "codex").chmod(0o755)
    assert versions.version_of("codex") == ((0, 150, 0), str(tmp_path / "codex"))


def test_claude_code_gates_are_the_first_changelog_entry_naming_each_event():
    """Each gated event and its version, as quoted from the harness's own changelogs."""
    import json
    from pathlib import Path

    from agentwatch.install.harnesses import CLAUDE_CODE

    quoted = json.loads((Path(__file__).parent / "fixtures/gates/claude-code.json").read_text())
    assert [(event, versions.show(since)) for event, since in CLAUDE_CODE.gated] == [
        (g["event"], g["since"]) for g in quoted["gates"]
    ]
    # PostToolUseFailure: the Python SDK release that added it bundles CLI 2.1.27, not 2.1.119
    assert dict(CLAUDE_CODE.gated)["PostToolUseFailure"] == (2, 1, 27)


def test_cursor_is_gated_on_the_editor_never_on_the_cli_agents_date(tmp_path, monkeypatch):
    """cursor-agent prints dates (2025.08.25-…); the editor prints `X.Y.Z`, its commit and arch."""
    agent = tmp_path / "cursor-agent"
    agent.write_text("#!/bin/sh\necho 2025.08.25-896bbe1\n")
    agent.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert versions.version_of("cursor") is None  # the editor is not installed: unknown, not 2025.8.25
    assert versions.other_readers("cursor") == [
        "cursor-agent 2025.08.25-896bbe1 also reads this file; its versions are its own, so the events are "
        "gated on cursor --version"]
    editor = tmp_path / "cursor"
    editor.write_text("#!/bin/sh\nprintf '1.7.0\\n9b5c1e2\\nx64\\n'\n")
    editor.chmod(0o755)
    assert versions.version_of("cursor") == ((1, 7, 0), str(editor))
