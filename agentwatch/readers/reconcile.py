"""Exact accounting at every boundary: what senders sent, what the store holds,
what a consumer was delivered. Each count comes from its own source; nothing is
inferred, and the gate is equality, never `>=`.

Sources:
- the sender ledger (JSON lines, one per client attempt: record_id, outcome
  acked|spooled|failed, seq, optional reason) — written by `agentwatch-hook`
  when AGENTWATCH_LEDGER is set, and by every soak;
- the store, read in a snapshot bounded by its head at the start;
- a named consumer's cursor and delivery log (agentwatch.readers.consumers).

Memory: the store is streamed; the ledger keeps one entry per record_id it
names; the consumer check keeps one bit per seq in its range.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from agentwatch.coverage import rows as coverage_rows
from agentwatch.errors import UsageError, exit_for_findings
from agentwatch.evidence import audit
from agentwatch.readers.consumers import Consumer
from agentwatch.store import db
from agentwatch.verify import identity
from agentwatch.verify.known_stores import IDENTITY_KINDS

CHUNK = 50_000
OUTCOMES = ("acked", "spooled", "failed")


@dataclass
class Predicate:
    name: str
    ok: bool | None  # None: not evaluated (its source was not given)
    detail: str
    rests_on: list[str] | None = None  # within_bounds only: the predicates that were evaluated
    skipped: list[str] | None = None  # within_bounds only: the predicates that were not

    def to_json(self) -> dict:
        doc: dict[str, Any] = {"name": self.name, "ok": self.ok, "detail": self.detail}
        if self.rests_on is not None:
            doc.update(rests_on=self.rests_on, skipped=self.skipped)
        return doc


@dataclass
class Reconciliation:
    store: str
    head_seq: int
    predicates: list[Predicate] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)

    store_findings: list = field(default_factory=list)  # findings about the store as a whole

    @property
    def within_bounds(self) -> bool:
        return all(p.ok is not False for p in self.predicates)

    @property
    def exit_code(self) -> int:
        """0 within bounds; 4-7 for a finding about the store as a whole (errors.FINDING_EXIT); else 1."""
        if self.within_bounds:
            return 0
        return max(exit_for_findings(f.kind for f in self.store_findings), 1)

    def to_json(self) -> dict:
        return {
            "store": self.store,
            "head_seq": self.head_seq,
            "within_bounds": self.within_bounds,
            "predicates": {p.name: p.to_json() for p in self.predicates},
            "counts": self.counts,
            "findings": [f.to_json() for f in self.store_findings],
        }


def reconcile(store: Path, *, consumer: str | None = None, ledger: Path | None = None,
              state_dir: Path | None = None, progress=None) -> Reconciliation:
    """`progress(done, total)` follows the full chain verification, the longest part on a large store."""
    identity.check_missing(store, state_dir)  # a remembered path with no store: `replaced` (exit 4)
    conn = db.open_reader(store)
    try:
        store_id = db.store_id(conn)
        head = db.one(conn.execute("SELECT coalesce(max(seq), 0) FROM records"))[0]
        result = Reconciliation(str(store), head)
        by_kind = dict(conn.execute("SELECT kind, count(*) FROM records WHERE seq <= ? GROUP BY kind", (head,)))
        counts = result.counts
        counts["by_kind"] = {k: by_kind.get(k, 0) for k in ("event", "attestation", "gap")}
        counts["stored"] = counts["by_kind"]["event"]
        counts["replayed_from_spool"] = db.one(conn.execute(
            "SELECT count(*) FROM records WHERE seq <= ? AND kind = 'event' "
            "AND json_extract(payload, '$.client.delivery') = 'spool'", (head,)
        ))[0]
        counts["gaps_by_reason"] = dict(cast(Any, conn.execute(
            "SELECT coalesce(json_extract(payload, '$.reason'), '(none)'), count(*) FROM records "
            "WHERE seq <= ? AND kind = 'gap' GROUP BY 1 ORDER BY 1", (head,)
        ).fetchall()))

        checked = audit.verify_store(store, full=True, state_dir=state_dir, update_anchor=False, progress=progress)
        chain = [f for f in checked.findings if f.kind not in IDENTITY_KINDS and f.kind != "foreign_rows"]
        foreign = [f for f in checked.findings if f.kind == "foreign_rows"]
        whole = [f for f in checked.findings if f.kind in IDENTITY_KINDS]
        result.store_findings = whole
        result.predicates.append(Predicate(
            "chain_ok", not chain,
            f"{checked.rows_checked} rows verified" if not chain
            else f"seq {chain[0].seq}: {chain[0].kind}: {chain[0].detail}",
        ))
        # The store as a whole: the one remembered at this path, as long as it was seen, its schema
        # the shipped one (verify/identity.py). Counts against a replaced store prove nothing.
        result.predicates.append(Predicate(
            "store_identity", not whole,
            "the store remembered at this path, schema as shipped" if not whole
            else "; ".join(f"{f.kind}: {f.detail}" for f in whole),
        ))
        # Rows the recorder's writer did not write (verify/foreign.py): counts that include them prove nothing.
        result.predicates.append(Predicate(
            "no_foreign_rows", not foreign,
            "every row was written by the recorder's writer" if not foreign
            else "; ".join(f"seq {f.seq}: {f.detail}" for f in foreign),
        ))
        result.predicates.append(_contiguous(conn, head))
        result.predicates.append(_no_loss(conn, ledger, head, counts))
        result.predicates.append(_exactly_once(conn, store_id, consumer, head, state_dir, counts))
        result.predicates.append(_recorder_complete(conn, counts))
        result.predicates.append(_within_bounds(result.predicates))
        return result
    finally:
        conn.close()


def _recorder_complete(conn, counts: dict) -> Predicate:
    """What the record says it misses (coverage/rows.py): hook-config findings in the newest `config`
    row, sessions whose `coverage` row lists calls the transcript has and the store does not."""
    summary = coverage_rows.summary(conn)
    counts["recorder"] = summary
    if summary["hook_config"] is None and not summary["coverage"]["sessions"]:
        return Predicate("recorder_complete", None, "no config or coverage row in the store")
    problems = coverage_rows.findings(summary)
    if problems:
        return Predicate("recorder_complete", False, "; ".join(problems))
    return Predicate("recorder_complete", True,
                     f"hook configs as installed; {summary['coverage']['sessions']} session(s) checked, none missing calls")


def _within_bounds(predicates: list[Predicate]) -> Predicate:
    """The verdict, naming what it rests on: a skipped predicate is never counted as holding."""
    held = [p.name for p in predicates if p.ok is True]
    failed = [p.name for p in predicates if p.ok is False]
    skipped = [p.name for p in predicates if p.ok is None]
    if failed:
        detail = f"fails: {', '.join(failed)}"
    else:
        detail = f"rests on {', '.join(held)}"
    if skipped:
        detail += f"; not checked: {', '.join(skipped)}"
    return Predicate("within_bounds", not failed, detail, rests_on=held + failed, skipped=skipped)


# Ledger reasons that say the daemon was not there or not in time; any other reason
# is a refusal code from the daemon (docs/protocol.md), counted as rejected.
_NOT_REJECTED = ("timeout", "no_daemon", "error")


def boundaries(result: Reconciliation) -> list[tuple[str, str, str]]:
    """(boundary, count, source) rows, in the order a record passes them; a source not given shows '-'."""
    c = result.counts
    rows: list[tuple[str, str, str]] = []
    has_ledger = "attempted" in c
    ledger = "ledger" if has_ledger else "ledger (not given)"

    def lrow(label: str, key: str) -> None:
        rows.append((label, str(c[key]) if has_ledger else "-", ledger))

    lrow("sent", "attempted")
    lrow("acknowledged", "acknowledged")
    reasons = c.get("spool_reasons") or {}
    for reason in sorted(r for r in reasons if r not in _NOT_REJECTED):
        rows.append((f"rejected: {reason}", str(reasons[reason]), ledger))
    if has_ledger:
        rows.append(("timed out", str(reasons.get("timeout", 0)), ledger))
        rows.append(("daemon unreachable", str(reasons.get("no_daemon", 0) + reasons.get("error", 0)), ledger))
    lrow("spooled", "spooled")
    lrow("failed (not spooled)", "failed")
    for kind, n in c["by_kind"].items():
        rows.append((f"stored: {kind}", str(n), "store"))
    rows.append(("replayed from spool", str(c["replayed_from_spool"]), "store"))
    rows.append(("duplicates", str(c.get("duplicated", 0)), "store"))
    for reason, n in (c.get("gaps_by_reason") or {}).items():
        rows.append((f"gap recorded: {reason}", str(n), "store"))
    lrow("missing", "missing")
    if has_ledger and c.get("ack_seq_mismatch"):
        rows.append(("acked at another seq", str(c["ack_seq_mismatch"]), "ledger vs store"))
    if "consumer" in c:
        src = f"consumer {c['consumer']}"
        rows.append(("in consumer range", str(c["records_in_range"]), "store"))
        rows.append(("delivered", str(c["delivered"]), src))
        rows.append(("redelivered", str(c["redelivered"]), src))
        rows.append(("undelivered", str(c["undelivered"]), src))
        rows.append(("delivered, not stored", str(c["delivered_not_stored"]), src))
        rows.append(("in flight", str(c["in_flight"]), src))
    else:
        rows.append(("delivered", "-", "consumer (not given)"))
    return rows


def _contiguous(conn, head: int) -> Predicate:
    count, low = conn.execute("SELECT count(*), coalesce(min(seq), 1) FROM records WHERE seq <= ?", (head,)).fetchone()
    ok = count == head and low == 1
    return Predicate("contiguous", ok, f"seq 1..{head}, {count} rows" if ok else f"{head - count} seqs missing below {head}")


def _no_loss(conn, ledger: Path | None, head: int, counts: dict) -> Predicate:
    if ledger is None:
        return Predicate("no_loss", None, "no sender ledger given (--ledger)")
    outcomes: dict[str, str] = {}
    acked_seq: dict[str, int] = {}
    reasons: Counter = Counter()
    attempts = malformed = 0
    try:
        lines = ledger.open("rb")
    except OSError as exc:
        raise UsageError(f"{ledger}: cannot read ledger ({exc.strerror})") from None
    with lines:
        for raw in lines:
            try:
                entry = json.loads(raw)
                record_id, outcome = entry["record_id"], entry["outcome"]
                if not isinstance(record_id, str) or outcome not in OUTCOMES:
                    raise ValueError
            except (ValueError, KeyError, TypeError):
                malformed += 1
                continue
            attempts += 1
            # A record acked once stays acked, whatever a later attempt says.
            if outcomes.get(record_id) != "acked":
                outcomes[record_id] = outcome
            if outcome == "acked" and isinstance(entry.get("seq"), int):
                acked_seq[record_id] = entry["seq"]
            if outcome == "spooled" and entry.get("reason"):
                reasons[entry["reason"]] += 1
    per_outcome = Counter(outcomes.values())
    missing = mismatched = 0
    lookup = "SELECT seq FROM records WHERE record_id = ? AND seq <= ?"
    for record_id in outcomes:
        row = conn.execute(lookup, (record_id, head)).fetchone()
        if row is None:
            missing += 1
        elif record_id in acked_seq and acked_seq[record_id] != row[0]:
            mismatched += 1
    counts.update(
        attempted=len(outcomes), attempts=attempts, acknowledged=per_outcome["acked"],
        spooled=per_outcome["spooled"], failed=per_outcome["failed"], timed_out=reasons.get("timeout", 0),
        spool_reasons=dict(reasons), missing=missing, ack_seq_mismatch=mismatched, ledger_malformed=malformed,
    )
    ok = missing == 0 and mismatched == 0 and malformed == 0
    detail = (f"all {len(outcomes)} ledger records stored" if ok else
              f"{missing} missing, {mismatched} acked at another seq, {malformed} unreadable ledger lines")
    return Predicate("no_loss", ok, detail)


def _exactly_once(conn, store_id: bytes, name: str | None, head: int, state_dir, counts: dict) -> Predicate:
    total, distinct = conn.execute(
        "SELECT count(*), count(DISTINCT record_id) FROM records WHERE seq <= ?", (head,)
    ).fetchone()
    counts["duplicated"] = total - distinct
    problems = [f"{total - distinct} record_ids stored twice"] if total != distinct else []
    if name is not None:
        consumer = Consumer(name, store_id, state_dir)
        cursor = consumer.load()
        if cursor is None:
            raise UsageError(f"no consumer named {name!r} for this store")
        delivered, redelivered, undelivered, phantom, in_flight, records = _compare_deliveries(conn, consumer, cursor)
        counts.update(consumer=name, consumer_range=[cursor.start_seq, cursor.acked_seq], records_in_range=records,
                      delivered=delivered, redelivered=redelivered, undelivered=undelivered,
                      delivered_not_stored=phantom, in_flight=in_flight)
        if delivered != records or undelivered or phantom:
            problems.append(f"consumer {name}: delivered {delivered} != records {records} "
                            f"({undelivered} undelivered, {phantom} delivered but not stored in range)")
    ok = not problems
    detail = "; ".join(problems) if problems else (
        f"no duplicates; consumer {name}: delivered == records == {counts['delivered']}" if name else "no duplicates")
    return Predicate("exactly_once", ok, detail)


def _compare_deliveries(conn, consumer: Consumer, cursor) -> tuple[int, int, int, int, int, int]:
    start, end = cursor.start_seq, cursor.acked_seq
    width = max(end - start + 1, 0)
    seen = bytearray((width + 7) // 8)
    delivered = redelivered = in_flight = outside = 0
    for seq in consumer.deliveries():
        if seq > end:
            in_flight += 1  # delivered, not yet acknowledged: counted when the cursor passes it
            continue
        if seq < start:
            outside += 1
            continue
        i = seq - start
        if seen[i >> 3] & (1 << (i & 7)):
            redelivered += 1
        else:
            seen[i >> 3] |= 1 << (i & 7)
            delivered += 1
    sql = "SELECT seq FROM records WHERE seq > ? AND seq <= ?"
    args: list = []
    if cursor.kinds:
        sql += f" AND kind IN ({','.join('?' * len(cursor.kinds))})"
        args = list(cursor.kinds)
    sql += " ORDER BY seq LIMIT ?"
    records = undelivered = 0
    after = start - 1
    while True:
        rows = conn.execute(sql, [after, end, *args, CHUNK]).fetchall()
        for (seq,) in rows:
            records += 1
            i = seq - start
            if seen[i >> 3] & (1 << (i & 7)):
                seen[i >> 3] &= ~(1 << (i & 7))
            else:
                undelivered += 1
        if len(rows) < CHUNK:
            break
        after = rows[-1][0]
    phantom = sum(bin(b).count("1") for b in seen) + outside
    return delivered, redelivered, undelivered, phantom, in_flight, records
