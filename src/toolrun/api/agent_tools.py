"""The agent-tool server at ``/mcp``: the MCP endpoint behind the API's own key check.

Every request to ``/mcp`` is a keyed request like any other: the same check
(``deps.authenticate``) lets it in, counts it toward the account's rate limit
and answers 401 or 429 in the API's error envelope. The API calls a tool call
then makes in-process with the same key (create, polls, uploads) count too,
exactly as if the caller had made them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Scope

from toolrun.api.context import AppContext
from toolrun.api.deps import authenticate
from toolrun.api.envelope import error
from toolrun.core.errors import RateLimited, ServiceError

if TYPE_CHECKING:
    from toolrun.mcp.http import HttpEndpoint

MCP_PATH = "/mcp"


async def check_key(context: AppContext, scope: Scope) -> Response | None:
    """None when the API lets the request in (and has counted it), else its 401 or 429 answer."""
    try:
        await authenticate(Request(scope))
    except ServiceError as exc:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else {}
        if isinstance(exc, RateLimited):
            headers["Retry-After"] = str(exc.retry_after)
        return error(
            exc.status, exc.message, path=scope["path"], now=context.clock(), headers=headers
        )
    return None


def mount_agent_tools(app: FastAPI, context: AppContext) -> HttpEndpoint:
    """Serve the registry's tools at ``/mcp``; enter the answer's ``run()`` in the lifespan."""
    # Imported here: the MCP SDK takes about half a second to import, which only an app that
    # serves should pay, not every CLI command that imports the app module.
    from toolrun.mcp.access import InProcessApi
    from toolrun.mcp.http import HttpEndpoint
    from toolrun.mcp.server import build_server

    api = InProcessApi(app=app, public_base_url=context.settings.public_base_url)
    server = build_server(context.registry, api, local_files=False)

    async def gate(scope: Scope) -> Response | None:
        return await check_key(context, scope)

    endpoint = HttpEndpoint(server, gate)
    app.router.routes.append(Route(MCP_PATH, endpoint, include_in_schema=False))
    return endpoint
