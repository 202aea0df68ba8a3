"""open_guarded_connection: resolve once, check, dial the checked address."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest

from tests.net.conftest import make_settings
from tests.servers.dns import DnsServer, Fault
from toolrun.config import Settings
from toolrun.net.errors import BlockedAddress, ConnectFailed, NetTimeout
from toolrun.net.tcp import open_guarded_connection


@pytest.fixture
async def echo_port() -> AsyncIterator[int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.readline())
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("host", ["site.test", "127.0.0.1", "alias.test"])
async def test_open_guarded_connection_connects(
    open_settings: Settings, echo_port: int, host: str
) -> None:
    reader, writer = await open_guarded_connection(host, echo_port, open_settings, timeout=5)
    writer.write(b"ping\n")
    assert await reader.readline() == b"ping\n"
    assert writer.get_extra_info("peername")[0] == "127.0.0.1"
    writer.close()
    await writer.wait_closed()


@pytest.mark.parametrize("host", ["site.test", "127.0.0.1", "private.test", "localhost"])
async def test_open_guarded_connection_refuses_private(
    strict_settings: Settings, echo_port: int, host: str
) -> None:
    with pytest.raises(BlockedAddress, match="not allowed"):
        await open_guarded_connection(host, echo_port, strict_settings, timeout=5)


async def test_open_guarded_connection_reports_refused(open_settings: Settings) -> None:
    port = closed_port()
    with pytest.raises(ConnectFailed) as caught:
        await open_guarded_connection("127.0.0.1", port, open_settings, timeout=5)
    assert caught.value.message == f"connection refused by 127.0.0.1:{port}"


async def test_open_guarded_connection_times_out(dns: DnsServer, echo_port: int) -> None:
    dns.set_fault("site.test.", Fault.TIMEOUT)
    settings = make_settings(dns, allow_private_networks=True)
    with pytest.raises(NetTimeout, match=r"connecting to site.test:\d+ timed out after 0.3 s"):
        await open_guarded_connection("site.test", echo_port, settings, timeout=0.3)
