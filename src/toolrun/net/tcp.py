"""Guarded plain TCP connections (WHOIS and other line protocols)."""

from __future__ import annotations

import asyncio
import errno

from toolrun.config import Settings
from toolrun.net.addresses import IPAddress
from toolrun.net.errors import ConnectFailed, NetTimeout, format_seconds
from toolrun.net.resolve import resolve_host


async def open_guarded_connection(
    host: str,
    port: int,
    settings: Settings,
    *,
    timeout: float,  # noqa: ASYNC109 (the shared contract's signature)
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Resolve ``host`` once, check its addresses, and connect to one of them.

    ``timeout`` covers the lookup and the connection. Raises ResolveFailed,
    BlockedAddress, ConnectFailed or NetTimeout.
    """
    try:
        async with asyncio.timeout(timeout):
            addresses = await resolve_host(host, settings)
            return await connect_first(addresses, port)
    except TimeoutError:
        raise NetTimeout(
            f"connecting to {host}:{port} timed out after {format_seconds(timeout)}"
        ) from None


async def connect_first(
    addresses: list[IPAddress], port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Connect to the first address that answers, in order; the caller bounds the time."""
    failure: OSError | None = None
    for address in addresses:
        try:
            return await asyncio.open_connection(str(address), port)
        except OSError as error:
            failure = error
    assert failure is not None, "resolve_host never returns an empty list"
    raise ConnectFailed(describe_connect_error(failure, addresses[-1], port))


def describe_connect_error(error: OSError, address: IPAddress, port: int) -> str:
    """The public message for a failed TCP connection to ``address:port``."""
    where = f"[{address}]:{port}" if address.version == 6 else f"{address}:{port}"
    if error.errno == errno.ECONNREFUSED:
        return f"connection refused by {where}"
    if error.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL):
        return f"could not connect to {where}: network unreachable"
    if error.errno == errno.ECONNRESET:
        return f"connection reset by {where}"
    return f"could not connect to {where}"
