"""``toolrun mcp``: the server over stdin/stdout, for one key, against a toolrun API.

The agent's host starts it as a subprocess with TOOLRUN_API_KEY (and
TOOLRUN_BASE_URL, default http://127.0.0.1:8080) in its environment. It lists
the tools of the installed registry and sends every call to that API.
"""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from toolrun.client.connection import api_key, base_url
from toolrun.mcp.access import RemoteApi
from toolrun.mcp.server import build_server
from toolrun.tools.registry import default_registry


def remote_api(base: str | None = None, key: str | None = None) -> RemoteApi:
    """The API from the arguments or TOOLRUN_BASE_URL / TOOLRUN_API_KEY (MissingApiKey without one)."""
    return RemoteApi(base_url=base_url(base), api_key=api_key(key))


async def serve_stdio(api: RemoteApi) -> None:
    """Serve until the client closes stdin."""
    server = build_server(default_registry(), api, local_files=True)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
