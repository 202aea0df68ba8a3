"""A reverse proxy on loopback that injects one fault: the fault no real server shows on demand.

The first request matching ``method`` and ``path_prefix`` is forwarded to the
server (so it takes effect there) and then answered with the fault instead of
the server's answer: ``"500"`` (an error envelope), ``"502"`` (a bare gateway
page) or ``"drop"`` (the connection closes with no answer). Everything else is
forwarded unchanged.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import httpx

HOP_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding", "keep-alive"})


@dataclass
class Seen:
    method: str
    path: str
    idempotency_key: str | None


@dataclass
class FaultProxy:
    upstream: str
    fault: str
    method: str = "POST"
    path_prefix: str = "/openapi/tools/"
    seen: list[Seen] = field(default_factory=list)
    faults_left: int = 1
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _take_fault(self, method: str, path: str) -> bool:
        with self._lock:
            if self.faults_left and method == self.method and path.startswith(self.path_prefix):
                self.faults_left -= 1
                return True
            return False

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                proxy.seen.append(
                    Seen(self.command, self.path, self.headers.get("idempotency-key"))
                )
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
                with httpx.Client(base_url=proxy.upstream, timeout=30) as client:
                    answer = client.request(self.command, self.path, headers=headers, content=body)
                if proxy._take_fault(self.command, self.path):
                    self._fault()
                    return
                self._reply(answer.status_code, list(answer.headers.items()), answer.content)

            def _fault(self) -> None:
                if proxy.fault == "drop":
                    self.close_connection = True
                    return
                if proxy.fault == "500":
                    envelope = {"code": 500, "message": "submission interrupted", "data": {}}
                    body = json.dumps(envelope).encode()
                    self._reply(500, [("content-type", "application/json")], body)
                    return
                self._reply(502, [("content-type", "text/html")], b"<h1>502 Bad Gateway</h1>")

            def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in HOP_HEADERS | {"content-encoding", "date", "server"}:
                        self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = _forward
            do_POST = _forward

        return Handler

    def __enter__(self) -> FaultProxy:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._server is not None
        assert self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
