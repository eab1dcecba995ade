"""`agentwatch ui`: a local, read-only web view of one store.

What keeps it local and read-only:
- it listens on 127.0.0.1 only, and answers only requests whose Host header names that
  address (or `localhost`) and its port, so a page elsewhere cannot reach it through DNS
  rebinding;
- every path starts with a random per-run token (`secrets.token_urlsafe`), compared in
  constant time; without it the answer is 404 and nothing about the store;
- GET and HEAD only: every other method is 405, and no page changes anything;
- the store is opened read-only per request (`db.open_reader`) and its schema compared with
  what the migrations create, as `verify` does: a differing schema is refused, not read;
- the answers forbid what recorded content could try: a Content-Security-Policy that allows
  no script at all, styles only from this server and no remote resource, `frame-ancestors
  'none'` and `X-Frame-Options: DENY`, `nosniff`, `no-referrer` (the token is in the URL),
  `no-store`; no CORS header is ever sent.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import secrets
import threading
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import parse_qs, urlsplit

from agentwatch.coverage import rows as coverage_rows
from agentwatch.errors import AgentwatchError
from agentwatch.readers import sessions as sessions_reader
from agentwatch.store import db, schema_check
from agentwatch.ui import pages

log = logging.getLogger(__name__)

HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                                "frame-ancestors 'none'; base-uri 'none'"),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
SQL_ROWS_SHOWN = 1000
SQL_TIMEOUT_S = 10.0
SQL_MAX_MEMORY_MB = 256


@dataclass
class Settings:
    """What the pages read: the store and where its evidence and daemon are."""

    store: Path
    state_dir: Optional[Path] = None
    witness_dirs: list[Path] = field(default_factory=list)
    socket: Optional[Path] = None


class NotFound(Exception):
    pass


class Reader:
    """The pages' data, each read on a fresh read-only connection whose schema was checked first."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._sql_lock = threading.Lock()  # SQLite's heap limit is process-wide: one SQL page at a time

    def _open(self):
        conn = db.open_reader(self.settings.store)
        problems = schema_check.differences(conn)
        if problems:
            conn.close()
            raise schema_check.SchemaChanged(
                f"the store's schema differs from what agentwatch creates ({schema_check.describe(problems)}); "
                "run `agentwatch verify`: the review page does not read a store it cannot trust")
        return conn

    def check(self) -> None:
        self._open().close()

    def sessions(self, harness: Optional[str], since_ns: Optional[int], *, limit: Optional[int] = None,
                 before_seq: Optional[int] = None) -> list[sessions_reader.SessionSummary]:
        self.check()
        return sessions_reader.list_sessions(self.settings.store, since_ns=since_ns, harness=harness, limit=limit,
                                             before_seq=before_seq)

    def harnesses(self) -> list[str]:
        conn = self._open()
        try:
            return [r[0] for r in conn.execute(
                "SELECT DISTINCT harness FROM records WHERE kind = 'event' AND harness IS NOT NULL ORDER BY 1")]
        finally:
            conn.close()

    def session(self, harness: str, session_id: str) -> tuple[str, str, list, dict[int, dict], Optional[int],
                                                              Optional[dict]]:
        conn = self._open()
        try:
            harness, session_id = sessions_reader.resolve_session(conn, session_id, harness or None)
            head = sessions_reader._head(conn)
            items = sessions_reader.items(conn, harness, session_id, upto_seq=head)
            docs: dict[int, dict] = {}
            for item in items:
                if item.kind == "tool":
                    for seq in item.seqs:
                        doc = sessions_reader._doc(conn, seq)
                        if doc is not None:
                            docs[seq] = doc
            head_ns = conn.execute("SELECT max(recorded_at_ns) FROM records WHERE session_id = ? AND harness = ?",
                                   (session_id, harness)).fetchone()[0]
            coverage = coverage_rows.coverage_by_session(conn, harness, session_id).get((harness, session_id))
            _mark_coverage(items, coverage)
            return harness, session_id, items, docs, head_ns, coverage
        finally:
            conn.close()

    def record(self, seq: int) -> tuple[dict[str, Any], Optional[dict]]:
        conn = self._open()
        try:
            row = conn.execute(
                "SELECT seq, record_id, kind, recorded_at_ns, harness, session_id, event_name, event_kind, tool_name, "
                "erased_seq, payload IS NULL AND payload_z IS NULL FROM records WHERE seq = ?", (seq,)).fetchone()
            if row is None:
                raise NotFound(f"no record {seq} in this store")
            names = ("seq", "record_id", "kind", "recorded_at_ns", "harness", "session_id", "event_name",
                     "event_kind", "tool_name", "erased_seq")
            fields = dict(zip(names, row[:10]))
            fields["recorded_at"] = pages.when(fields["recorded_at_ns"])
            chain = conn.execute("SELECT prev_hash, hash FROM chain WHERE seq = ?", (seq,)).fetchone()
            if chain:
                fields["prev_hash"], fields["hash"] = chain
            document = None if row[10] else sessions_reader._doc(conn, seq)
            return fields, document
        finally:
            conn.close()

    def proof(self, seq: int) -> dict[str, Any]:
        from agentwatch.evidence import bundle

        self.check()
        return bundle.prove_inclusion(self.settings.store, seq, state_dir=self.settings.state_dir)

    def recorder(self) -> dict[str, Any]:
        conn = self._open()
        try:
            return coverage_rows.summary(conn)
        finally:
            conn.close()

    def store_status(self) -> tuple[dict[str, Any], Optional[dict], dict[str, Any]]:
        from agentwatch.daemon import health as health_client
        from agentwatch.evidence import audit, checkpoints

        self.check()
        try:
            result = audit.verify_store(self.settings.store, update_anchor=False, state_dir=self.settings.state_dir,
                                        signer_dir=self.settings.state_dir, witness_dirs=self.settings.witness_dirs,
                                        jobs=1)
            verify = {"status": "ok" if result.exit_code == 0 else "problem", **result.to_json()}
        except AgentwatchError as exc:
            verify = {"status": "error", "error": str(exc)}
        try:
            checkpoint = checkpoints.checkpoint_info(self.settings.store, self.settings.state_dir)
        except AgentwatchError:
            checkpoint = None
        health: dict[str, Any] = {"status": "unknown", "detail": None}
        if self.settings.socket is not None:
            try:
                doc = health_client.query(self.settings.socket, timeout=1.0)
                health = {"status": health_client.status_of(doc), "detail": doc}
            except AgentwatchError as exc:
                health = {"status": "stopped", "detail": {"error": str(exc)}}
        return verify, checkpoint, health

    def sql(self, query: str) -> tuple[list[str], list[tuple], int]:
        from agentwatch.readers import sql as sqlquery

        self.check()
        with self._sql_lock:
            columns, stream = sqlquery.run(self.settings.store, query, timeout=SQL_TIMEOUT_S,
                                           max_memory_mb=SQL_MAX_MEMORY_MB)
            rows: list[tuple] = []
            cut = 0
            for row in stream:  # the guard's timeout bounds reading the rest as well
                if len(rows) < SQL_ROWS_SHOWN:
                    rows.append(row)
                else:
                    cut += 1
            return columns, rows, cut


