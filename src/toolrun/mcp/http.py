"""The streamable-HTTP transport: an ASGI endpoint behind a key check, and the lifespan it needs.

Stateless: every POST carries its own API key and is served on its own, so
any API process can answer any request (``--http-workers``, load balancers)
and a call always runs with the key of the request that made it. A call's
progress notifications and result stream back as server-sent events on the
response of that POST.

``gate`` decides who may come in: it answers a refusal (the API's 401
envelope) or None. It is passed in by the API, which owns authentication.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from mcp.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

Gate = Callable[[Scope], Awaitable[Response | None]]

MAX_REQUEST_BYTES = 1024 * 1024
"""The API's limit on JSON request bodies, which the ``/mcp`` path shares."""


class HttpEndpoint:
    """The ASGI app to mount at ``/mcp``; ``run()`` must be entered in the app's lifespan."""

    def __init__(self, server: Server[Any], gate: Gate) -> None:
        self._gate = gate
        # No DNS-rebinding checks: every request needs an API key header, and a
        # rebinding page cannot supply one (keys are never ambient like cookies).
        self._manager = StreamableHTTPSessionManager(
            app=server, stateless=True, max_request_body_size=MAX_REQUEST_BYTES
        )

    def run(self) -> AbstractAsyncContextManager[None]:
        """Start and, on exit, stop the task group the requests are served in."""
        return self._manager.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = await self._gate(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self._manager.handle_request(scope, receive, send)
