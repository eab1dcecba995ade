"""The daemon's settings (ServeConfig) and its counters since start (Counters)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping, Optional

from agentwatch import __version__, config, safefs
from agentwatch.daemon.subscriptions import DEFAULT_MAX_BUFFER
from agentwatch.daemon.writer import Writer
from agentwatch.record import redact
from agentwatch.store.chain import canonical_json

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
    max_batch: int = _default("serve.batch_max")
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
    subscriber_buffer: int = DEFAULT_MAX_BUFFER  # unsent bytes a live-tail subscriber may hold before catch-up
    max_line: int = MAX_LINE
    spool_poll: float = 0.5  # seconds between looks at spool/new
    drain_quiet: float = 0.2  # at stop: read until connections were quiet this long ...
    drain_max: float = 10.0  # ... or this long at most
    # Signed checkpoints of the Merkle tree (docs/chain.md): every checkpoint_interval seconds
    # or checkpoint_rows rows (0: not by that trigger) and at stop, kept by each witness dir.
    checkpoints: bool = True
    checkpoint_interval: float = 10.0
    checkpoint_rows: int = 10_000
    witness_dirs: tuple[str, ...] = ()
    state_dir: Optional[Path] = None  # keys/ and checkpoints/ live here (None: the XDG state dir)
    # The service deployment: members of this group may connect (socket 0660, its dir 0750), the
    # store is group-readable (0640) so they can verify it, and every peer's uid is recorded.
    socket_group: str = ""
    # The effective agentwatch configuration (config.Config.as_dict()) this daemon runs
    # with, for the digest; and the redaction policy it asks for (None: the default).
    settings: Mapping[str, Any] = field(default_factory=dict)
    policy: Optional[redact.Policy] = field(default=None, repr=False)
    # The fleet server to ship to (config ship.*; empty: no shipping; daemon/shipping.py).
    ship_url: str = _default("ship.url")
    ship_host: Optional[str] = None  # None: config's default (the host name), taken when shipping starts
    ship_batch_rows: int = _default("ship.batch_rows")
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
            store=cfg.store,
            socket=cfg.socket,
            spool=cfg.spool,
            attest_interval=cfg["serve.attest_interval_s"],
            idle_timeout=cfg["serve.idle_timeout_s"],
            checkpoints=cfg["checkpoint.enabled"],
            checkpoint_interval=cfg["checkpoint.interval_s"],
            checkpoint_rows=cfg["checkpoint.rows"],
            witness_dirs=tuple(cfg["checkpoint.witness_dirs"]),
            state_dir=cfg["checkpoint.dir"],
            socket_group=cfg["serve.socket_group"],
            max_batch=cfg["serve.batch_max"],
            verify_interval=cfg["serve.verify_interval_s"],
            full_verify_interval=cfg["serve.full_verify_interval_s"],
            log_level=cfg["serve.log_level"],
            log_format=cfg["serve.log_format"],
            durability=cfg["durability"],
            packing=cfg["packing"],
            settings=cfg.as_dict(),
            policy=cfg.policy(),
            ship_url=cfg["ship.url"],
            ship_host=cfg["ship.host"],
            ship_batch_rows=cfg["ship.batch_rows"],
            hook_watch_interval=cfg["serve.hook_watch_interval_s"],
            retention_days=cfg["retention.payload_days"],
            retention_interval=cfg["retention.interval_s"],
            retention_max_rows=cfg["retention.max_rows"],
            **daemon_options,
        )

    def digest(self) -> str:
        """sha256 of the effective configuration (the salt itself stays out; its file is in `settings`)."""
        doc = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "policy"}
        doc = {k: str(v) if isinstance(v, Path) else v for k, v in doc.items()}
        doc["settings"] = dict(self.settings)
        doc["privacy"] = (self.policy or redact.default_policy()).mode
        doc["version"] = __version__
        return "sha256:" + hashlib.sha256(canonical_json(doc)).hexdigest()


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
