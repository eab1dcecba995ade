"""What `agentwatch health` shows a person: a dozen rows from the health document.

The document (docs/daemon.md, "Health") stays the complete contract behind
`--json`; this module picks what answers "is my recorder OK?" and says it in
words. Pure functions over the document: no terminal, no socket.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from agentwatch.daemon import health as daemon_health

MAX_REASONS = 3  # more reasons are summed up in one line, so the summary keeps to one screen
# Values over these make a row warn (the row only; `status` is the daemon's own verdict).
WAL_WARN_BYTES = 64 * 1024 * 1024
LAG_WARN_ROWS = 10_000


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    level: str = "ok"  # ok | warn | bad | info: how the row is coloured on a terminal


def duration(seconds: Optional[float]) -> str:
    """A short age: 0.4 s, 12 s, 3 min 5 s, 2 h 10 min, 3 d 4 h."""
    if seconds is None:
        return "-"
    if seconds < 10:
        return f"{seconds:.1f} s"
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def size(n: Optional[int]) -> str:
    if n is None:
        return "-"
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


def count(n: Any) -> str:
    return f"{n:,}" if isinstance(n, int) else ("-" if n is None else str(n))


def summary(doc: dict) -> tuple[str, list[Row]]:
    """(status, rows): at most 15 rows (16 with the process witness configured), the reasons first."""
    status = daemon_health.status_of(doc)
    reasons = list(doc.get("reasons") or [])
    rows: list[Row] = []
    level = {"recording": "ok", "degraded": "warn"}.get(status, "bad")
    for reason in reasons[:MAX_REASONS]:
        rows.append(Row("reason", reason, level))
    if len(reasons) > MAX_REASONS:
        rows.append(Row("reason", f"… and {len(reasons) - MAX_REASONS} more (--verbose or --json)", level))
    if doc.get("reachable") is False:
        # The reason names the socket; what is left to say is what waits and what to run.
        if doc.get("spool"):
            rows.append(_spool(doc["spool"]))
        elif "spool_dir" in doc:
            rows.append(Row("spool", f"none at {doc['spool_dir']}", "info"))
        if doc.get("start"):
            rows.append(Row("start it", doc["start"], "info"))
        return status, rows
    rows.append(Row("daemon", f"pid {doc.get('pid')}, up {duration(doc.get('uptime_s'))}, "
                              f"agentwatch {doc.get('version')}", "info"))
    rows.append(Row("store", f"{doc.get('store')}, head seq {count(doc.get('head_seq'))}", "info"))
    rows.append(_writer(doc.get("writer") or {}))
    rows.append(Row("last commit", f"{duration(doc.get('last_commit_age_s'))} ago", "info"))
    rows.append(_sweeper(doc.get("sweeper") or {}))
    rows.append(_findings(doc.get("sweeper") or {}))
    rows.append(_spool(doc.get("spool") or {}))
    if doc.get("evidence_trust"):
        rows.append(Row("evidence", str(doc["evidence_trust"]),
                        "warn" if doc["evidence_trust"] == "evidence: same user only" else "ok"))
    erased = doc.get("erased") or {}
    if erased.get("count"):
        last = erased.get("last") or {}
        rows.append(Row("erased", f"{count(erased['count'])} payloads; the last: seq {last.get('erased_seq')} by "
                                  f"{last.get('by')} (erasure row {last.get('erasure_seq')}): {last.get('reason')}",
                        "info"))
    wal = doc.get("wal_bytes")
    rows.append(Row("WAL", size(wal), "warn" if isinstance(wal, int) and wal > WAL_WARN_BYTES else "ok"))
    rows.append(_redaction(doc.get("redaction") or {}))
    if "ship" in doc:
        rows.append(_ship(doc.get("ship")))
    if (doc.get("process_witness") or {}).get("state", "off") != "off":  # configured: serve.process_witness
        rows.append(_process_witness(doc.get("process_witness")))
    rows.append(Row("connections", f"{count(doc.get('connections_open'))} open, "
                                   f"{count(doc.get('inflight'))} of {count(doc.get('max_inflight'))} in flight",
                    "info"))
    return status, rows


def _plural(n, noun: str) -> str:
    """`1 row`, `5 rows` (a missing count: `- rows`)."""
    return f"{count(n)} {noun}{'' if n == 1 else 's'}"


def _writer(w: dict) -> Row:
    if w.get("state", "ok") != "ok":
        return Row("writer", f"FAILING since {w.get('failing_since')}: {w.get('last_error')}", "bad")
    return Row("writer", f"ok, {_plural(w.get('rows_committed'), 'row')} in {_plural(w.get('commits'), 'commit')} since start, "
                         f"{count(w.get('queued'))} queued", "ok")


def _sweeper(s: dict) -> Row:
    state = s.get("state") or "-"
    if state == "off":
        return Row("sweeper", "off (background verification disabled)", "warn")
    lag = s.get("lag_rows")
    text = f"{state}, verified to seq {count(s.get('verified_seq'))}, lag {count(lag)} rows"
    full = s.get("full") or {}
    if full.get("state") == "running":
        text += f", full pass at seq {count(full.get('position_seq'))}"
    level = {"broken": "bad", "error": "bad"}.get(state) or ("warn" if isinstance(lag, int) and lag > LAG_WARN_ROWS else "ok")
    return Row("sweeper", text, level)


def _findings(s: dict) -> Row:
    findings = s.get("findings") or ([s["finding"]] if s.get("finding") else [])
    if not findings:
        return Row("findings", "none", "ok")
    first = findings[0]
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    return Row("findings", f"{first.get('kind')} at seq {first.get('seq')}{more}", "bad")


def _spool(sp: dict) -> Row:
    backlog, oldest, bad = sp.get("backlog") or 0, sp.get("oldest_age_s"), sp.get("bad") or 0
    text = f"{count(backlog)} waiting ({size(sp.get('backlog_bytes'))})"
    if backlog:
        text += f", oldest {duration(oldest)}"
    if bad:
        text += f", {count(bad)} quarantined"
    stale = oldest is not None and oldest > daemon_health.SPOOL_STALE_S
    return Row("spool", text, "bad" if bad or stale else ("warn" if backlog else "ok"))


def _redaction(r: dict) -> Row:
    test = r.get("self_test")
    mode = r.get("mode") or "-"
    if test is None:
        return Row("redaction", f"{mode}, self-test not run", "warn")
    if test.get("ok"):
        return Row("redaction", f"{mode}, self-test passed ({count(test.get('checked'))} checks)", "ok")
    return Row("redaction", f"{mode}, self-test FAILED ({len(test.get('failures') or [])} failures)", "bad")


def _process_witness(w: Any) -> Row:
    """The process witness (daemon/procwitness.py): off, unavailable (why), or what it recorded."""
    if not isinstance(w, dict):
        return Row("process witness", str(w), "info")
    state = w.get("state") or "-"
    if state == "off":
        return Row("process witness", "off", "info")
    if state == "unavailable":
        return Row("process witness", f"unavailable ({w.get('reason')})", "warn")
    text = (f"{state}, {count(w.get('roots'))} harness process(es), {count(w.get('execs_recorded'))} execs, "
            f"{count(w.get('lost_events'))} events lost")
    return Row("process witness", text, "warn" if w.get("lost_events") else "ok")


def _rows_ahead(ship: dict) -> int:
    """How many rows the server holds beyond the store's own head (after a rollback), else 0."""
    central, local = ship.get("central_head_seq"), ship.get("local_head_seq")
    if isinstance(central, int) and isinstance(local, int) and central > local:
        return central - local
    return 0


