"""The `config` and `coverage` attestation rows, read back (for sessions, show, verify and reconcile)."""

from __future__ import annotations

import json
from typing import Any, Optional, cast

import apsw


def _attestations(conn: apsw.Connection, kind: str, sql_tail: str = "", args: tuple = ()) -> list[tuple[int, dict]]:
    out = []
    for seq, text in conn.execute(
            "SELECT seq, payload FROM records WHERE kind = 'attestation' AND json_valid(payload) "
            f"AND json_extract(payload, '$.type') = ? {sql_tail}", (kind, *args)):
        try:
            doc = json.loads(text)
        except (TypeError, ValueError):
            continue
        if isinstance(doc, dict):
            out.append((seq, doc))
    return out


def latest_config(conn: apsw.Connection) -> Optional[dict]:
    """The body of the newest `config` row, with its seq; None when there is none."""
    rows = _attestations(conn, "config", "ORDER BY seq DESC LIMIT 1")
    if not rows:
        return None
    seq, doc = rows[0]
    body = doc.get("config")
    return {"seq": seq, **body} if isinstance(body, dict) else None


def coverage_by_session(conn: apsw.Connection, harness: Optional[str] = None,
                        session_id: Optional[str] = None) -> dict[tuple[str, str], dict]:
    """The newest `coverage` row's body per (harness, session_id)."""
    tail, args = "", cast(tuple, ())
    if session_id is not None:
        tail, args = "AND json_extract(payload, '$.coverage.session_id') = ?", (session_id,)
    out: dict[tuple[str, str], dict] = {}
    for seq, doc in _attestations(conn, "coverage", tail + " ORDER BY seq", args):
        body = doc.get("coverage")
        if not isinstance(body, dict):
            continue
        key = (str(body.get("harness")), str(body.get("session_id")))
        if harness is None or key[0] == harness:
            out[key] = {"seq": seq, **body}
    return out


def summary(conn: apsw.Connection) -> dict[str, Any]:
    """What the store says its record misses: the newest hook-config findings and the sessions with missing calls."""
    config = latest_config(conn)
    covered = coverage_by_session(conn)
    missing = {k: v for k, v in covered.items() if (v.get("counts") or {}).get("missing")}
    return {
        "hook_config": None if config is None else {"seq": config["seq"], "trigger": config.get("trigger"),
                                                    "findings": config.get("findings") or [],
                                                    "restored": config.get("restored") or []},
        "coverage": {
            "sessions": len(covered),
            "sessions_missing_calls": len(missing),
            "missing_calls": sum(v["counts"]["missing"] for v in missing.values()),
            "unknown": sum(1 for v in covered.values() if v.get("status") == "unknown"),
        },
    }


def findings(summary_doc: dict) -> list[str]:
    """One line per thing the record is known to miss."""
    lines = []
    config = summary_doc.get("hook_config") or {}
    for f in config.get("findings") or []:
        lines.append(f"{f.get('kind')}: {f.get('harness')} ({f.get('scope')}) {f.get('detail')}")
    cov = summary_doc.get("coverage") or {}
    if cov.get("sessions_missing_calls"):
        lines.append(f"coverage: {cov['sessions_missing_calls']} session(s) with {cov['missing_calls']} tool call(s) "
                     "in their transcript that were never recorded")
    return lines
