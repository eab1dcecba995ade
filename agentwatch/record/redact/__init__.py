"""Redaction before store: what a record document may keep, by privacy mode.

Every path to the store (daemon, spool drain, import) serializes a record
through `Policy.encode`, so a secret is masked before its row is written. The
modes, weakest to strongest (docs/redaction.md):

- ``full``: nothing is masked.
- ``redacted`` (default): secrets in any string, dict keys included, are
  replaced by ``[REDACTED:<kind>:hmac-sha256:<12 hex>]``; the same secret gives
  the same mask under one salt, so occurrences correlate without the secret.
- ``hashed``: as redacted, and every string inside the content fields (raw
  payload, tool input and response, argv, decision reason) becomes a salted
  digest; structure, keys, numbers and booleans stay.
- ``metadata-only``: the content fields are dropped (their size and salted
  digest are kept under ``privacy.dropped``); only the normalized metadata stays.

The detection rules are data (`rules.toml`, compiled by `rules`); this module
applies them to a record document, structure included (a value under a secret
name is masked whole, whatever its type), and owns the salt.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentwatch import paths, platform_layer, safefs
from agentwatch.errors import UsageError
from agentwatch.record.redact import commands, formats, rules
from agentwatch.record.redact.rules import MASK_PREFIX, benign_value
from agentwatch.store.chain import canonical_json

FULL, REDACTED, HASHED, METADATA_ONLY = "full", "redacted", "hashed", "metadata-only"
MODES = (FULL, REDACTED, HASHED, METADATA_ONLY)  # weakest to strongest; a project may only move right
STRICTNESS = {mode: rank for rank, mode in enumerate(MODES)}

SALT_FILE_NAME = "redaction.salt"
MASK_HEX = 12  # correlation, not identification: 48 bits
HASH_HEX = 32  # hashed-mode values and dropped-content digests: 128 bits

# Fields holding free-form content (what the harness or model said or did).
# hashed mode hashes their strings; metadata-only drops them.
CONTENT_FIELDS: tuple[tuple[str, ...], ...] = (
    ("raw",), ("raw_b64",), ("argv",), ("tool", "input"), ("tool", "response"), ("decision", "reason"),
    ("prompt", "text"),
)
# Plain digests of content, and the content each covers. Unkeyed, a digest lets anyone
# confirm a guess of the content ("is the password hunter2?"), so where that content was
# masked (redacted) or is not stored (hashed, metadata-only) it is re-keyed with the salt.
# Equal content still gives equal digests, so pre/post pairing by input digest holds.
CONTENT_DIGESTS: dict[tuple[str, ...], tuple[tuple[str, ...], ...]] = {
    ("raw_sha256",): (("raw",), ("raw_b64",)),
    ("tool", "input_sha256"): (("tool", "input"),),
    ("tool", "response_sha256"): (("tool", "response"),),
    ("prompt", "sha256"): (("raw",), ("raw_b64",)),  # the prompt text lives in raw
}
# What metadata-only keeps: top-level keys, and for objects the sub-keys (None = all).
METADATA_FIELDS: dict[str, frozenset | None] = {
    "schema": None, "harness": None, "harness_version": None, "event": None, "session_id": None,
    "session_synthesized": None, "turn_id": None, "agent": None, "cwd": None, "workspace_roots": None,
    "transcript_path": None, "model": None, "permission_mode": None, "ts_harness": None, "client": None,
    "client_claimed": None, "via": None, "raw_moved": None,
    "hook": None, "payload_error": None, "normalize_error": None, "orig_bytes": None, "truncated": None,
    "raw_sha256": None,
    "tool": frozenset({"name", "category", "call_id", "mcp_server", "input_sha256", "response_sha256",
                       "is_error", "duration_ms", "exit_code"}),
    "prompt": frozenset({"sha256", "length"}),
    "decision": frozenset({"value", "source"}),
}


class SaltError(UsageError):
    """The salt file is unusable (unreadable, malformed, or readable by others)."""


@dataclass(frozen=True)
class Policy:
    """How to redact record documents. Immutable; safe to share between threads."""

    mode: str = REDACTED
    salt: bytes = field(default=b"", repr=False)
    extra_patterns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown privacy mode {self.mode!r} (expected one of {', '.join(MODES)})")
        if self.mode != FULL and len(self.salt) < 16:
            raise ValueError("a redaction salt of at least 16 bytes is required")
        extra = re.compile("|".join(f"(?:{p})" for p in self.extra_patterns)) if self.extra_patterns else None
        if extra is not None and len(self.extra_patterns) == 1:
            extra = re.compile(self.extra_patterns[0])  # keeps a single pattern's `secret` group
        object.__setattr__(self, "_extra", extra)
        # Strings seen to need no masking (keys, event names, paths recur in every record).
        # Only clean strings are kept, so the cache never holds a secret.
        object.__setattr__(self, "_clean", set())
        object.__setattr__(self, "_plain_keys", set())  # object keys with nothing to judge (clean, not secret names)

    # -- the masks ---------------------------------------------------------------------------
    def keyed(self, data: str | bytes, hex_chars: int = HASH_HEX) -> str:
        """``hmac-sha256:<hex>`` of data under this policy's salt."""
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        return "hmac-sha256:" + hmac.digest(self.salt, data, "sha256").hex()[:hex_chars]

    def mask(self, kind: str, secret: str) -> str:
        return f"{MASK_PREFIX}{kind}:{self.keyed(secret, MASK_HEX)}]"

    def redact_text(self, text: str, path: str = "") -> str:
        """One string with every secret masked (the `redacted` rules, whatever the mode).

        `path` is the file the text came from, when the record names one: it tells the
        format of credential files (`.htpasswd`, `.pgpass`, `master.key`) and of config files.
        """
        kind = formats.by_path(path) if path else ""
        if kind in formats.PATH_FORMATS:
            return rules.builtin().redact(text, self.mask, self._extra, path)  # secrets without names
        clean = self._clean
        key: Any = (kind, text) if kind else text  # a config file's text is read differently from code
        if key in clean:
            return text
        ruleset = rules.builtin()
        if self._extra is None and not ruleset.suspicious(text, json=False):
            out = text  # the format layer needs a secret name, which the fast path finds
        else:
            out = ruleset.redact(text, self.mask, self._extra, path if kind else "")
        if out == text and len(text) <= 256:
            if len(clean) >= 8192:
                clean.clear()
            clean.add(key)
        return out

    # -- whole documents -----------------------------------------------------------------------
    def encode(self, doc: dict) -> bytes:
        """Canonical JSON of the document as this policy lets it be stored.

        Equal to ``canonical_json(self.apply(doc))``. The common case costs one
        canonical_json plus a prefilter scan of its bytes: when nothing in the
        bytes could be a secret, the bytes are the answer. Raises ValueError
        like canonical_json for values JSON cannot carry.
        """
        if self.mode == FULL:
            return canonical_json(doc)
        if self.mode != REDACTED:
            doc = self._restrict(doc)
        data, view = encode_with_scan_view(doc)
        if (self._extra is None and "raw_b64" not in doc
                and not rules.builtin().suspicious(view)
                and not any(marker in view for marker in formats.PATH_MARKERS)
                and not _shows_secret(doc)):
            return data
        return canonical_json(self._redact_doc(doc))

    def apply(self, doc: dict) -> dict:
        """A new document with this policy applied (the input is not modified)."""
        if self.mode == FULL:
            return doc
        if self.mode != REDACTED:
            doc = self._restrict(doc)
        return self._redact_doc(doc)

    def _redact_doc(self, doc: dict) -> dict:
        out = self._walk(doc, False, {}, _doc_path(doc))
        if _shows_secret(doc):
            out = self._mask_output(out)
        raw_b64 = doc.get("raw_b64")
        if isinstance(raw_b64, str):
            out["raw_b64"] = self._redact_b64(raw_b64)
        if out != doc:
            self._rekey_digests(out, changed_from=doc)  # plain digests of masked content confirm guesses
        return out

    def _walk(self, value: Any, sensitive: bool | object, seen: dict, path: str = "") -> Any:
        """The document with every string redacted; under a secret name, a value is masked whole."""
        if isinstance(value, str):
            if sensitive and not benign_value(value):
                return self.mask(SECRET_FIELD, value)
            return self.redact_text(value, path) if len(value) >= _MIN_LEN else value
        if isinstance(value, (dict, list)):
            if sensitive and value:
                # {"credentials": {...}}, {"tokens": [...]}: the whole value is the secret
                return self.mask(SECRET_FIELD, canonical_json(value).decode("utf-8"))
            # tool.input and tool.response are the very objects inside raw: walk each once.
            key = id(value)
            done = seen.get(key)
            if done is None:
                if isinstance(value, dict):
                    done = {}
                    pair = _secret_pair_values(value)
                    plain = self._plain_keys
                    for k, v in value.items():
                        if k in plain and not pair:
                            # a key seen before: clean, no secret name, no key name (every record repeats them)
                            done[k] = self._walk(v, False, seen, path) if isinstance(v, (str, dict, list)) else v
                            continue
                        name = self.redact_text(k) if len(k) >= _MIN_LEN else k
                        if name == k and not _sensitive_key(k) and not rules.builtin().key_name(k) and (
                                k.lower() not in rules.PAIR_PASSWORD_NAMES):
                            if len(plain) >= 8192:
                                plain.clear()
                            plain.add(k)
                        secret = k in pair or _sensitive_key(k) or _key_value(k, v) or rules.pair_password(k, v)
                        done[name] = self._walk(v, secret, seen, path)
                        if done[name] is v and _NUMERIC_NAME.search(k) and type(v) in (int, float) and (
                                k in pair or _sensitive_key(k)):
                            done[name] = self._walk(v, _NUMERIC, seen)
                else:
                    done = [self._walk(v, False, seen, path) for v in value]
                seen[key] = done
            return done
        if sensitive is _NUMERIC and isinstance(value, (int, float)) and not isinstance(value, bool):
            return self.mask(SECRET_FIELD, str(value))  # {"password": 123456}: a number can be the secret too
        return value

    def _mask_output(self, doc: dict) -> dict:
        """The document with the call's output masked whole (`_shows_secret`): every string of the
        record's `tool.response` and of the payload's response, and the same strings wherever
        else the payload repeats them (a harness that nests its result: Cline's `postToolUse.result`)."""
        shown: set[str] = set()
        tool, raw = doc.get("tool"), doc.get("raw")
        if isinstance(tool, dict) and "response" in tool:
            _strings_in(tool["response"], shown)
        if isinstance(raw, dict):
            for key in _RESPONSE_KEYS:
                if key in raw:
                    _strings_in(raw[key], shown)
        shown = {v for v in shown if v.strip() and not rules.MASK_RE.fullmatch(v.strip())}
        if not shown:
            return doc
        out = dict(doc)
        if isinstance(tool, dict) and "response" in tool:
            out["tool"] = {**tool, "response": self._mask_strings(tool["response"], shown)}
        if isinstance(raw, (dict, list)):
            out["raw"] = self._mask_strings(raw, shown)
        return out

    def _mask_strings(self, value: Any, shown: set[str]) -> Any:
        if isinstance(value, str):
            return self.mask(COMMAND_OUTPUT, value) if value in shown else value
        if isinstance(value, dict):
            return {k: self._mask_strings(v, shown) for k, v in value.items()}
        if isinstance(value, list):
            return [self._mask_strings(v, shown) for v in value]
        return value

    def _redact_b64(self, text: str) -> str:
        """Bytes that are not UTF-8, carried as base64: redact their Latin-1 reading."""
        import base64
        import binascii

        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return self.redact_text(text)
        latin = raw.decode("latin-1")
        redacted = self.redact_text(latin)
        return text if redacted == latin else base64.b64encode(redacted.encode("latin-1")).decode("ascii")

    def _rekey_digests(self, doc: dict, changed_from: dict | None = None) -> None:
        """Re-key plain content digests: all of them, or those whose content differs from `changed_from`."""
        for path, covers in CONTENT_DIGESTS.items():
            parent = _parent(doc, path)
            value = parent.get(path[-1]) if parent is not None else None
            if parent is None or not (isinstance(value, str) and value.startswith("sha256:")):
                continue
            if changed_from is None or any(_get(doc, c) != _get(changed_from, c) for c in covers):
                parent[path[-1]] = self.keyed(value)

    def _restrict(self, doc: dict) -> dict:
        """hashed / metadata-only: the structural part, before the redaction rules run."""
        out = _copy_path_parents(doc)
        if self.mode == HASHED:
            for path in CONTENT_FIELDS:
                parent = _parent(out, path)
                if parent is not None and path[-1] in parent:
                    parent[path[-1]] = self._hash_strings(parent[path[-1]])
        else:
            dropped = {}
            kept: dict[str, Any] = {}
            for key, value in out.items():
                allowed = METADATA_FIELDS.get(key, False)
                if allowed is False:
                    dropped[key] = self._summary(value)
                elif allowed is not None and isinstance(value, dict):
                    kept[key] = {k: v for k, v in value.items() if k in allowed}
                    for k, v in value.items():
                        if k not in allowed:
                            dropped[f"{key}.{k}"] = self._summary(v)
                else:
                    kept[key] = value
            out = kept
        out["privacy"] = {"mode": self.mode, "dropped": dropped} if self.mode == METADATA_ONLY else {"mode": self.mode}
        self._rekey_digests(out)
        return out

    def _hash_strings(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.keyed(value)
        if isinstance(value, dict):
            return {k: self._hash_strings(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._hash_strings(v) for v in value]
        return value

    def _summary(self, value: Any) -> dict:
        data = canonical_json(value)
        return {"bytes": len(data), "digest": self.keyed(data)}


_MIN_LEN = 5  # the shortest string a rule can change ("pwd=x")
SECRET_FIELD = "secret_field"
_NUMERIC = object()  # `sensitive` for a number under a password-like name (token counts stay numbers)
_NUMERIC_NAME = re.compile(r"(?i)pass|pwd|secret|pin")
# Name/value pairs: Kubernetes and ECS env ({"name": "DB_PASSWORD", "value": ...}), SSM
# parameters ({"Name": "/prod/db/password", "Value": ...}), CloudFormation parameters.
_PAIR_NAME_KEYS = frozenset({"name", "key", "parametername", "parameterkey", "variable", "var", "param", "option",
                             "optionname", "setting", "envname", "env"})
_PAIR_VALUE_KEYS = frozenset({"value", "parametervalue", "default", "defaultvalue", "secretvalue", "val"})


def _sensitive_key(key: str) -> bool:
    return rules.builtin().secret_name(key)


def _key_value(key: str, value: Any) -> bool:
    """{"amplitude_key": "<key>"}: a name that says key (or names a known service) over a key-shaped string."""
    if not isinstance(value, str) or not rules.KEY_VALUE_MIN <= len(value) <= rules.KEY_VALUE_MAX:
        return False  # most values: not a string, or too short or long to be a key (checked first: it is cheap)
    ruleset = rules.builtin()
    keyed = ruleset.key_name(key)
    return bool(keyed) and ruleset.key_shaped(value, keyed == 2)


def _secret_pair_values(obj: dict) -> frozenset:
    """The keys of `obj` that hold a secret because a sibling names it ({"name": "API_TOKEN", "value": ...})."""
    if len(obj) > 8 or not any(k.lower() in _PAIR_VALUE_KEYS for k in obj):
        return frozenset()
    named = any(isinstance(v, str) and k.lower() in _PAIR_NAME_KEYS and formats.pair_name(rules.builtin(), v)
                for k, v in obj.items())
    return frozenset(k for k in obj if k.lower() in _PAIR_VALUE_KEYS) if named else frozenset()


_MISSING = object()
_PATH_KEYS = ("file_path", "filePath", "path", "notebook_path", "filename", "absolute_path")
_CAT = re.compile(r"^\s*(?:cat|head|tail|less|more|bat|type|Get-Content)\s+(?:-[A-Za-z]+\s+)*([^\s|;&<>]+)\s*$")


def _doc_path(doc: dict) -> str:
    """The file a record's text came from, when its tool input names one (a Read, a write, `cat FILE`)."""
    for holder in (doc.get("raw"), doc.get("tool")):
        if not isinstance(holder, dict):
            continue
        for key in ("tool_input", "input", "toolInput", "args", "arguments"):
            inp = holder.get(key)
            if not isinstance(inp, dict):
                continue
            for k in _PATH_KEYS:
                v = inp.get(k)
                if isinstance(v, str) and 0 < len(v) < 4096:
                    return v if formats.by_path(v) else ""
            cmd = inp.get("command")
            if isinstance(cmd, str) and len(cmd) < 4096:
                m = _CAT.match(cmd)
                if m:
                    v = m.group(1).strip("\"'")
                    return v if formats.by_path(v) else ""
    return ""


# Where a call's output sits: a hook payload's response (Claude Code's `tool_response`, Gemini CLI's
# `tool_response`, Cursor's `output`, ...) and the record's own `tool.response`.
_RESPONSE_KEYS = ("tool_response", "toolResponse", "response", "output", "result", "tool_output")
COMMAND_OUTPUT = "command_output"


# Members of a response that describe the call, not its output (MCP's content `type`, Copilot's
# `resultType`, OpenHands' echo of the `command`).
_RESPONSE_META = frozenset({"type", "resultType", "status", "kind", "command", "cwd", "mimeType", "name"})


def _strings_in(value: Any, out: set[str], depth: int = 0) -> None:
    """The strings of a response, but for the members that describe the call (`_RESPONSE_META`)."""
    if isinstance(value, str):
        out.add(value)
    elif depth < 64 and isinstance(value, dict):
        for k, v in value.items():
            if k not in _RESPONSE_META:
                _strings_in(v, out, depth + 1)
    elif depth < 64 and isinstance(value, list):
        for v in value:
            _strings_in(v, out, depth + 1)


def _shows_secret(doc: dict) -> bool:
    """Does the call run a command whose output is a secret (commands.toml, `[[prints]]`)?"""
    for holder in (doc.get("raw"), doc.get("tool")):
        if not isinstance(holder, dict):
            continue
        for key in ("tool_input", "input", "toolInput", "args", "arguments"):
            inp = holder.get(key)
            cmd = inp.get("command") if isinstance(inp, dict) else None
            if isinstance(cmd, list) and all(isinstance(w, str) for w in cmd):
                cmd = " ".join(cmd)  # an argument vector (`["bash", "-lc", "gh auth token"]`)
            if isinstance(cmd, str) and commands.prints_secret(cmd):
                return True
    return False


def _get(doc: dict, path: tuple[str, ...]) -> Any:
    parent = _parent(doc, path)
    return parent.get(path[-1], _MISSING) if parent is not None else _MISSING


def _parent(doc: dict, path: tuple[str, ...]) -> dict | None:
    node: Any = doc
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _copy_path_parents(doc: dict) -> dict:
    """A copy deep enough that the structural edits never touch the caller's document."""
    out = dict(doc)
    for key in {p[0] for p in (*CONTENT_FIELDS, *CONTENT_DIGESTS) if len(p) > 1}:
        if isinstance(out.get(key), dict):
            out[key] = dict(out[key])
    return out


# --- the fast path's view of a document ----------------------------------------------------------
# tool.input and tool.response are most often the very objects inside raw (the adapter hands
# them on), so their text is in the document twice; the prefilter need read it only once. The
# document is encoded with a placeholder string in their place: that is the text the prefilter
# scans. The stored bytes are that text with each placeholder replaced by the value's own
# canonical JSON, which does not depend on where it sits, so they are canonical_json(doc) byte
# for byte. A placeholder is made of characters no rule reads and is drawn per process, so no
# payload can aim at it; should one occur more than once, the document is encoded whole. Small
# values are simply scanned twice: the splice would cost more than the second scan.
_SHARED_TOOL_KEYS = ("input", "response")
_VIEW_MIN_CHARS = 512  # shared text (roughly: the values' top-level strings) worth a view
_PLACEHOLDER_SYMBOLS = "!#$%&()*;<>?[]^|"  # none is part of a word, a name, a flag or a URL


def _placeholder() -> str:
    return "".join(secrets.choice(_PLACEHOLDER_SYMBOLS) for _ in range(32))  # 128 bits


_PLACEHOLDERS = {key: _placeholder() for key in _SHARED_TOOL_KEYS}
_PLACEHOLDERS_JSON = {key: canonical_json(text) for key, text in _PLACEHOLDERS.items()}


def encode_with_scan_view(doc: dict) -> tuple[bytes, bytes]:
    """(canonical_json(doc), the text the prefilter must scan: the same, shared values once)."""
    tool, raw = doc.get("tool"), doc.get("raw")
    shared = ()
    if (type(tool) is dict and type(raw) is dict  # most events stop at the size test
            and _rough_len(tool.get("input")) + _rough_len(tool.get("response")) >= _VIEW_MIN_CHARS):
        in_raw = {id(v) for v in raw.values()}
        shared = [k for k in _SHARED_TOOL_KEYS
                  if isinstance(tool.get(k), (dict, list, str)) and id(tool[k]) in in_raw]
        if sum(_rough_len(tool[k]) for k in shared) < _VIEW_MIN_CHARS:
            shared = ()
    if not shared:
        data = canonical_json(doc)
        return data, data
    view = canonical_json({**doc, "tool": {**tool, **{k: _PLACEHOLDERS[k] for k in shared}}})
    data = view
    for key in shared:
        placeholder = _PLACEHOLDERS_JSON[key]
        if view.count(placeholder) != 1:
            data = canonical_json(doc)
            return data, data
        data = data.replace(placeholder, canonical_json(tool[key]), 1)
    return data, view


def _rough_len(value: Any) -> int:
    """The length of a value's own strings, one level down: enough to tell small from large."""
    kind = type(value)
    if kind is str:
        return len(value)
    if kind is dict:
        value = value.values()
    elif kind is not list:
        return 0
    size = 0
    for item in value:
        if type(item) is str:
            size += len(item)
    return size


def default_salt_file() -> Path:
    return paths.data_dir() / SALT_FILE_NAME


def load_salt(path: Path | str | None = None, *, create: bool = True) -> bytes:
    """The per-install salt: 32 random bytes, hex, in a 0600 file (created on first use).

    Refused when the file is readable or writable by group or others: with the
    salt, low-entropy masked secrets can be confirmed by guessing.
    """
    path = Path(path) if path is not None else default_salt_file()
    if create and not path.exists():
        safefs.private_dir(path.parent, "salt directory")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass  # another process made it first: read theirs
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
                f.flush()
                platform_layer.full_fsync(f.fileno())
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise SaltError(f"{path}: cannot read the redaction salt: {exc.strerror}") from None
    with os.fdopen(fd) as f:
        mode = os.fstat(f.fileno()).st_mode
        if stat.S_IMODE(mode) & 0o077:
            raise SaltError(f"{path}: redaction salt is accessible to other users; run: chmod 600 {path}")
        text = f.read().strip()
    try:
        salt = bytes.fromhex(text)
    except ValueError:
        raise SaltError(f"{path}: redaction salt must be hex (at least 32 hex digits)") from None
    if len(salt) < 16:
        raise SaltError(f"{path}: redaction salt must be hex (at least 32 hex digits)")
    return salt


_DEFAULT_POLICIES: dict[str, Policy] = {}


def default_policy() -> Policy:
    """`redacted` mode with the per-install salt: what `normalize.to_append` uses unless told."""
    path = default_salt_file()
    key = str(path)
    policy = _DEFAULT_POLICIES.get(key)
    if policy is None:
        policy = _DEFAULT_POLICIES[key] = Policy(REDACTED, load_salt(path))
    return policy


def validate_pattern(pattern: str) -> re.Pattern:
    """A user pattern must compile and must not match the empty string."""
    compiled = re.compile(pattern)
    if compiled.search("") is not None:
        raise ValueError("pattern matches the empty string")
    return compiled


# --- self-test ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SelfTestResult:
    ok: bool
    failures: tuple[str, ...]
    checked: int

    def as_dict(self) -> dict:
        return {"ok": self.ok, "failures": list(self.failures), "checked": self.checked}


def self_test(policy: Policy | None = None) -> SelfTestResult:
    """Run the built-in corpus of synthetic secrets through the redaction rules.

    Checks that every fake secret is masked with its kind, in a bare string and
    inside a record document (fast path and full walk agree); that every token
    and service rule of rules.toml masks a sample made from its own format; that
    secrets under secret names are masked whole at any depth and in name/value
    pairs; and that the benign look-alikes (digests, UUIDs, paths, ids, code) are
    left alone. Only the salt of `policy` is used: the built-in rules are tested,
    in `redacted` mode, without user patterns. The daemon runs it at start and
    reports it in health.
    """
    from agentwatch.record.redact.corpus import BENIGN, FORMAT_BENIGN, format_samples, rule_samples, secrets_corpus

    policy = Policy(REDACTED, policy.salt if policy and policy.salt else b"agentwatch-self-test-salt")
    failures: list[str] = []
    checked = 0

    def in_documents(label: str, secret: str, text: str) -> None:
        doc = {"raw": {"nested": [{"value": text}], text[:40]: "k"}, "tool": {"input": {"command": text}}}
        fast, slow = policy.encode(doc), canonical_json(policy.apply(doc))
        if fast != slow or secret.encode() in fast:
            failures.append(f"{label}: a record document was not redacted consistently")

    # Failures name the corpus entry, never its text: a report must not echo a secret.
    for i, (kind, secret, text) in enumerate(secrets_corpus()):
        checked += 1
        out = policy.redact_text(text)
        if secret in out:
            failures.append(f"secrets[{i}] ({kind}): the secret survived")
        elif f"{MASK_PREFIX}{kind}:" not in out:
            failures.append(f"secrets[{i}] ({kind}): masked under another kind")
        in_documents(f"secrets[{i}] ({kind})", secret, text)
    for rule_id, kind, secret, text in rule_samples():
        checked += 1
        out = policy.redact_text(text)
        if secret in out or f"{MASK_PREFIX}{kind}:" not in out:
            failures.append(f"rule {rule_id}: its sample was not masked as {kind}")
        in_documents(f"rule {rule_id}", secret, text)
    secret = "self-test-" + policy.keyed("structure", 16)
    for i, doc in enumerate(_structure_documents(secret)):
        checked += 1
        fast, slow = policy.encode(doc), canonical_json(policy.apply(doc))
        if fast != slow or secret.encode() in fast:
            failures.append(f"structure[{i}]: a value under a secret name was stored")
    for label, path, secret, text in format_samples():
        checked += 1
        doc = {"raw": {"tool_input": {"file_path": path} if path else {"command": text},
                       "tool_response": {"stdout": text}}}
        try:
            fast, slow = policy.encode(doc), canonical_json(policy.apply(doc))
        except Exception as exc:  # a broken layer is a failed self-test, never a crash at start
            failures.append(f"format {label}: the text layer failed ({type(exc).__name__})")
            continue
        if fast != slow or secret.encode() in fast:
            failures.append(f"format {label}: a secret in the text layer's format was stored")
    for row in commands.print_table():
        checked += 1
        doc = {"raw": {"tool_name": "Bash", "tool_input": {"command": commands.sample_command(row)},
                       "tool_response": {"stdout": secret + "\n", "stderr": ""}}}
        fast, slow = policy.encode(doc), canonical_json(policy.apply(doc))
        if fast != slow or secret.encode() in fast:
            failures.append(f"prints {row.tool} {' '.join(row.subcommand)}: the output of a command that prints a secret was stored")
    for i, text in enumerate(BENIGN + FORMAT_BENIGN):
        checked += 1
        if policy.redact_text(text) != text:
            failures.append(f"benign[{i}]: masked though it holds no secret")
    return SelfTestResult(not failures, tuple(failures), checked)


def _structure_documents(secret: str) -> tuple[dict, ...]:
    """Secrets a name points at, in the shapes harness payloads carry them."""
    return (
        {"raw": {"tool_input": {"password": {"value": secret}}}},
        {"raw": {"config": {"credentials": {"user": "alice", "key": secret}}}},
        {"raw": {"api_keys": [secret]}, "tool": {"input": {"secrets": {"a": [secret]}}}},
        {"raw": {"containerDefinitions": [{"environment": [{"name": "DB_PASSWORD", "value": secret}]}]}},
        {"raw": {"Parameter": {"Name": "/prod/db/password", "Type": "SecureString", "Value": secret}}},
        {"raw": {"env": {"API-KEY": secret, "apiKey": secret, "Auth": secret}}},
    )
