"""Configuration: defaults, a TOML file, AGENTWATCH_* variables and flags (docs/config.md).

Precedence, lowest first: defaults < config file < environment < flags. A
project file (`.agentwatch.toml` in the current directory or a parent) comes
last and may only tighten: a stricter privacy mode, more redaction patterns,
durability `full`. Anything else in it, or an attempt to weaken, is refused.

Every problem is a ConfigError (exit 2) naming the file or variable and the key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import socket
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import parse_qsl, urlsplit

from agentwatch import paths, safefs
from agentwatch.errors import UsageError
from agentwatch.store.chain import canonical_json

CONFIG_VERSION = 1
FILE_NAME = "config.toml"
PROJECT_FILE_NAME = ".agentwatch.toml"
DURABILITY = ("full",)


def _redact():
    """The redaction package, imported when a value needs it (it compiles its rules on import)."""
    from agentwatch.record import redact

    return redact


class ConfigError(UsageError):
    """A configuration file, variable or flag is unusable (exit 2)."""

    next_step = "`agentwatch docs config` lists every setting, its values and where each is read from"


# --- value parsers: (value, where) -> value, raising ValueError with the reason ---------------

def _path(value: Any, where: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ValueError("must be a non-empty string (a path)")
    path = Path(value).expanduser()
    if where in ("file", "project") and not path.is_absolute():
        raise ValueError("must be an absolute path (or start with ~)")
    return path


def _choice(choices: tuple[str, ...] | Callable[[], tuple[str, ...]]) -> Callable[[Any, str], str]:
    def parse(value: Any, where: str) -> str:
        options = choices() if callable(choices) else choices
        if value not in options:
            raise ValueError(f"must be one of {', '.join(map(repr, options))}, not {value!r}")
        return value
    return parse


def _durability(value: Any, where: str) -> str:
    if value not in DURABILITY:
        raise ValueError(f"only 'full' is supported (every commit before an acknowledgement is durable), not {value!r}")
    return value


def _number(lo: float, hi: float, *, integer: bool) -> Callable[[Any, str], Any]:
    def parse(value: Any, where: str) -> Any:
        if isinstance(value, str) and where in ("env", "flag"):
            try:
                value = int(value) if integer else float(value)
            except ValueError:
                raise ValueError(f"must be {'an integer' if integer else 'a number'}, not {value!r}") from None
        kinds = (int,) if integer else (int, float)
        if isinstance(value, bool) or not isinstance(value, kinds):
            raise ValueError(f"must be {'an integer' if integer else 'a number'}, not {value!r}")
        if not lo <= value <= hi or value != value:
            raise ValueError(f"must be between {lo:g} and {hi:g}, not {value!r}")
        return value if integer else float(value)  # `5` in a file and `5.0` on a flag: one value, one digest
    return parse


def _patterns(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) and where in ("env", "flag"):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("must be a JSON list of regular expressions") from None
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise ValueError("must be a list of regular expressions (strings)")
    if len(value) > 64:
        raise ValueError("at most 64 patterns")
    for i, pattern in enumerate(value):
        if len(pattern) > 1000:
            raise ValueError(f"pattern {i + 1} is longer than 1000 characters")
        try:
            _redact().validate_pattern(pattern)
        except Exception as exc:  # re.error or ValueError
            raise ValueError(f"pattern {i + 1} ({pattern!r}) is not usable: {exc}") from None
    return tuple(value)


def pg_target_problem(target: str) -> str | None:
    """Why `target` cannot name the fleet server, or None.

    A target is a postgresql:// URL or a libpq key=value string, never with a password:
    libpq reads that from PGPASSFILE (~/.pgpass), a PGSERVICE entry or PGPASSWORD, so it
    is not kept in a configuration file, shown in a process list or written to a log.
    """
    if not isinstance(target, str) or not target.strip():
        return "must be a postgresql:// URL or a libpq key=value string"
    target = target.strip()
    scheme, sep, _ = target.partition("://")
    if sep:
        if scheme not in ("postgresql", "postgres"):
            return f"must start with postgresql://, not {scheme}://"
        try:
            parts = urlsplit(target)
            has_password = parts.password is not None or any(k == "password" for k, _ in parse_qsl(parts.query))
        except ValueError as exc:
            return f"is not a usable URL ({exc})"
    elif "=" not in target:
        return "is neither a postgresql:// URL nor a libpq key=value string"
    else:
        has_password = re.search(r"(?:^|\s)password\s*=", target, re.IGNORECASE) is not None
    if has_password:
        return ("carries a password; put it in PGPASSFILE (~/.pgpass), a PGSERVICE entry or PGPASSWORD, "
                "so it is never stored or logged")
    return None


def _pg_target(value: Any, where: str) -> str:
    if value == "":
        return ""  # shipping off
    problem = pg_target_problem(value)
    if problem:
        raise ValueError(problem)
    return value.strip()


def _host_label(value: Any, where: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= 256 or not value.isprintable():
        raise ValueError("must be 1-256 printable characters")
    return value


def _switch(value: Any, where: str) -> bool:
    if isinstance(value, str) and where in ("env", "flag"):
        lowered = value.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, not {value!r}")
    return value


def _group(value: Any, where: str) -> str:
    if not isinstance(value, str) or (value and not value.replace("-", "").replace("_", "").isalnum()):
        raise ValueError(f"must be a group name (letters, digits, '-', '_') or empty, not {value!r}")
    return value


def _dirs(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) and where in ("env", "flag"):
        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("must be a JSON list of directory paths") from None
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise ValueError("must be a list of directory paths")
    return tuple(str(_path(p, where)) for p in value)


# --- the keys ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Key:
    name: str  # dotted, as in the file
    parse: Callable[[Any, str], Any]
    default: Callable[[], Any]
    doc: str
    project: str | None = None  # None: not in a project file; "tighten"; "add"
    flag: str | None = None  # the command-line option that sets it (serve's options), if any
    metavar: str | None = None

    @property
    def option(self) -> str:
        return self.flag or "--" + self.name.replace(".", "-").replace("_", "-")

    @property
    def env(self) -> str:
        return "AGENTWATCH_" + self.name.replace(".", "_").upper()


KEYS: dict[str, Key] = {k.name: k for k in (
    Key("store", _path, lambda: paths.data_dir() / "store.db", "the store (SQLite database)"),
    Key("socket", _path, lambda: paths.runtime_dir() / "agentwatch.sock", "the daemon's Unix socket"),
    Key("spool", _path, lambda: paths.data_dir() / "spool", "where hooks spool records the daemon did not ack"),
    Key("state_dir", _path, paths.state_dir,
        "what agentwatch keeps about a store outside it: the checkpoint key (keys/), the signed checkpoints "
        "(checkpoints/), durable consumers' cursors and delivery logs (consumers/)", flag="--state-dir"),
    # The two redaction defaults are written here, not read from the redaction package, which compiles
    # its rules on import (0.1 s a command like `path` need not pay); tests/test_cli_new_user.py checks them.
    Key("privacy", _choice(lambda: _redact().MODES), lambda: "redacted",
        "full | redacted | hashed | metadata-only (docs/redaction.md)", project="tighten"),
    Key("durability", _durability, lambda: "full", "only 'full': the commit before an ack is durable",
        project="tighten"),
    Key("packing", _switch, lambda: True,
        "store event documents of 512 bytes or more deflated with a dictionary trained on the store's records, "
        "their forensic fields kept queryable (docs/schema.md, \"Packed rows\")", flag="--packing/--no-packing"),
    Key("redaction.salt_file", _path, lambda: paths.data_dir() / "redaction.salt", "per-install salt for masks and hashes (0600)"),
    Key("redaction.extra_patterns", _patterns, tuple, "more regular expressions to mask", project="add"),
    Key("serve.attest_interval_s", _number(0, 86400, integer=False), lambda: 60.0,
        "seconds between periodic attestation rows (0: only at start and stop)",
        flag="--attest-interval", metavar="SECONDS"),
    Key("serve.hook_watch_interval_s", _number(0, 3600, integer=False), lambda: 2.0,
        "seconds between looks at the hook configs `install` wrote (0: off; docs/daemon.md)"),
    Key("serve.batch_max", _number(1, 100_000, integer=True), lambda: 1000, "rows per group commit at most",
        flag="--batch-max", metavar="ROWS"),
    Key("serve.normalize_workers", _number(0, 64, integer=True), lambda: 2,
        "processes that normalize and redact records off the event loop (0: on the loop; docs/daemon.md)",
        flag="--normalize-workers", metavar="N"),
    Key("serve.idle_timeout_s", _number(0.1, 86400, integer=False), lambda: 30.0,
        "close a connection that sends no complete line for this long", flag="--idle-timeout", metavar="SECONDS"),
    Key("serve.verify_interval_s", _number(0, 86400, integer=False), lambda: 5.0,
        "seconds between background verification rounds of new rows (0: off)",
        flag="--verify-interval", metavar="SECONDS"),
    Key("serve.full_verify_interval_s", _number(0, 31_536_000, integer=False), lambda: 3600.0,
        "seconds between full re-verification passes from genesis, a chunk per round (0: off)",
        flag="--full-verify-interval", metavar="SECONDS"),
    Key("serve.log_level", _choice(("debug", "info", "warning", "error")), lambda: "info",
        "the daemon's log level", flag="--log-level", metavar="LEVEL"),
    Key("serve.log_format", _choice(("text", "json")), lambda: "text",
        "the daemon's log lines on stderr: text, or one JSON object per line for service managers",
        flag="--log-format", metavar="FORMAT"),
    Key("ship.url", _pg_target, str,
        "fleet server `serve` ships to (postgresql://..., no password; empty: off; docs/fleet.md)",
        flag="--ship-url", metavar="URL"),
    Key("ship.host", _host_label, lambda: socket.gethostname() or "unknown",
        "this machine's name on the fleet server (a store is bound to its first host)"),
    Key("ship.batch_rows", _number(1, 10_000, integer=True), lambda: 1000, "rows per ingest call at most"),
    Key("serve.socket_group", _group, lambda: "",
        "a group whose members' hooks may use the socket (the service deployment; empty: the owner only)"),
    Key("serve.process_witness", _switch, lambda: False,
        "record what the kernel saw the harnesses' processes run (Linux; needs CAP_NET_ADMIN, and "
        "CAP_SYS_ADMIN for exec paths from fanotify; docs/reliability.md, \"The process witness\")",
        flag="--process-witness"),
    Key("serve.process_witness_buffer", _number(4096, 1 << 30, integer=True), lambda: 8 << 20,
        "bytes of the process witness's kernel receive buffer (a burst beyond it is a gap row)"),
    Key("checkpoint.enabled", _switch, lambda: True,
        "sign checkpoints of the store's Merkle tree while serving and at stop (docs/chain.md)",
        flag="--checkpoints/--no-checkpoints"),
    Key("checkpoint.interval_s", _number(0, 86400, integer=False), lambda: 10.0,
        "seconds between signed checkpoints when rows were added (0: only by rows and at stop)",
        flag="--checkpoint-interval", metavar="SECONDS"),
    Key("checkpoint.rows", _number(0, 1_000_000_000, integer=True), lambda: 10_000,
        "sign a checkpoint once this many rows wait (0: only by time and at stop)"),
    Key("retention.payload_days", _number(0, 36_500, integer=False), lambda: 0.0,
        "remove the payloads of event and gap rows recorded more than this many days ago, keeping their "
        "digests, except what a legal hold covers (0: keep every payload; docs/retention.md)",
        flag="--retention-days", metavar="DAYS"),
    Key("retention.interval_s", _number(1, 31_536_000, integer=False), lambda: 3600.0,
        "seconds between the daemon's retention passes"),
    Key("retention.max_rows", _number(1, 100_000, integer=True), lambda: 200,
        "rows one retention transaction removes at most (the writer is held that long)"),
    Key("checkpoint.witness_dirs", _dirs, lambda: (str(paths.state_dir() / "witness"),),
        "witness directories that keep each signed checkpoint (docs/chain.md, \"Witnesses\")"),
)}


# Keys renamed: the old name still works (file, environment, flag) and warns once per load.
DEPRECATED: dict[str, str] = {"checkpoint.dir": "state_dir"}


def _deprecated_env(old: str) -> str:
    return "AGENTWATCH_" + old.replace(".", "_").upper()


def _warn_deprecated(old: str, where: str) -> None:
    logging.getLogger("agentwatch.config").warning(
        f"{where}: {old!r} is deprecated; it is now {DEPRECATED[old]!r} (it still works, for now)")


def user_config_path(env: Mapping[str, str] | None = None) -> tuple[Path, bool]:
    """The config file and whether it was named explicitly (AGENTWATCH_CONFIG)."""
    env = os.environ if env is None else env
    explicit = env.get("AGENTWATCH_CONFIG")
    if explicit:
        return Path(explicit).expanduser(), True
    base = env.get("XDG_CONFIG_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / paths.APP / FILE_NAME, False


def find_project_file(cwd: Path | None = None) -> Path | None:
    here = Path(cwd or os.getcwd()).absolute()
    for directory in (here, *here.parents):
        candidate = directory / PROJECT_FILE_NAME
        if candidate.is_file():
            return candidate
    return None


# --- the effective configuration -----------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    values: Mapping[str, Any]
    sources: Mapping[str, str]  # key -> default | file:<path> | env:<VAR> | flag:<--name> | project:<path>
    files: tuple[str, ...] = field(default=())

    def __getitem__(self, key: str) -> Any:
        return self.values[DEPRECATED.get(key, key)]

    @property
    def store(self) -> Path:
        return self.values["store"]

    @property
    def socket(self) -> Path:
        return self.values["socket"]

    @property
    def spool(self) -> Path:
        return self.values["spool"]

    @property
    def privacy(self) -> str:
        return self.values["privacy"]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready values, keyed by their dotted names."""
        return {k: jsonable(v) for k, v in self.values.items()}

    def digest(self) -> str:
        """The configuration digest (`digest`) of these values."""
        return digest(self.as_dict())

    def policy(self) -> Any:
        """The redaction policy this configuration asks for (reads or creates the salt file)."""
        mode = self.values["privacy"]
        redact = _redact()
        salt = b"" if mode == redact.FULL else redact.load_salt(self.values["redaction.salt_file"])
        return redact.Policy(mode, salt, self.values["redaction.extra_patterns"])


