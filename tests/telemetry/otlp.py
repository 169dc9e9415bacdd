"""A local OTLP/HTTP trace receiver: what the web and worker processes export, decoded for the tests."""

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass
class Span:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    links: list[tuple[str, str]]  # (trace id, span id), hex
    attributes: dict[str, str] = field(default_factory=dict)  # the span's own, string values


@dataclass
class Received:
    url: str
    spans: list[Span] = field(default_factory=list)

    def named(self, name: str) -> list[Span]:
        return [span for span in self.spans if span.name == name]


def _decode(body: bytes) -> list[Span]:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    spans = []
    for resource_spans in request.resource_spans:
        attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    Span(
                        service=attributes.get("service.name", ""),
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        links=[(link.trace_id.hex(), link.span_id.hex()) for link in span.links],
                        attributes={a.key: a.value.string_value for a in span.attributes},
                    )
                )
    return spans


@contextlib.contextmanager
def otlp_receiver() -> Iterator[Received]:
    """Serve ``POST /v1/traces`` on a free local port until the block ends."""
    received = Received(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                received.spans.extend(_decode(body))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    received.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
