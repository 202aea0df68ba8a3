"""Connecting the ``mcp`` SDK's own client to the server: ``toolrun mcp`` over stdio, or ``/mcp``."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from PIL import Image

from tests.client.server import Server
from toolrun.tools.registry import default_definitions

CATALOG = [definition.slug for definition in default_definitions()]
EXAMPLE_A = {"type": "A", "name": "example.test.", "ttl": 300, "value": "192.0.2.10"}


def stdio_params(server: Server, api_key: str) -> StdioServerParameters:
    """``toolrun mcp`` as an agent's host starts it: the key and base URL in its environment."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolrun", "mcp"],
        env={"TOOLRUN_BASE_URL": server.base_url, "TOOLRUN_API_KEY": api_key},
    )


@asynccontextmanager
async def over_stdio(server: Server, api_key: str, log: Path) -> AsyncIterator[Client]:
    """A client session with a ``toolrun mcp`` subprocess (its stderr goes to ``log``)."""
    with log.open("w") as errlog:
        async with Client(stdio_client(stdio_params(server, api_key), errlog=errlog)) as client:
            yield client


@asynccontextmanager
async def over_http(
    server: Server, headers: dict[str, str], mode: str = "auto"
) -> AsyncIterator[Client]:
    """A client session with the ``/mcp`` endpoint of the running service."""
    timeout = httpx2.Timeout(30.0, read=120.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout) as http:
        transport = streamable_http_client(f"{server.base_url}/mcp", http_client=http)
        async with Client(transport, mode=mode) as client:
            yield client


def bearer(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"}


def texts(result: CallToolResult) -> str:
    """Every text block of a result, one per line."""
    return "\n".join(getattr(block, "text", "") for block in result.content)


def structured(result: CallToolResult) -> dict[str, Any]:
    """The structured content, which must match the JSON text the result also carries."""
    data = result.structured_content
    assert isinstance(data, dict), result
    assert json.loads(getattr(result.content[-1], "text", "")) == data
    return data


def png(side: int = 48) -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise((side, side), 60).convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


class ProgressLog:
    """A progress callback that keeps what the server reported."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))
