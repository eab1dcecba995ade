"""The fleet administrator's recovery tools (docs/fleet.md, "Recovery").

- `move_claim`: give a store's claim to another login and host (the machine was
  renamed, or another login squatted the store_id first);
- `retire_claim`: the store is gone (deleted, replaced, a CI job's store); it
  takes no more rows;
- `purge`: after erasures reached the server, rewrite the records table so the
  erased payload bytes leave its files, and, as a superuser, end the WAL
  segments that still hold them.

Each claim change is a row in `agentwatch.claim_changes` (who, when, why), made
by the server's own function in the same transaction as the change. They run as
the login that ran `fleet init` (a member of agentwatch_owner, or a superuser).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentwatch.fleet.connect import FleetSchemaError, connect, first_line, redact
from agentwatch.fleet.schema import OWNER, schema_version


def _call(target: str, query: str, params: tuple) -> int:
    import psycopg

    conn = connect(target, application="agentwatch fleet claim")
    try:
        schema_version(conn)
        try:
            return conn.execute(query, params).fetchone()[0]
        except psycopg.Error as exc:
            raise FleetSchemaError(f"{redact(target)}: {first_line(exc)}") from None
    finally:
        conn.close()


def move_claim(target: str, store_id: str, login: str, host: str, reason: str) -> int:
    """Give `store_id` to `login` shipping as `host`; the claim_changes id."""
    return _call(target, "SELECT agentwatch.move_claim(%s, %s, %s, %s)", (store_id, login, host, reason))


def retire_claim(target: str, store_id: str, reason: str) -> int:
    """Retire `store_id`: it takes no more rows; the claim_changes id."""
    return _call(target, "SELECT agentwatch.retire_claim(%s, %s)", (store_id, reason))


@dataclass
class PurgeResult:
    target: str
    rewritten: bool = False
    wal_ended: bool = False
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"target": self.target, "rewritten": self.rewritten, "wal_ended": self.wal_ended, "notes": self.notes}


def purge(target: str) -> PurgeResult:
    """Rewrite agentwatch.records (VACUUM FULL: the old files, with erased payloads in them, are dropped),
    then as a superuser switch and checkpoint the WAL twice, so segments that held them are removed.

    VACUUM FULL takes an exclusive lock: ingest waits for it. WAL segments are
    removed, not kept for reuse, only with `wal_recycle = off`, and not while a
    replication slot, `wal_keep_size` or archiving still needs them.
    """
    import psycopg

    result = PurgeResult(redact(target))
    conn = connect(target, application="agentwatch fleet purge")
    try:
        schema_version(conn)
        try:
            superuser, owner = conn.execute(
                "SELECT rolsuper, pg_has_role(current_user, %s, 'MEMBER') FROM pg_roles WHERE rolname = current_user",
                (OWNER,)).fetchone()
            if not (superuser or owner):
                raise FleetSchemaError(f"{redact(target)}: purge needs the login that ran fleet init "
                                       f"(a member of {OWNER}, or a superuser)")
            conn.execute("VACUUM (FULL) agentwatch.records")
            result.rewritten = True
            if not superuser:
                result.notes.append("not a superuser: the WAL was not switched; segments holding erased payloads "
                                    "go at the server's own checkpoints")
                return result
            recycle, keep, archive = conn.execute(
                "SELECT current_setting('wal_recycle'), current_setting('wal_keep_size'),"
                " current_setting('archive_mode')").fetchone()
            for _ in range(2):
                conn.execute("SELECT pg_switch_wal()")
                conn.execute("CHECKPOINT")
            result.wal_ended = recycle == "off" and keep in ("0", "0MB") and archive == "off"
            if recycle != "off":
                result.notes.append("wal_recycle is on: old segments are renamed for reuse, not removed")
            if keep not in ("0", "0MB") or archive != "off":
                result.notes.append(f"wal_keep_size {keep}, archive_mode {archive}: old segments are kept")
        except psycopg.Error as exc:
            raise FleetSchemaError(f"{redact(target)}: purge failed: {first_line(exc)}") from None
        return result
    finally:
        conn.close()

