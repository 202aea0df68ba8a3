"""The MCP server (the SDK's low-level ``Server``): it lists the tools and routes each call.

Which transport serves it and how calls reach the API is the caller's choice
(``ApiAccess``): ``stdio.py`` for ``toolrun mcp``, ``http.py`` for ``/mcp``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from starlette.requests import Request

from toolrun.mcp.access import ApiAccess
from toolrun.mcp.calls import CallContext
from toolrun.mcp.progress import CallProgress
from toolrun.mcp.tools import build
from toolrun.tools.base import ToolDefinition

SERVER_NAME = "toolrun"
SERVER_VERSION = "2.0.0"
INSTRUCTIONS = (
    "toolrun runs website checks, domain checks and image operations for the account of the API"
    " key this server was given. Each tool named after a catalog action costs 1 credit, refunded"
    " when the job fails; a call waits for the job (at least 6 s). Image tools work on a taskId"
    " from upload-file or upload-image. `credits` shows the balance; `credits-check-in` adds the"
    " daily grant. Requests count toward the account's rate limit (10 a minute by default)."
)


def build_server(
    definitions: Iterable[ToolDefinition], api: ApiAccess, *, local_files: bool
) -> Server[Any]:
    """A server listing ``definitions`` (the registry) and the upload and credits tools.

    ``local_files`` lists ``upload-file``, which reads a path on this machine:
    true for stdio, false for a server others reach over HTTP.
    """
    entries = build(definitions, local_files=local_files)
    schemas: Mapping[str, Mapping[str, Any]] = {
        name: entry.tool.input_schema for name, entry in entries.items()
    }

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[entry.tool for entry in entries.values()])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        entry = entries.get(params.name)
        if entry is None:
            raise MCPError(types.INVALID_PARAMS, f"no tool named {params.name!r}")
        request = ctx.request if isinstance(ctx.request, Request) else None
        call = CallContext(api=api, request=request, progress=CallProgress(ctx.session))
        return await entry.handle(call, dict(params.arguments or {}))

    return Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        title="toolrun",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=schemas.get,
    )
