"""What the harness configs `install` wrote hold now, against what it wrote (docs/install.md, "Attestation").

For each remembered install (manifest.py) one look reads the config file and
the harness's related files and reports:

- the digest of the agentwatch entries found there (per harness and scope),
- every setting that changes where or whether the hook delivers: an `env`
  override of AGENTWATCH_SOCKET or AGENTWATCH_SPOOL (in the settings' `env`
  or on the hook's command line), a switch that turns hooks off, a matcher
  that leaves tools out;
- named findings: `hook_removed` (an event's entry is gone, or the file is),
  `hook_changed` (the entry is there but differs), `hook_narrowed` (its matcher
  no longer matches every tool), `hook_redirected` (the delivery is pointed
  elsewhere), `hooks_disabled` (a switch turns the hooks off),
  `hook_config_unreadable` (the file cannot be read or parsed).

Nothing here writes; a look costs a read and a JSON parse per file.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from agentwatch.store.chain import canonical_json

from .manifest import Installed

HOOK_MARK = "agentwatch/hook.py"
REDIRECT_VARS = ("AGENTWATCH_SOCKET", "AGENTWATCH_SPOOL")
# Matchers that select every tool, per harness convention ("" and "*" in Claude Code and Codex).
ALL_TOOLS = ("", "*", ".*")
MAX_CONFIG_BYTES = 4 << 20
FINDING_KINDS = ("hook_removed", "hook_changed", "hook_narrowed", "hook_redirected", "hooks_disabled",
                 "hook_config_unreadable")


@dataclass
class HookFinding:
    kind: str
    harness: str
    scope: str
    path: str
    detail: str
    event: Optional[str] = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "harness": self.harness, "scope": self.scope, "path": self.path,
                "event": self.event, "detail": self.detail}

    def key(self) -> str:
        return f"{self.kind}:{self.harness}:{self.scope}:{self.path}:{self.event or ''}"


@dataclass
class InstallState:
    """One install as it is now."""

    harness: str
    scope: str
    path: str
    digest: Optional[str]  # sha256 of the agentwatch entries found (None: file unreadable)
    expected_digest: str
    settings: dict[str, Any] = field(default_factory=dict)
    findings: list[HookFinding] = field(default_factory=list)

    @property
    def state(self) -> str:
        return "ok" if not self.findings else self.findings[0].kind

    def to_json(self) -> dict:
        return {"harness": self.harness, "scope": self.scope, "path": self.path, "state": self.state,
                "digest": self.digest, "expected_digest": self.expected_digest, "settings": self.settings,
                "findings": [f.to_json() for f in self.findings]}


def digest_of(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(value)).hexdigest()


def inspect_all(entries: list[Installed]) -> list[InstallState]:
    return [inspect(e) for e in entries]


def inspect(entry: Installed) -> InstallState:
    if entry.kind == "scripts":
        return _inspect_scripts(entry)
    return _inspect_json(entry)


def _finding(entry: Installed, kind: str, detail: str, event: Optional[str] = None) -> HookFinding:
    return HookFinding(kind, entry.harness, entry.scope, entry.path, detail, event)


def _read_json(path: str) -> tuple[Optional[dict], Optional[str]]:
    """(document, problem): (None, None) when the file does not exist."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot read: {exc.strerror or exc}"
    if len(data) > MAX_CONFIG_BYTES:
        return None, f"larger than {MAX_CONFIG_BYTES} bytes"
    if not data.strip():
        return {}, None
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as exc:
        return None, f"not valid JSON ({type(exc).__name__})"
    if not isinstance(doc, dict):
        return None, "top level is not an object"
    return doc, None


def _ours(handler: Any) -> bool:
    return isinstance(handler, dict) and any(
        isinstance(v, str) and HOOK_MARK in v for k, v in handler.items() if k in ("command", "bash", "powershell"))


def _handlers(entry: Any, grouped: bool) -> list:
    if grouped and isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
        return entry["hooks"]
    return [entry]


def _found(doc: dict, grouped: bool) -> dict[str, list]:
    """{event: [entries holding an agentwatch handler]}."""
    hooks = doc.get("hooks")
    out: dict[str, list] = {}
    if not isinstance(hooks, dict):
        return out
    for event, entries in hooks.items():
        if isinstance(entries, list):
            mine = [e for e in entries if any(_ours(h) for h in _handlers(e, grouped))]
            if mine:
                out[event] = mine
    return out


