"""`agentwatch reconcile --pg`: what the fleet server holds of each source, checked there.

For each source (one store_id), from its own sources on the server:

- `chain_ok`: `agentwatch.verify_chain` walks the central copy in seq order and
  recomputes every row's chain v1 hash and link in SQL (an erased row with the
  digest its erasure row names);
- `contiguous`: the rows are exactly seq 1..head;
- `head`, `lag_rows`, `lag_s`: the central head and how far it is behind the
  head the source last reported; `last_report_at`, and `silent` when that was
  longer ago than `silent_after_s` (a retired source is never silent);
- `login`: the verified identity, the login that claimed the source, beside
  the `host` label it gave;
- `replaces`: older stores of the same login and host that were not retired
  (the machine's store was deleted or replaced, as the local verify says);
- `duplicates_of`: earlier sources holding event record_ids this one holds too
  (another machine's rows re-chained under a fresh store_id);
- the last checkpoint; the findings by kind: those its owner caused since the
  claim last changed count (`findings`); those of other logins on it
  (`other_logins`) and those from before an administrator's claim change
  (`findings_before_change`) are listed and do not.

A source is within bounds when its chain verifies, it is contiguous, it has
none of its own findings, it is not silent, replaces no live store and
duplicates no other. The fleet is within bounds when every source is and no
login has findings outside its own sources (`logins`). Before counting, the
server log is read for refused direct writes (`agentwatch.collect_denials`),
when the login may call it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Optional

from agentwatch.errors import UsageError
from agentwatch.fleet.connect import FleetSchemaError, connect, first_line, redact
from agentwatch.fleet.schema import schema_version

SILENT_AFTER_S = 900.0  # a source that has not reported for this long is silent (reconcile --silent-after)


@dataclass
class SourceReport:
    store_id: str
    host: str
    login: str
    head_seq: int
    head_hash: str
    rows: int
    chain_ok: bool
    contiguous: bool
    chain_problem: Optional[str]
    lag_rows: Optional[int]
    lag_s: Optional[float]
    last_checkpoint: Optional[dict]
    last_report_at: Optional[str] = None
    silent_s: Optional[float] = None  # seconds since the last report
    silent: bool = False
    retired_at: Optional[str] = None
    replaces: list[str] = field(default_factory=list)
    duplicates_of: dict[str, int] = field(default_factory=dict)
    claim_changes: int = 0
    findings: dict[str, int] = field(default_factory=dict)
    other_logins: dict[str, dict[str, int]] = field(default_factory=dict)
    findings_before_change: dict[str, int] = field(default_factory=dict)

    @property
    def within_bounds(self) -> bool:
        return (self.chain_ok and self.contiguous and not self.findings and not self.silent and not self.replaces
                and not self.duplicates_of)

    def to_json(self) -> dict:
        return {**asdict(self), "within_bounds": self.within_bounds}


@dataclass
class FleetReconciliation:
    target: str
    schema_version: int
    denials: str  # how many refused direct writes the log held, or why it was not read
    silent_after_s: float = SILENT_AFTER_S
    sources: list[SourceReport] = field(default_factory=list)
    unattributed_findings: dict[str, int] = field(default_factory=dict)  # not tied to one source
    logins: dict[str, dict[str, int]] = field(default_factory=dict)  # findings of logins outside their own sources

    @property
    def within_bounds(self) -> bool:
        return all(s.within_bounds for s in self.sources) and not self.unattributed_findings and not self.logins

    def to_json(self) -> dict:
        return {"target": self.target, "schema_version": self.schema_version, "within_bounds": self.within_bounds,
                "denials": self.denials, "silent_after_s": self.silent_after_s,
                "unattributed_findings": self.unattributed_findings, "logins": self.logins,
                "sources": [s.to_json() for s in self.sources]}


_SOURCES = (
    "SELECT s.store_id, s.host, s.login, s.head_seq, s.head_hash, s.lag_rows, s.lag_s, s.checkpoint_size,"
    " s.checkpoint_at, s.last_report_at, extract(epoch FROM now() - s.last_report_at), s.retired_at,"
    " s.first_seen, (SELECT max(ch.changed_at) FROM agentwatch.claim_changes ch WHERE ch.store_id = s.store_id),"
    " (SELECT count(*) FROM agentwatch.claim_changes ch WHERE ch.store_id = s.store_id)"
    " FROM agentwatch.sources s WHERE %s::text IS NULL OR s.store_id = %s ORDER BY s.first_seen, s.store_id")
# Findings by source, by whether its owner caused them and whether they came after the claim last changed.
_FINDINGS = (
    "SELECT f.store_id, f.role, f.kind, f.role = c.claimed_by,"
    " f.found_at >= coalesce((SELECT max(ch.changed_at) FROM agentwatch.claim_changes ch"
    "                         WHERE ch.store_id = f.store_id), '-infinity'), count(*)"
    " FROM agentwatch.findings f LEFT JOIN agentwatch.source_claims c ON c.store_id = f.store_id"
    " GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3")


def reconcile(target: str, source: Optional[str] = None, *, silent_after_s: float = SILENT_AFTER_S
              ) -> FleetReconciliation:
    import psycopg

    if source is not None:
        source = source.strip().lower()
        if len(source) != 32 or any(c not in "0123456789abcdef" for c in source):
            raise UsageError(f"--source must be a store_id (32 hex digits), not {source!r}")
    if not silent_after_s > 0:
        raise UsageError("--silent-after must be a positive number of seconds")
    conn = connect(target, application="agentwatch reconcile")
    try:
        version = schema_version(conn)
        denials = _collect_denials(conn)
        try:
            claims = conn.execute(_SOURCES, (source, source)).fetchall()
            if source is not None and not claims:
                raise UsageError(f"no source {source} on {redact(target)}")
            result = FleetReconciliation(redact(target), version, denials, silent_after_s)
            own: dict[str, dict[str, int]] = {}
            before: dict[str, dict[str, int]] = {}
            others: dict[str, dict[str, dict[str, int]]] = {}
            for store_id, role, kind, by_owner, after_change, count in conn.execute(_FINDINGS):
                if store_id is None or by_owner is None:
                    if source is None:
                        result.unattributed_findings[kind] = result.unattributed_findings.get(kind, 0) + count
                        result.logins.setdefault(role, {})[kind] = result.logins.get(role, {}).get(kind, 0) + count
                    continue
                if not after_change:
                    before.setdefault(store_id, {})[kind] = before.get(store_id, {}).get(kind, 0) + count
                elif by_owner:
                    own.setdefault(store_id, {})[kind] = count
                else:
                    others.setdefault(store_id, {}).setdefault(role, {})[kind] = count
                    if source is None or store_id == source:
                        result.logins.setdefault(role, {})[kind] = result.logins.get(role, {}).get(kind, 0) + count
            duplicates: dict[str, dict[str, int]] = {}
            for store_id, of, count in conn.execute(
                    "SELECT store_id, duplicates_of, record_ids FROM agentwatch.cross_source_duplicates"):
                duplicates.setdefault(store_id, {})[of] = count
            live = [(c[2], c[1], c[0], c[12]) for c in conn.execute(
                "SELECT store_id, host, login, head_seq, NULL, NULL, NULL, NULL, NULL, NULL, NULL, retired_at,"
                " first_seen FROM agentwatch.sources WHERE retired_at IS NULL")]
            for (store_id, host, login, head_seq, head_hash, lag_rows, lag_s, cp_size, cp_at, reported_at, quiet_s,
                 retired_at, first_seen, _changed_at, changes) in claims:
                checked, _, _, bad_seq, problem = conn.execute(
                    "SELECT * FROM agentwatch.verify_chain(%s)", (store_id,)).fetchone()
                rows, low, high = conn.execute(
                    "SELECT count(*), coalesce(min(seq), 1), coalesce(max(seq), 0) FROM agentwatch.records"
                    " WHERE store_id = %s", (store_id,)).fetchone()
                quiet = float(quiet_s) if quiet_s is not None else None
                result.sources.append(SourceReport(
                    store_id=store_id, host=host, login=login, head_seq=head_seq, head_hash=head_hash,
                    rows=rows, chain_ok=problem is None,
                    contiguous=rows == high and low == 1,
                    chain_problem=None if problem is None else f"seq {bad_seq}: {problem}",
                    lag_rows=lag_rows, lag_s=float(lag_s) if lag_s is not None else None,
                    last_checkpoint={"tree_size": cp_size, "received_at": cp_at.isoformat()} if cp_size else None,
                    last_report_at=_iso(reported_at), silent_s=round(quiet, 3) if quiet is not None else None,
                    silent=retired_at is None and (quiet is None or quiet > silent_after_s),
                    retired_at=_iso(retired_at),
                    replaces=[other for (o_login, o_host, other, o_first) in live
                              if o_login == login and o_host == host and other != store_id
                              and (o_first, other) < (first_seen, store_id)] if retired_at is None else [],
                    duplicates_of=duplicates.get(store_id, {}),
                    claim_changes=changes,
                    findings=own.get(store_id, {}),
                    other_logins=others.get(store_id, {}),
                    findings_before_change=before.get(store_id, {}),
                ))
            return result
        except psycopg.errors.InsufficientPrivilege as exc:
            raise FleetSchemaError(f"{redact(target)}: this login may not read the fleet tables "
                                   f"(a member of agentwatch_read may): {first_line(exc)}") from None
        except psycopg.Error as exc:
            raise FleetSchemaError(f"{redact(target)}: {first_line(exc)}") from None
    finally:
        conn.close()


def _iso(value: Optional[datetime]) -> Optional[str]:
    return value.astimezone(timezone.utc).isoformat() if value is not None else None


def _collect_denials(conn) -> str:
    import psycopg

    collector, destinations = conn.execute(
        "SELECT current_setting('logging_collector'), current_setting('log_destination')").fetchone()
    if collector != "on" or "jsonlog" not in destinations.split(","):
        return "not read: the server does not write a jsonlog (docs/fleet.md, \"Denied writes\")"
    try:
        files, denials = conn.execute("SELECT * FROM agentwatch.collect_denials()").fetchone()
    except psycopg.Error as exc:
        return f"not read: {first_line(exc)}"
    return f"{denials} new from {files} log file(s)"
