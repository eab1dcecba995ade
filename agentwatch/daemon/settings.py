"""The daemon's settings (ServeConfig) and its counters since start (Counters)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from agentwatch import config, safefs
from agentwatch.daemon.subscriptions import DEFAULT_MAX_BUFFER
from agentwatch.daemon.writer import Writer
from agentwatch.record import redact

MAX_LINE = 1 << 20  # bytes per request line, newline excluded (docs/protocol.md)
REJECT_REASONS = ("bad_json", "bad_utf8", "too_large", "unknown_op", "bad_request")


def _default(name: str) -> Any:
    return config.KEYS[name].default()


@dataclass(frozen=True)
class ServeConfig:
    """What one `serve` runs with. The user-facing settings are declared in config.KEYS (serve.*),
    which gives their defaults here; the rest are internal bounds that tests tighten."""

    store: Path
    socket: Path
    spool: Path
    attest_interval: float = _default("serve.attest_interval_s")
    idle_timeout: float = _default("serve.idle_timeout_s")
    batch_max: int = _default("serve.batch_max")
    verify_interval: float = _default("serve.verify_interval_s")
    full_verify_interval: float = _default("serve.full_verify_interval_s")
    log_level: str = _default("serve.log_level")
    log_format: str = _default("serve.log_format")
    durability: str = _default("durability")
    packing: bool = _default("packing")  # large event documents stored packed (store/packing.py)
    # Records read but not yet answered: across all connections, and per connection,
    # so one bulk client cannot hold every slot while a hook waits behind it.
    max_inflight: int = 2048
    max_inflight_per_connection: int = 1000
    normalize_workers: int = _default("serve.normalize_workers")  # processes normalizing off the loop (workers.py)
    subscriber_buffer: int = DEFAULT_MAX_BUFFER  # unsent bytes a live-tail subscriber may hold before catch-up
    max_line: int = MAX_LINE
    spool_poll: float = 0.5  # seconds between looks at spool/new
    stop_quiet: float = 0.2  # at stop: read until connections were quiet this long ...
    stop_max: float = 10.0  # ... or this long at most
    # Signed checkpoints of the Merkle tree (docs/chain.md): every checkpoint_interval seconds
    # or checkpoint_rows rows (0: not by that trigger) and at stop, kept by each witness dir.
    checkpoints: bool = _default("checkpoint.enabled")
    checkpoint_interval: float = _default("checkpoint.interval_s")
    checkpoint_rows: int = _default("checkpoint.rows")
    # Defaults that depend on the environment (XDG directories) are taken when one is built.
    witness_dirs: tuple[str, ...] = field(default_factory=lambda: tuple(_default("checkpoint.witness_dirs")))
    state_dir: Path = field(default_factory=lambda: _default("state_dir"))  # keys/ and checkpoints/
    # The service deployment: members of this group may connect (socket 0660, its dir 0750), the
    # store is group-readable (0640) so they can verify it, and every peer's uid is recorded.
    socket_group: str = _default("serve.socket_group")
    # The effective agentwatch configuration (config.Config.as_dict()) this daemon runs
    # with, for the digest; and the redaction policy it asks for (None: the default).
    settings: Mapping[str, Any] = field(default_factory=dict)
    policy: Optional[redact.Policy] = field(default=None, repr=False)
    # The fleet server to ship to (config ship.*; empty: no shipping; daemon/shipping.py).
    ship_url: str = _default("ship.url")
    ship_host: Optional[str] = None  # None: config's default (the host name), taken when shipping starts
    ship_batch_rows: int = _default("ship.batch_rows")
    # The process witness (daemon/procwitness.py): on, and its proc connector's receive buffer.
    process_witness: bool = _default("serve.process_witness")
    process_witness_buffer: int = _default("serve.process_witness_buffer")
    # The watch over installed hook configs and transcript coverage (daemon/recorder_watch.py):
    # seconds between looks at the configs (0: off), seconds after a session end before its
    # transcript is paired, and the install manifest (None: the XDG state dir's installed.json).
    hook_watch_interval: float = _default("serve.hook_watch_interval_s")
    coverage_delay: float = 1.0
    install_manifest: Optional[Path] = None
    # Retention (docs/retention.md): payloads older than this many days removed (0: off).
    retention_days: float = _default("retention.payload_days")
    retention_interval: float = _default("retention.interval_s")
    retention_max_rows: int = _default("retention.max_rows")

    @classmethod
    def from_config(cls, cfg: config.Config, **daemon_options: Any) -> "ServeConfig":
        if cfg["serve.socket_group"]:
            safefs.share_with_group()  # before anything (the salt, the spool) makes a directory
        return cls(
            **{name: cfg[key] for name, key in FIELD_KEYS.items()},
            settings=cfg.as_dict(),
            policy=cfg.policy(),
            ship_host=cfg["ship.host"],
            **daemon_options,
        )

    def digest(self) -> str:
        """The configuration digest `config show` prints (config.Config.digest) for what this daemon runs with."""
        return config.digest(self.effective_settings())

    def effective_settings(self) -> dict[str, Any]:
        """The configuration as config keys: `settings` (the defaults, for one built directly) with
        this object's own fields over it, so a field a caller changed is what the digest covers."""
        values = dict(self.settings) if self.settings else config.defaults().as_dict()
        values.update({key: config.jsonable(getattr(self, name)) for name, key in FIELD_KEYS.items()})
        if self.policy is not None:
            values["privacy"] = self.policy.mode
        return values


# ServeConfig's fields that are settings, and their keys in config.KEYS.
FIELD_KEYS = {
    "store": "store", "socket": "socket", "spool": "spool",
    "attest_interval": "serve.attest_interval_s", "idle_timeout": "serve.idle_timeout_s",
    "batch_max": "serve.batch_max", "verify_interval": "serve.verify_interval_s",
    "full_verify_interval": "serve.full_verify_interval_s", "log_level": "serve.log_level",
    "log_format": "serve.log_format", "durability": "durability", "packing": "packing",
    "checkpoints": "checkpoint.enabled", "checkpoint_interval": "checkpoint.interval_s",
    "checkpoint_rows": "checkpoint.rows", "witness_dirs": "checkpoint.witness_dirs", "state_dir": "state_dir",
    "socket_group": "serve.socket_group", "ship_url": "ship.url", "ship_batch_rows": "ship.batch_rows",
    "retention_days": "retention.payload_days", "retention_interval": "retention.interval_s",
    "retention_max_rows": "retention.max_rows", "hook_watch_interval": "serve.hook_watch_interval_s",
    "process_witness": "serve.process_witness", "process_witness_buffer": "serve.process_witness_buffer",
    "normalize_workers": "serve.normalize_workers",
}


@dataclass
class Counters:
    """Since the daemon started. Mutated on the event loop; read anywhere."""

    accepted: int = 0  # event rows newly stored (socket and spool)
    duplicates: int = 0  # appends acknowledged as already stored
    rejected: dict = field(default_factory=lambda: dict.fromkeys(REJECT_REASONS, 0))
    unavailable: int = 0  # appends answered `unavailable` after a failed commit
    replayed_from_spool: int = 0  # spool files committed (new or duplicate) and deleted
    spool_duplicates: int = 0
    spool_quarantined: int = 0
    connections: int = 0
    peers_refused: int = 0
    timeouts: int = 0

    def snapshot(self, writer: Optional[Writer]) -> dict:
        doc = asdict(self)
        doc["rejected"] = dict(self.rejected)
        doc["commit_failures"] = writer.stats.commit_failures if writer else 0
        doc["gaps_recorded"] = writer.stats.gaps_recorded if writer else 0
        return doc