def _mark_coverage(items: list, coverage: Optional[dict]) -> None:
    """Name, on the timeline, the recorded calls a coverage finding points at (extra or mismatched:
    the transcript does not hold them as recorded); missing calls have no row and are listed apart."""
    if not coverage:
        return
    by_seq: dict[int, list[dict]] = {}
    for finding in coverage.get("findings") or []:
        if isinstance(finding, dict) and isinstance(finding.get("seq"), int) and finding.get("kind") != "missing":
            by_seq.setdefault(finding["seq"], []).append(
                {"kind": f"coverage_{finding.get('kind')}", "detail": finding.get("detail")})
    for item in items:
        for seq in item.seqs:
            item.findings.extend(by_seq.get(seq, []))


def _since_ns(text: str) -> Optional[int]:
    return sessions_reader.parse_since(text) if text else None


class App:
    """Routes a request path and query to a page: (status, content type, body, extra headers)."""

    def __init__(self, reader: Reader, token: str):
        self.reader = reader
        self.token = token
        self.nav = pages.Nav(f"/{token}")
        self.routes: list[tuple[re.Pattern[str], Callable[..., tuple[int, str, bytes, dict[str, str]]]]] = [
            (re.compile(r"/"), self.sessions_page),
            (re.compile(r"/session"), self.session_page),
            (re.compile(r"/record/(\d{1,19})"), self.record_page),
            (re.compile(r"/record/(\d{1,19})/proof\.json"), self.proof),
            (re.compile(r"/store"), self.store_page),
            (re.compile(r"/sql"), self.sql_page),
            (re.compile(r"/static/app\.css"), self.css),
        ]

    def handle(self, raw_path: str) -> tuple[int, str, bytes, dict[str, str]]:
        parts = urlsplit(raw_path)
        token, _, rest = parts.path.removeprefix("/").partition("/")
        rest = "/" + rest
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return self._text(HTTPStatus.NOT_FOUND, "not found")
        query = {k: v[-1] for k, v in parse_qs(parts.query, max_num_fields=20).items()}
        for pattern, handler in self.routes:
            match = pattern.fullmatch(rest)
            if match:
                try:
                    return handler(query, *match.groups())
                except NotFound as exc:
                    return self._html(HTTPStatus.NOT_FOUND, pages.error_page(self.nav, "not found", str(exc)))
                except AgentwatchError as exc:
                    code = HTTPStatus.BAD_REQUEST if getattr(exc, "exit_code", 2) == 2 else HTTPStatus.SERVICE_UNAVAILABLE
                    return self._html(code, pages.error_page(self.nav, "cannot show this", str(exc)))
        return self._html(HTTPStatus.NOT_FOUND, pages.error_page(self.nav, "not found", f"no page {rest}"))

    @staticmethod
    def _html(status: int, body: str) -> tuple[int, str, bytes, dict[str, str]]:
        return status, "text/html; charset=utf-8", body.encode(), {}

    @staticmethod
    def _text(status: int, body: str) -> tuple[int, str, bytes, dict[str, str]]:
        return status, "text/plain; charset=utf-8", body.encode(), {}

    def sessions_page(self, q: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        harness = q.get("harness", "")
        since = q.get("since", "")
        outcome = q.get("outcome", "") if q.get("outcome", "") in pages.OUTCOME_FILTERS else ""
        coverage = q.get("coverage", "") if q.get("coverage", "") in pages.COVERAGE_FILTERS else ""
        sort = q.get("sort", "last") if q.get("sort", "last") in pages.SORTS else "last"
        order = "asc" if q.get("order") == "asc" else "desc"
        try:
            page_no = int(q.get("page", "1"))
        except ValueError:
            page_no = 1
        if sort == "last" and order == "desc" and not outcome and not coverage:
            # The default view, newest first: a page is read back from the head (the reader's
            # paging), so it costs what its sessions hold, not what the store holds.
            try:
                before = int(q["before"]) if "before" in q else None
            except ValueError:
                before = None
            found = self.reader.sessions(harness or None, _since_ns(since), limit=pages.PAGE_SIZE, before_seq=before)
            older = min(s.last_seq for s in found) if len(found) == pages.PAGE_SIZE else None
            body = pages.sessions_page(self.nav, found, harness=harness, since=since, outcome=outcome, sort=sort,
                                       order=order, page_no=1, harnesses=self.reader.harnesses(), coverage=coverage,
                                       paged=(before, older))
            return self._html(HTTPStatus.OK, body)
        found = self.reader.sessions(harness or None, _since_ns(since))
        body = pages.sessions_page(self.nav, found, harness=harness, since=since, outcome=outcome, sort=sort,
                                   order=order, page_no=page_no, harnesses=self.reader.harnesses(), coverage=coverage)
        return self._html(HTTPStatus.OK, body)

    def session_page(self, q: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        session_id = q.get("id", "")
        if not session_id:
            raise NotFound("which session? (id= is missing)")
        harness, session_id, items, docs, head_ns, coverage = self.reader.session(q.get("harness", ""), session_id)
        return self._html(HTTPStatus.OK, pages.session_page(self.nav, harness, session_id, items, docs, head_ns,
                                                            coverage))

    def record_page(self, q: dict[str, str], seq: str) -> tuple[int, str, bytes, dict[str, str]]:
        fields, document = self.reader.record(int(seq))
        return self._html(HTTPStatus.OK, pages.record_page(self.nav, fields, document))

    def proof(self, q: dict[str, str], seq: str) -> tuple[int, str, bytes, dict[str, str]]:
        doc = self.reader.proof(int(seq))
        body = json.dumps(doc, indent=2, sort_keys=True).encode()
        return (HTTPStatus.OK, "application/json", body,
                {"Content-Disposition": f"attachment; filename=\"agentwatch-proof-{int(seq)}.json\""})

    def store_page(self, q: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        verify, checkpoint, health = self.reader.store_status()
        return self._html(HTTPStatus.OK, pages.store_page(self.nav, verify, checkpoint, health, self.reader.recorder()))

    def sql_page(self, q: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        query = q.get("q", "")
        if not query.strip():
            return self._html(HTTPStatus.OK, pages.sql_page(self.nav, "", [], []))
        try:
            columns, rows, cut = self.reader.sql(query)
        except AgentwatchError as exc:
            return self._html(HTTPStatus.BAD_REQUEST, pages.sql_page(self.nav, query, [], [], error=str(exc)))
        return self._html(HTTPStatus.OK, pages.sql_page(self.nav, query, columns, rows, cut=cut))

    def css(self, q: dict[str, str]) -> tuple[int, str, bytes, dict[str, str]]:
        return (HTTPStatus.OK, "text/css; charset=utf-8",
                resources.files("agentwatch.ui").joinpath("static/app.css").read_bytes(), {})


def _handler(app: App, allowed_hosts: set[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "agentwatch-ui"
        sys_version = ""

        def _send(self, status: int, ctype: str, body: bytes, extra: dict[str, str], head_only: bool) -> None:
            self.send_response(status)
            for name, value in {**HEADERS, "Content-Type": ctype, "Content-Length": str(len(body)), **extra}.items():
                self.send_header(name, value)
            self.end_headers()
            if not head_only:
                self.wfile.write(body)

        def _serve(self, head_only: bool) -> None:
            if self.headers.get("Host", "") not in allowed_hosts:
                self._send(HTTPStatus.MISDIRECTED_REQUEST, "text/plain; charset=utf-8", b"wrong host", {}, head_only)
                return
            try:
                status, ctype, body, extra = app.handle(self.path)
            except Exception:  # a page that fails is an error page, never a dead server
                log.exception("ui: page failed")
                status, ctype, body, extra = App._text(HTTPStatus.INTERNAL_SERVER_ERROR, "this page failed; see the log")
            self._send(status, ctype, body, extra, head_only)

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            self._serve(head_only=False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._serve(head_only=True)

        def _refuse(self) -> None:
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", b"read-only",
                       {"Allow": "GET, HEAD"}, head_only=False)

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            log.debug("ui: " + format, *args)  # the token is in the path: never on stderr by default

    return Handler


class UIServer:
    """The listening server; `url` is what to open (it holds the token)."""

    def __init__(self, settings: Settings, port: int = 0, token: Optional[str] = None):
        self.token = token or secrets.token_urlsafe(24)
        self.app = App(Reader(settings), self.token)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.app, set()))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        self.httpd.RequestHandlerClass = _handler(self.app, hosts)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{self.token}/"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start_background(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="agentwatch-ui", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
