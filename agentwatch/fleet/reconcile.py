"""`agentwatch reconcile --pg`: what the fleet server holds of each source, checked there.

For each source (one store_id), from its own sources on the server:

- `chain_ok`: `agentwatch.verify_chain` walks the central copy in seq order and
  recomputes every row's chain v1 hash and link in SQL;
- `contiguous`: the rows are exactly seq 1..head;
- `head`, `lag_rows`, `lag_s`: the central head and how far it is behind the
  head the source last reported;
- the last checkpoint; the findings, by kind.

A source is within bounds when its chain verifies, it is contiguous and it has
no findings. Before counting, the server log is read for refused direct writes
(`agentwatch.collect_denials`), when the login may call it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Optional

from agentwatch.errors import UsageError
from agentwatch.fleet.connect import FleetSchemaError, connect, first_line, redact
from agentwatch.fleet.schema import schema_version


@dataclass
class SourceReport:
    store_id: str
    host: str
    claimed_by: str
    head_seq: int
    head_hash: str
    rows: int
    chain_ok: bool
    contiguous: bool
    chain_problem: Optional[str]
    lag_rows: Optional[int]
    lag_s: Optional[float]
    last_checkpoint: Optional[dict]
    findings: dict[str, int] = field(default_factory=dict)

    @property
    def within_bounds(self) -> bool:
        return self.chain_ok and self.contiguous and not self.findings

    def to_json(self) -> dict:
        return {**asdict(self), "within_bounds": self.within_bounds}


@dataclass
class FleetReconciliation:
    target: str
    schema_version: int
    denials: str  # how many refused direct writes the log held, or why it was not read
    sources: list[SourceReport] = field(default_factory=list)
    unattributed_findings: dict[str, int] = field(default_factory=dict)  # not tied to one source

    @property
    def within_bounds(self) -> bool:
        return all(s.within_bounds for s in self.sources) and not self.unattributed_findings

    def to_json(self) -> dict:
        return {"target": self.target, "schema_version": self.schema_version, "within_bounds": self.within_bounds,
                "denials": self.denials, "unattributed_findings": self.unattributed_findings,
                "sources": [s.to_json() for s in self.sources]}


def reconcile(target: str, source: Optional[str] = None) -> FleetReconciliation:
    import psycopg

    if source is not None:
        source = source.strip().lower()
        if len(source) != 32 or any(c not in "0123456789abcdef" for c in source):
            raise UsageError(f"--source must be a store_id (32 hex digits), not {source!r}")
    conn = connect(target, application="agentwatch reconcile")
    try:
        version = schema_version(conn)
        denials = _collect_denials(conn)
        try:
            claims = conn.execute(
                "SELECT store_id, host, claimed_by, head_seq, head_hash, lag_rows, lag_s, checkpoint_size, checkpoint_at"
                " FROM agentwatch.sources WHERE %s::text IS NULL OR store_id = %s ORDER BY store_id",
                (source, source)).fetchall()
            if source is not None and not claims:
                raise UsageError(f"no source {source} on {redact(target)}")
            findings: dict[Optional[str], dict[str, int]] = {}
            for store_id, kind, count in conn.execute(
                    "SELECT store_id, kind, count(*) FROM agentwatch.findings GROUP BY 1, 2 ORDER BY 1, 2"):
                findings.setdefault(store_id, {})[kind] = count
            result = FleetReconciliation(redact(target), version, denials)
            for store_id, host, claimed_by, head_seq, head_hash, lag_rows, lag_s, cp_size, cp_at in claims:
                checked, _, _, bad_seq, problem = conn.execute(
                    "SELECT * FROM agentwatch.verify_chain(%s)", (store_id,)).fetchone()
                rows, low, high = conn.execute(
                    "SELECT count(*), coalesce(min(seq), 1), coalesce(max(seq), 0) FROM agentwatch.records"
                    " WHERE store_id = %s", (store_id,)).fetchone()
                result.sources.append(SourceReport(
                    store_id=store_id, host=host, claimed_by=claimed_by, head_seq=head_seq, head_hash=head_hash,
                    rows=rows, chain_ok=problem is None,
                    contiguous=rows == high and low == 1,
                    chain_problem=None if problem is None else f"seq {bad_seq}: {problem}",
                    lag_rows=lag_rows, lag_s=float(lag_s) if lag_s is not None else None,
                    last_checkpoint={"tree_size": cp_size, "received_at": cp_at.isoformat()} if cp_size else None,
                    findings=findings.get(store_id, {}),
                ))
            if source is None:
                result.unattributed_findings = findings.get(None, {})
            return result
        except psycopg.errors.InsufficientPrivilege as exc:
            raise FleetSchemaError(f"{redact(target)}: this login may not read the fleet tables "
                                   f"(a member of agentwatch_read may): {first_line(exc)}") from None
        except psycopg.Error as exc:
            raise FleetSchemaError(f"{redact(target)}: {first_line(exc)}") from None
    finally:
        conn.close()


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
