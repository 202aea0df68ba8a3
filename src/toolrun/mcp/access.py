"""How a tool call reaches the HTTP API with its caller's key: one client per call.

Every tool call goes through the API (``toolrun.client.AsyncClient``), so the
credits, idempotency and rate limits are the API's own. ``RemoteApi`` serves
``toolrun mcp`` over stdio (one key, one base URL from the environment);
``InProcessApi`` serves the ``/mcp`` mount, sending each call into the same
ASGI app with the key of the HTTP request that carried the MCP message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import httpx
from starlette.requests import Request
from starlette.types import ASGIApp

from toolrun.client import AsyncClient

Sleep = Callable[[float], Awaitable[None]]


def api_key_from_headers(headers: Mapping[str, str]) -> str | None:
    """The key of ``Authorization: Bearer <key>``, else of ``X-API-Key``; None without one."""
    scheme, _, credentials = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and credentials.strip():
        return credentials.strip()
    key = headers.get("x-api-key", "").strip()
    return key or None


def origin(request: Request) -> str:
    """``scheme://host[:port]`` the request was sent to."""
    return f"{request.url.scheme}://{request.url.netloc}"


class ApiAccess(Protocol):
    """Opens the API client of one tool call and turns API paths into URLs for the caller."""

    def client(self, request: Request | None, sleep: Sleep) -> AsyncClient:
        """A client with the caller's key that waits through ``sleep``."""
        ...

    def link(self, request: Request | None, path: str) -> str:
        """The absolute URL of an API path (an asset's ``downloadPath``), as the caller reaches it."""
        ...


@dataclass(frozen=True)
class RemoteApi:
    """The API at ``base_url``, called with one key (``toolrun mcp`` over stdio)."""

    base_url: str
    api_key: str

    def client(self, request: Request | None, sleep: Sleep) -> AsyncClient:
        return AsyncClient(self.base_url, self.api_key, sleep=sleep)

    def link(self, request: Request | None, path: str) -> str:
        return self.base_url + path


@dataclass(frozen=True)
class InProcessApi:
    """The API app this server is mounted in, called in-process with each request's own key.

    ``public_base_url`` (TOOLRUN_PUBLIC_BASE_URL) prefixes the URLs handed to
    the caller; when empty, the origin the caller used is taken, as shares do.
    """

    app: ASGIApp
    public_base_url: str = ""

    def client(self, request: Request | None, sleep: Sleep) -> AsyncClient:
        if request is None:
            raise RuntimeError("the in-process API needs the HTTP request of the call")
        transport = httpx.ASGITransport(app=self.app, raise_app_exceptions=False)
        key = api_key_from_headers(request.headers)
        return AsyncClient(origin(request), key, sleep=sleep, transport=transport)

    def link(self, request: Request | None, path: str) -> str:
        base = self.public_base_url or (origin(request) if request is not None else "")
        return base.rstrip("/") + path