def _ship(ship: Any) -> Row:
    """Shipping to the fleet server: its state, how far behind, and what stops it.

    The fields are those of the fleet tier's shipper (state starting | shipping |
    caught_up | backoff | refused | stopped | off, lag_rows, lag_s, last_error,
    refused); any other shape is shown as given."""
    if not isinstance(ship, dict):
        return Row("ship", str(ship), "info")
    state = ship.get("state") or "-"
    if state == "off":
        return Row("ship", "off (no fleet server configured)", "info")
    parts = [str(state)]
    refused = ship.get("refused")
    ahead = _rows_ahead(ship)
    if ahead:  # the store was rolled back: behind by nothing, the server holds more than it
        parts.append(f"the server holds {count(ahead)} rows beyond this store's head")
    elif isinstance(ship.get("lag_rows"), int):
        parts.append(f"{count(ship['lag_rows'])} rows behind")
    if isinstance(ship.get("lag_s"), (int, float)) and ship.get("lag_rows"):
        parts.append(f"oldest unshipped {duration(ship['lag_s'])}")
    if state == "refused" and isinstance(refused, dict):
        where = f" at seq {refused.get('seq')}" if refused.get("seq") is not None else ""
        parts.append(f"refused{where} ({refused.get('kind')})")
        return Row("ship", ", ".join(parts), "bad")
    if ship.get("last_error") and state not in ("caught_up", "shipping"):
        parts.append(f"last error: {ship['last_error']}")
    level = {"backoff": "warn", "stopped": "warn", "refused": "bad"}.get(state, "ok")
    return Row("ship", ", ".join(parts), level)


# -- --verbose: every field, grouped --------------------------------------------------


# Old names the daemon still sends for --json readers, shown under their new names only.
OLD_NAMES = frozenset(("draining", "writer.checkpoints"))


def groups(doc: dict) -> list[tuple[str, list[tuple[str, str]]]]:
    """Every field of the document as (group, [(key, value)]), nested keys dotted within a group."""
    top: list[tuple[str, str]] = []
    out: list[tuple[str, list[tuple[str, str]]]] = []
    for key, value in doc.items():
        if key in ("ok", "op") or key in OLD_NAMES:
            continue
        if isinstance(value, dict):
            items: list[tuple[str, str]] = []
            _flatten("", {k: v for k, v in value.items() if f"{key}.{k}" not in OLD_NAMES}, items)
            out.append((key, items))
        else:
            top.append((key, _scalar(value)))
    return [("recorder", top), *out]


def _flatten(prefix: str, value: dict, into: list[tuple[str, str]]) -> None:
    for key, item in value.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(item, dict) and item:
            _flatten(name, item, into)
        else:
            into.append((name, _scalar(item)))


def _scalar(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value, ensure_ascii=False, sort_keys=True) if value else "none"
    return str(value)