def _inspect_json(entry: Installed) -> InstallState:
    state = InstallState(entry.harness, entry.scope, entry.path, None, digest_of(entry.expected))
    doc, problem = _read_json(entry.path)
    if problem is not None:
        state.findings.append(_finding(entry, "hook_config_unreadable", f"{entry.path}: {problem}"))
        return state
    if doc is None:
        state.digest = digest_of({})
        state.findings.append(_finding(entry, "hook_removed", f"{entry.path} no longer exists"))
        return state
    found = _found(doc, entry.grouped)
    state.digest = digest_of(found)
    for event, want in entry.expected.items():
        have = found.get(event, [])
        if not have:
            state.findings.append(_finding(entry, "hook_removed", f"no agentwatch entry for {event}", event))
            continue
        if any(h == want for h in have):
            continue
        narrowed = [h for h in have if isinstance(h, dict) and isinstance(h.get("matcher"), str)
                    and h.get("matcher") not in ALL_TOOLS and want.get("matcher", "") in ALL_TOOLS]
        if narrowed:
            state.findings.append(_finding(entry, "hook_narrowed",
                                           f"{event} runs only for tools matching {narrowed[0]['matcher']!r}", event))
            continue
        redirect = _command_redirect(have, entry.grouped)
        if redirect:
            state.findings.append(_finding(entry, "hook_redirected", f"{event}'s command sets {redirect}", event))
            continue
        state.findings.append(_finding(entry, "hook_changed", f"{event}'s entry differs from the one installed",
                                       event))
    for path in (entry.path, *entry.related):
        other = doc if path == entry.path else _read_json(path)[0]
        if other:
            _settings(entry, path, other, state)
    return state


def _command_redirect(entries: list, grouped: bool) -> Optional[str]:
    for e in entries:
        for h in _handlers(e, grouped):
            if not _ours(h):
                continue
            for key in ("command", "bash"):
                text = h.get(key)
                if isinstance(text, str):
                    for var in REDIRECT_VARS:
                        if f"{var}=" in text:
                            return var
            env = h.get("env")
            if isinstance(env, dict):
                for var in REDIRECT_VARS:
                    if var in env:
                        return var
    return None


def _settings(entry: Installed, path: str, doc: dict, state: InstallState) -> None:
    """Settings in `doc` (the config or a related file) that redirect or switch off delivery."""
    env = doc.get("env")
    if isinstance(env, dict):
        for var in REDIRECT_VARS:
            if var in env:
                value = env[var]
                state.settings.setdefault("env", {})[var] = value
                state.findings.append(_finding(entry, "hook_redirected",
                                               f"{path} sets {var}={value!s} for every hook"))
    for switch in ("disableAllHooks", "allowManagedHooksOnly"):  # Claude Code (the second: managed only)
        if doc.get(switch) is True:
            state.settings[switch] = True
            state.findings.append(_finding(entry, "hooks_disabled", f"{path} sets {switch}: true"))
    hooks_config = doc.get("hooksConfig")  # Gemini CLI
    if isinstance(hooks_config, dict):
        if hooks_config.get("enabled") is False:
            state.settings["hooksConfig.enabled"] = False
            state.findings.append(_finding(entry, "hooks_disabled", f"{path} sets hooksConfig.enabled: false"))
        disabled = hooks_config.get("disabled")
        if isinstance(disabled, list) and "agentwatch" in disabled:
            state.settings["hooksConfig.disabled"] = disabled
            state.findings.append(_finding(entry, "hooks_disabled", f"{path} lists agentwatch in hooksConfig.disabled"))
    tools = doc.get("tools")
    if isinstance(tools, dict) and tools.get("enableHooks") is False:
        state.settings["tools.enableHooks"] = False
        state.findings.append(_finding(entry, "hooks_disabled", f"{path} sets tools.enableHooks: false"))


def _inspect_scripts(entry: Installed) -> InstallState:
    state = InstallState(entry.harness, entry.scope, entry.path, None, digest_of(entry.expected))
    found: dict[str, str] = {}
    for event in entry.expected:
        p = os.path.join(entry.path, event)
        try:
            with open(p, "rb") as fh:
                found[event] = "sha256:" + hashlib.sha256(fh.read(MAX_CONFIG_BYTES)).hexdigest()
            executable = os.access(p, os.X_OK)
        except FileNotFoundError:
            continue
        except OSError as exc:
            state.findings.append(_finding(entry, "hook_config_unreadable", f"{p}: {exc.strerror or exc}", event))
            continue
        if not executable:
            state.findings.append(_finding(entry, "hooks_disabled", f"{p} is not executable", event))
    state.digest = digest_of(found)
    for event, want in entry.expected.items():
        if event not in found:
            state.findings.append(_finding(entry, "hook_removed", f"no hook file for {event}", event))
        elif found[event] != want:
            with open(os.path.join(entry.path, event), "rb") as fh:
                text = fh.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")
            kind = "hook_redirected" if any(f"{v}=" in text for v in REDIRECT_VARS) else "hook_changed"
            state.findings.append(_finding(entry, kind, f"the hook file for {event} differs from the one installed",
                                           event))
    return state


def document(states: list[InstallState], problem: Optional[str] = None) -> dict:
    """The `config` row's body: every install's state, and every finding flattened."""
    doc: dict[str, Any] = {
        "installs": [s.to_json() for s in states],
        "digest": digest_of([[s.harness, s.scope, s.path, s.digest] for s in states]),
        "findings": [f.to_json() for s in states for f in s.findings],
    }
    if problem is not None:
        # What install wrote cannot be read: nothing can be compared, and that is itself a finding.
        doc["manifest_problem"] = problem
        doc["findings"].append(HookFinding("hook_config_unreadable", "agentwatch", "manifest", "", problem).to_json())
    return doc
