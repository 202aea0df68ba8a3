"""The connection seam: httpcore dials only addresses the guard has checked.

The fetcher resolves and checks a host, then pins the checked addresses for
``(host, port)`` in a context variable around the request. httpcore asks this
backend to connect to ``host``; the backend dials the pinned addresses instead
and refuses a host with no pin. TLS still runs against the host name (SNI and
certificate verification), because httpcore passes the URL's host to
``start_tls``.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

import httpcore

from toolrun.net.addresses import IPAddress
from toolrun.net.errors import BlockedAddress, ConnectFailed, TlsFailed
from toolrun.net.tcp import describe_connect_error

_PINS: ContextVar[dict[tuple[str, int], list[IPAddress]]] = ContextVar("toolrun_net_pins")


@contextlib.contextmanager
def pinned(host: str, port: int, addresses: list[IPAddress]) -> Iterator[None]:
    """Within the block, connections to ``host:port`` go to ``addresses`` (in order)."""
    pins = dict(_PINS.get({}))
    pins[(host, port)] = addresses
    token = _PINS.set(pins)
    try:
        yield
    finally:
        _PINS.reset(token)


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that connects only to pinned addresses."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = _PINS.get({}).get((host, port))
        if not addresses:
            # Fail closed: a connection nobody checked is a bug, never a fallback to DNS.
            raise BlockedAddress(f"the address of {host} was not checked")
        failure: OSError | None = None
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    str(address), port, timeout=timeout, socket_options=socket_options
                )
            except httpcore.ConnectError as error:
                failure = _root_os_error(error)
                continue
            return GuardedStream(stream, address, port)
        assert failure is not None
        raise ConnectFailed(describe_connect_error(failure, addresses[-1], port))

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddress("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class GuardedStream(httpcore.AsyncNetworkStream):
    """A connected stream that knows the checked address and reports TLS failures clearly."""

    def __init__(self, inner: httpcore.AsyncNetworkStream, address: IPAddress, port: int) -> None:
        self._inner = inner
        self.address = address
        self.port = port

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
    ) -> httpcore.AsyncNetworkStream:
        try:
            inner = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        except httpcore.ConnectError as error:
            raise TlsFailed(f"TLS handshake failed: {describe_tls_error(error)}") from None
        except BaseException:
            # httpcore closes the TCP stream after an Exception, not after a cancellation (a
            # job's deadline) in mid-handshake; unclosed, its socket would outlive the job
            with contextlib.suppress(Exception):
                await self._inner.aclose()
            raise
        return GuardedStream(inner, self.address, self.port)

    def get_extra_info(self, info: str) -> Any:
        if info == "server_addr":
            return (str(self.address), self.port)
        return self._inner.get_extra_info(info)


def _root_os_error(error: BaseException) -> OSError:
    """The OSError with an errno under httpcore's and anyio's wrappers."""
    current: BaseException | None = error
    while current is not None:
        if isinstance(current, OSError) and current.errno is not None:
            return current
        if isinstance(current, BaseExceptionGroup) and current.exceptions:
            current = current.exceptions[0]
        else:
            current = current.__cause__
    return OSError(str(error))


def describe_tls_error(error: BaseException) -> str:
    """A short public reason for a failed handshake ("certificate has expired", ...)."""
    cause = error.__cause__ or error
    if isinstance(cause, ssl.SSLCertVerificationError):
        message = cause.verify_message or "certificate verify failed"
        if message.startswith("Hostname mismatch"):
            return "the certificate does not match the host name"
        return message
    if isinstance(cause, ssl.SSLError) and cause.reason:
        return cause.reason.replace("_", " ").lower()
    return "the connection closed during the handshake"
