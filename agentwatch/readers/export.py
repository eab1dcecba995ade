"""`agentwatch export`: committed records out to other tools, as JSON lines or OTLP traces.

- `jsonl`: one record per line (the `tail --json` form: seq, record_id, kind,
  recorded_at_ns, hash, payload) on a binary stream.
- `otlp`: OpenTelemetry traces over OTLP/HTTP (protobuf) to `<endpoint>/v1/traces`,
  after the GenAI semantic conventions (readers/otlp.py).

Records are read from the store (read-only, short statements) in seq order, up
to the head at the start. With `consumer=NAME` the export is a durable named
consumer (readers/consumers.py): each batch is delivered, then logged, then
acknowledged, so the next run starts after the last acknowledged seq. A
consumer is bound to its format and destination at its first run; another
destination under the same name is refused, so records acknowledged by one
endpoint are never sent to it again and never skipped for another.

The one window no HTTP exporter can close alone: a batch sent, then the
process killed before the answer is logged. Before each OTLP request the
exporter writes the batch's range to `<name>.pending.json`; a run that finds
one stops and names the range (exit 1) instead of guessing. `resend_uncertain`
sends that batch again (its spans carry the same ids, so a backend that keys
spans by id keeps one copy); `skip_uncertain` acknowledges it without sending.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Optional

from agentwatch import platform_layer
from agentwatch.errors import AgentwatchError, UsageError
from agentwatch.readers import otlp, schema_guard
from agentwatch.readers.consumers import Consumer
from agentwatch.readers.tail import head_seq, read_after
from agentwatch.store import db

FORMATS = ("jsonl", "otlp")
BATCH_ROWS = 500
BINDING_FORMAT = "agentwatch-export/1"
HTTP_TIMEOUT_S = 10.0


class EndpointError(AgentwatchError):
    """The OTLP endpoint cannot be reached or refused a batch."""

    exit_code = 3

    def __init__(self, message: str, *, uncertain: bool = False):
        super().__init__(message)
        self.uncertain = uncertain  # the request may have arrived (no answer came back)


class UncertainBatch(AgentwatchError):
    """A batch was sent and its answer was never logged: it may or may not have arrived."""

    exit_code = 1


@dataclass
class ExportReport:
    format: str
    destination: str
    consumer: Optional[str]
    first_seq: Optional[int] = None
    last_seq: Optional[int] = None
    records: int = 0
    spans: int = 0
    requests: int = 0
    rejected_spans: int = 0
    resent: list[int] = field(default_factory=list)  # [first, last] of a batch sent again (resend_uncertain)
    skipped: list[int] = field(default_factory=list)  # [first, last] of a batch acknowledged unsent
    next_from: Optional[int] = None  # with a limit: where the next page starts (--from), None when none remain

    def to_json(self) -> dict:
        doc = dict(self.__dict__)
        next_from = doc.pop("next_from")
        doc["next"] = {"from": next_from} if next_from is not None else None
        return doc


def traces_url(endpoint: str) -> str:
    """OTLP/HTTP: a base endpoint gets `/v1/traces`; a URL already ending in it is used as given."""
    endpoint = endpoint.rstrip("/")
    return endpoint if endpoint.endswith("/v1/traces") else endpoint + "/v1/traces"


def check_endpoint(endpoint: str) -> None:
    """UsageError unless `endpoint` is an http(s) URL with a host (a malformed one is said, not raised
    from deep in the HTTP client)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - reading it checks the port
    except ValueError as exc:
        raise UsageError(f"OTLP endpoint {endpoint!r}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"OTLP endpoint {endpoint!r}: expected http://HOST:PORT or https://HOST (OTLP/HTTP)")


def default_endpoint() -> Optional[str]:
    """The OpenTelemetry SDK's variables: the traces endpoint as given, else the base endpoint."""
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    return os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None


def default_headers() -> dict[str, str]:
    """Extra request headers (an API key, say) from the OpenTelemetry SDK's variables:
    `key=value` pairs, comma-separated, values percent-encoded; the traces variable wins."""
    text = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or os.environ.get("OTEL_EXPORTER_OTLP_HEADERS") or ""
    headers = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            headers[urllib.parse.unquote(key.strip())] = urllib.parse.unquote(value.strip())
    return headers


def post(url: str, body: bytes, timeout: float = HTTP_TIMEOUT_S) -> bytes:
    """One OTLP/HTTP request; the response body on 2xx, EndpointError otherwise."""
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={**default_headers(), "Content-Type": "application/x-protobuf"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.read()
    except urllib.error.HTTPError as exc:
        raise EndpointError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        # No connection was made (refused, no route, bad name): nothing was sent.
        raise EndpointError(f"{url}: cannot send ({exc.reason})") from None
    except OSError as exc:
        # A timeout or a reset after the request went out: it may have arrived.
        raise EndpointError(f"{url}: no answer ({exc})", uncertain=True) from None


@schema_guard.store_errors
def export(
    store: Path,
    *,
    fmt: str,
    out: Optional[BinaryIO] = None,
    endpoint: Optional[str] = None,
    from_seq: Optional[int] = None,
    consumer: Optional[str] = None,
    content: bool = False,
    resend_uncertain: bool = False,
    skip_uncertain: bool = False,
    state_dir: Optional[Path] = None,
    batch_rows: int = BATCH_ROWS,
    progress: Optional[Callable[[int, int], None]] = None,
    sender: Callable[[str, bytes], bytes] = post,
    limit: Optional[int] = None,
) -> ExportReport:
    """Export the committed records after the start (`from_seq`, or the consumer's cursor) up to the head.

    With `limit`, at most that many records (a page); the report's `next_from` names where the
    next page starts, or is None when the head was reached. Seqs are contiguous, so a page is a
    range of seqs.
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r} (expected {' or '.join(FORMATS)})")
    if fmt == "otlp":
        if not endpoint:
            raise UsageError("--format otlp needs --endpoint URL (or OTEL_EXPORTER_OTLP_ENDPOINT)")
        check_endpoint(endpoint)
        destination = traces_url(endpoint)
    else:
        if endpoint:
            raise UsageError("--endpoint is for --format otlp; jsonl goes to stdout")
        if content:
            raise UsageError("--content is for --format otlp; jsonl carries every record whole")
        destination = "stdout"
    if resend_uncertain and skip_uncertain:
        raise UsageError("choose one of --resend-uncertain and --skip-uncertain")

    conn = schema_guard.open_reader(store)
    try:
        store_id = db.store_id(conn)
        head = head_seq(conn)
        report = ExportReport(fmt, destination, consumer)
        named = cursor = None
        if consumer is not None:
            named = Consumer(consumer, store_id, state_dir)
            _bind(named, fmt, destination)
            cursor = named.load()
            if cursor is None:
                cursor = named.start(from_seq or 1, None)
            elif from_seq is not None:
                raise UsageError(f"consumer {consumer!r} resumes from its cursor (seq {cursor.acked_seq}); "
                                 "--from is not allowed")
            after = cursor.acked_seq
        else:
            after = (from_seq or 1) - 1
        mapper = otlp.Mapper(conn, store_id, content=content) if fmt == "otlp" else None

        def deliver(batch) -> None:
            if fmt == "jsonl":
                assert out is not None
                out.write(b"".join(json.dumps(r.to_json(), ensure_ascii=False).encode("utf-8") + b"\n" for r in batch))
                out.flush()
            else:
                assert mapper is not None
                spans = mapper.spans(batch)
                if spans:
                    if named is not None:
                        _write_pending(named, batch[0].seq, batch[-1].seq, destination)
                    try:
                        body = sender(destination, otlp.encode(spans, store_id))
                    except EndpointError as exc:
                        if named is not None and not exc.uncertain:
                            _clear_pending(named)  # the endpoint answered no, or was never reached
                        raise
                    report.requests += 1
                    report.spans += len(spans)
                    report.rejected_spans += otlp.decode_response(body)
            report.records += len(batch)
            if report.first_seq is None:
                report.first_seq = batch[0].seq
            report.last_seq = batch[-1].seq

        def acknowledge(batch) -> None:
            if named is not None and cursor is not None:
                named.record_deliveries(r.seq for r in batch)
                named.ack(cursor, batch[-1].seq)
                _clear_pending(named)

        try:
            if named is not None:
                pending = _read_pending(named)
                if pending is not None:
                    after = _settle_pending(conn, named, pending, after, deliver, acknowledge, report,
                                            resend_uncertain, skip_uncertain)
            if limit is not None and after + limit < head:
                head = after + limit
                report.next_from = head + 1
            total = max(head - after, 0)
            done = 0
            if progress:
                progress(0, total)
            while after < head:
                batch = [r for r in read_after(conn, after, min(batch_rows, head - after)) if r.seq <= head]
                if not batch:
                    break
                deliver(batch)
                acknowledge(batch)
                after = batch[-1].seq
                done += len(batch)
                if progress:
                    progress(done, total)
        finally:
            if named is not None:
                named.close()
        return report
    finally:
        conn.close()


# -- binding and the uncertain batch ----------------------------------------------------


def _binding_path(named: Consumer) -> Path:
    return named.dir / f"{named.name}.export.json"


def _bind(named: Consumer, fmt: str, destination: str) -> None:
    """Tie a consumer name to one format and destination, at its first run."""
    path = _binding_path(named)
    try:
        bound = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        bound = None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable export binding ({exc})") from None
    want = {"format": BINDING_FORMAT, "export_format": fmt, "destination": destination}
    if bound is None:
        if named.load() is not None:
            raise UsageError(f"consumer {named.name!r} already consumes this store (tail --consumer); "
                             "give the export its own name")
        _atomic_write(named, path, want)
        return
    if bound != want:
        raise UsageError(f"consumer {named.name!r} exports {bound.get('export_format')} to "
                         f"{bound.get('destination')}; use another name for {fmt} to {destination}")


def _pending_path(named: Consumer) -> Path:
    return named.dir / f"{named.name}.pending.json"


def _write_pending(named: Consumer, first: int, last: int, destination: str) -> None:
    _atomic_write(named, _pending_path(named), {"first_seq": first, "last_seq": last, "destination": destination})


def _read_pending(named: Consumer) -> Optional[dict]:
    try:
        return json.loads(_pending_path(named).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{_pending_path(named)}: unreadable ({exc})") from None


def _clear_pending(named: Consumer) -> None:
    try:
        os.unlink(_pending_path(named))
    except FileNotFoundError:
        pass


def _settle_pending(conn, named, pending, after, deliver, acknowledge, report, resend: bool, skip: bool) -> int:
    first, last = pending["first_seq"], pending["last_seq"]
    if last <= after:  # acknowledged after all (killed between the ack and the unlink)
        _clear_pending(named)
        return after
    if not (resend or skip):
        raise UncertainBatch(
            f"records seq {first}..{last} were sent to {pending['destination']} and no answer was logged "
            "(the exporter was stopped mid-request): they may have arrived. Run again with "
            "--resend-uncertain (same span ids) or --skip-uncertain (acknowledge without sending)"
        )
    batch = [r for r in read_after(conn, after, last - after) if r.seq <= last]
    if resend:
        deliver(batch)
        report.resent = [first, last]
    else:
        report.skipped = [first, last]
    acknowledge(batch)
    return last


def _atomic_write(named: Consumer, path: Path, doc: dict) -> None:
    named.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, json.dumps(doc, sort_keys=True).encode("utf-8"))
        platform_layer.full_fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(named.dir, os.O_RDONLY)
    try:
        platform_layer.full_fsync(dir_fd)
    finally:
        os.close(dir_fd)
