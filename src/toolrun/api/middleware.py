"""The outermost ASGI layer: request id, access log line, metrics, headers, last-resort 500.

Pure ASGI rather than BaseHTTPMiddleware: it costs one function call per
message and never buffers a streamed file.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

import orjson
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolrun.api.envelope import error_body
from toolrun.api.metrics import HttpMetrics
from toolrun.core.clock import Clock, isoformat
from toolrun.core.ratelimit import RateLimitStatus

access_log = logging.getLogger("toolrun.access")
error_log = logging.getLogger("toolrun.error")
REQUEST_ID_PATTERN = re.compile(r"^[A-Za-z0-9._\-]{1,128}$")
MAX_JSON_BODY_BYTES = 1024 * 1024
# Routes that take files carry their own, larger limits.
LARGE_BODY_PREFIXES = ("/openapi/uploads/", "/openapi/mermaid/")


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _request_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            text: str = value.decode("latin-1")
            if REQUEST_ID_PATTERN.match(text):
                return text
    return uuid.uuid4().hex


def rate_limit_headers(status: RateLimitStatus) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": str(status.limit),
        "X-RateLimit-Remaining": str(status.remaining),
        "X-RateLimit-Reset": str(int(status.reset_at.timestamp())),
    }


class RequestMiddleware:
    def __init__(self, app: ASGIApp, *, metrics: HttpMetrics, clock: Clock) -> None:
        self.app = app
        self.metrics = metrics
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _request_id(scope)
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        response: dict[str, Any] = {"status": 500, "started": False}

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                response["status"] = message["status"]
                response["started"] = True
                headers = MutableHeaders(scope=message)
                headers["X-Request-Id"] = request_id
                limit_status = state.get("rate_limit")
                if limit_status is not None:
                    for name, value in rate_limit_headers(limit_status).items():
                        headers[name] = value
            await send(message)

        length = _declared_length(scope)
        if (
            length is not None
            and length > MAX_JSON_BODY_BYTES
            and not scope["path"].startswith(LARGE_BODY_PREFIXES)
        ):
            await self._send_error(
                scope,
                send_with_headers,
                413,
                f"request body of {length} bytes is over the limit of {MAX_JSON_BODY_BYTES} bytes",
            )
            self._record(scope, state, 413, time.perf_counter() - started)
            return
        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            error_log.exception("unhandled error in %s %s", scope["method"], scope["path"])
            if not response["started"]:
                await self._send_error(scope, send_with_headers, 500, "internal error")
        finally:
            self._record(scope, state, response["status"], time.perf_counter() - started)

    async def _send_error(self, scope: Scope, send: Send, status: int, message: str) -> None:
        body = orjson.dumps(error_body(status, message, path=scope["path"], now=self.clock()))
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _record(self, scope: Scope, state: dict[str, Any], status: int, seconds: float) -> None:
        route = scope.get("route")
        route_path = getattr(route, "path", None) or "unmatched"
        self.metrics.observe(
            method=scope["method"], route=route_path, status=status, seconds=seconds
        )
        if access_log.isEnabledFor(logging.INFO):
            access_log.info(
                orjson.dumps(
                    {
                        "ts": isoformat(self.clock()),
                        "event": "request",
                        "requestId": state.get("request_id"),
                        "method": scope["method"],
                        "path": scope["path"],
                        "route": route_path,
                        "status": status,
                        "durationMs": round(seconds * 1000, 2),
                        "accountId": state.get("account_id"),
                    }
                ).decode()
            )
