"""An OTLP/HTTP traces receiver started by a test, on loopback, decoding with the
OpenTelemetry project's own protobuf definitions (the opentelemetry-proto package)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2


class Receiver:
    """Collects every ExportTraceServiceRequest POSTed to /v1/traces; `fail_next` answers 503 instead."""

    def __init__(self):
        self.requests: list[trace_service_pb2.ExportTraceServiceRequest] = []
        self.content_types: list[str] = []
        self.headers: list[dict] = []
        self.fail_next = 0
        self.reject_spans = 0  # reported as partial success in each answer
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (the http.server API)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                if receiver.fail_next:
                    receiver.fail_next -= 1
                    self.send_response(503)
                    self.end_headers()
                    return
                request = trace_service_pb2.ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.requests.append(request)
                receiver.content_types.append(self.headers.get("Content-Type"))
                receiver.headers.append({k.lower(): v for k, v in self.headers.items()})
                response = trace_service_pb2.ExportTraceServiceResponse()
                if receiver.reject_spans:
                    response.partial_success.rejected_spans = receiver.reject_spans
                    response.partial_success.error_message = "test receiver rejects some"
                data = response.SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "Receiver":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def spans(self) -> list:
        return [span for req in self.requests for rs in req.resource_spans for ss in rs.scope_spans
                for span in ss.spans]


def attrs(kvs) -> dict:
    """Attributes of a decoded span or event as a plain dict."""
    out = {}
    for kv in kvs:
        field = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, field) if field else None
    return out
