"""A real HTTP receiver on a free local port, answering as a test scripts it and recording each request."""

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """Answers ``script`` in order ("500", "200", "sleep:N" then 200, "hang"), then 200s.

    ``effects`` is what a well-behaved receiver does: it acts on a webhook-id once.
    """

    url: str = ""
    script: list[str] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    effects: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_answer(self) -> str:
        with self.lock:
            return self.script.pop(0) if self.script else "200"

    def record(self, headers: dict[str, str], body: bytes, status: int) -> None:
        with self.lock:
            self.requests.append(Received(headers, body))
            webhook_id = headers.get("webhook-id", "")
            if status == 200 and webhook_id not in self.effects:
                self.effects.append(webhook_id)

    def ids(self) -> list[str]:
        with self.lock:
            return [r.headers.get("webhook-id", "") for r in self.requests]


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            headers = {k.lower(): v for k, v in self.headers.items()}
            answer = receiver.next_answer()
            if answer == "hang":
                receiver.record(headers, body, 0)
                receiver.release.wait(120)
                return
            if answer.startswith("sleep:"):
                receiver.record(headers, body, 0)
                time.sleep(float(answer.split(":")[1]))
                answer = "200"
            else:
                receiver.record(headers, body, int(answer))
            self.send_response(int(answer))
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@contextlib.contextmanager
def http_receiver(*script: str) -> Iterator[Receiver]:
    receiver = Receiver(script=list(script))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(receiver))
    server.daemon_threads = True
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.release.set()
        server.shutdown()
        server.server_close()