def digest(values: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of {"config_version", "values"}: the one configuration digest
    (`config show`, `health`, the daemon's attestation rows). Stable across runs and key order,
    independent of where each value came from. `values` are JSON-ready (Config.as_dict)."""
    doc = {"config_version": CONFIG_VERSION, "values": dict(values)}
    return "sha256:" + hashlib.sha256(canonical_json(doc)).hexdigest()


def defaults() -> Config:
    """Every key at its default: no file, no environment, no flag."""
    return Config({name: key.default() for name, key in KEYS.items()}, dict.fromkeys(KEYS, "default"))


def jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def load(
    flags: Mapping[str, Any] | None = None,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    project: bool = True,
) -> Config:
    """The effective configuration. `flags` maps dotted keys to values given on the command
    line (None = not given). Raises ConfigError."""
    env = os.environ if env is None else env
    values = {name: key.default() for name, key in KEYS.items()}
    sources = dict.fromkeys(KEYS, "default")
    files: list[str] = []

    path, explicit = user_config_path(env)
    if explicit or path.is_file():
        for name, raw in _read_toml(path, trusted=True).items():
            values[name] = _parse(name, raw, "file", str(path))
            sources[name] = f"file:{path}"
        files.append(str(path))
    for old, new in DEPRECATED.items():
        if env.get(_deprecated_env(old)) and not env.get(KEYS[new].env):
            _warn_deprecated(old, f"environment variable {_deprecated_env(old)}")
            values[new] = _parse(new, env[_deprecated_env(old)], "env", f"environment variable {_deprecated_env(old)}")
            sources[new] = f"env:{_deprecated_env(old)}"
    for name, key in KEYS.items():
        if env.get(key.env):
            values[name] = _parse(name, env[key.env], "env", f"environment variable {key.env}")
            sources[name] = f"env:{key.env}"
    for name, raw in (flags or {}).items():
        if raw is None:
            continue
        if name in DEPRECATED:
            name = DEPRECATED[name]
        if name not in KEYS:
            raise ConfigError(f"unknown configuration key {name!r} given as a flag")
        flag = KEYS[name].option
        values[name] = _parse(name, str(raw) if isinstance(raw, Path) else raw, "flag", f"option {flag}")
        sources[name] = f"flag:{flag}"

    project_path = find_project_file(cwd) if project else None
    if project_path is not None:
        _apply_project(project_path, values, sources)
        files.append(str(project_path))
    if values.get("serve.socket_group"):
        # The service layout (docs/deployment.md): whatever any command run with it creates (a store
        # by `import`, the key, the witness) is the socket group's to read, as the daemon's own is.
        safefs.share_with_group()
    return Config(values, sources, tuple(files))


def _parse(name: str, raw: Any, where: str, label: str) -> Any:
    """`where` is file, project, env or flag; `label` names it in the error."""
    try:
        return KEYS[name].parse(raw, where)
    except ValueError as exc:
        raise ConfigError(f"{label}: key {name!r}: {exc}") from None


def _read_toml(path: Path, trusted: bool = False) -> dict[str, Any]:
    """Flattened to dotted keys; unknown keys refused.

    `trusted` (the user's config file, which may loosen anything) must be the
    user's or root's and writable by nobody else, and so must its directory:
    whoever can write it decides where records go and what is redacted.
    """
    try:
        with open(path, "rb") as f:
            if trusted:
                _check_trusted(path, os.fstat(f.fileno()))
            doc = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file does not exist (AGENTWATCH_CONFIG names it)") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    flat: dict[str, Any] = {}
    _flatten(doc, "", flat, path)
    return flat


def _check_trusted(path: Path, st: os.stat_result) -> None:
    if st.st_uid not in (0, os.geteuid()):
        raise ConfigError(f"{path}: config file is owned by uid {st.st_uid}, not by this user; refusing to read it")
    if safefs.others_can_write(st):
        raise ConfigError(
            f"{path}: config file has mode {safefs.describe_mode(st.st_mode)}: others could change where records "
            f"go and what is redacted (chmod 600 {path})"
        )
    try:
        safefs.check_parent(path.parent, os.stat(path.parent))
    except safefs.UnsafePath as exc:
        raise ConfigError(f"{path}: refusing to read the config file: {exc}") from None


def _flatten(table: dict, prefix: str, out: dict, path: Path) -> None:
    for key, value in table.items():
        name = prefix + key
        if isinstance(value, dict) and any(k.startswith(name + ".") for k in KEYS):
            _flatten(value, name + ".", out, path)
        elif name in KEYS:
            out[name] = value
        elif name in DEPRECATED:
            _warn_deprecated(name, str(path))
            out.setdefault(DEPRECATED[name], value)
        else:
            known = ", ".join(KEYS)
            raise ConfigError(f"{path}: unknown key {name!r} (known keys: {known})")


def _apply_project(path: Path, values: dict, sources: dict) -> None:
    for name, raw in _read_toml(path).items():
        rule = KEYS[name].project
        if rule is None:
            allowed = ", ".join(n for n, k in KEYS.items() if k.project)
            raise ConfigError(f"{path}: key {name!r} cannot be set in a project file (only {allowed}: "
                              "a project may tighten the recorder, never redirect or weaken it)")
        value = _parse(name, raw, "project", str(path))
        if name == "privacy":
            current = values[name]
            redact = _redact()
            if redact.STRICTNESS[value] < redact.STRICTNESS[current]:
                raise ConfigError(f"{path}: key 'privacy': a project file may only tighten privacy; "
                                  f"{value!r} is weaker than the effective {current!r} "
                                  f"(order: {' < '.join(redact.MODES)})")
            if value != current:
                values[name], sources[name] = value, f"project:{path}"
        elif rule == "add":
            merged = tuple(dict.fromkeys((*values[name], *value)))
            if merged != values[name]:
                values[name] = merged
                sources[name] = f"{sources[name]}+project:{path}" if sources[name] != "default" else f"project:{path}"
        # durability: the parser already refused anything but the one (strongest) value.
