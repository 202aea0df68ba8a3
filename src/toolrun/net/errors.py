"""Errors raised by the guarded network clients.

Every error carries ``code`` (the job failure code: 400, or 413 for a size
limit) and ``message``, a public sentence that names the problem and never an
internal detail (no paths, no tracebacks, no resolver internals). ``str(error)``
is the message.

Our exception hierarchy:

* NetError
  + BlockedAddress - the address policy refuses an address (loopback, private, ...).
  + ResolveFailed - a name has no usable address (NXDOMAIN, no records, DNS failure).
  + ConnectFailed - the TCP connection was refused or the network is unreachable.
  + TlsFailed - the TLS handshake failed (certificate, protocol).
  + NetTimeout - the operation ran past its time cap.
  + TooLarge - the response (after decompression) is over the byte cap (code 413).
  + TooManyRedirects - more redirects than the cap allows.
  + RedirectLoop - a redirect leads back to a URL already visited.
  + UnsupportedUrl - the URL is not one we fetch (scheme, port, user info, garbage).
  + BadResponse - the server answered with something unusable (malformed HTTP, corrupt encoding).
"""

from __future__ import annotations


class NetError(Exception):
    """The network operation failed."""

    code: int = 400

    def __init__(self, message: str | None = None) -> None:
        self.message = message or (self.__doc__ or "network error").strip()
        super().__init__(self.message)


class BlockedAddress(NetError):
    """The address is not allowed."""


class ResolveFailed(NetError):
    """The host name could not be resolved."""


class ConnectFailed(NetError):
    """Could not connect to the server."""


class TlsFailed(NetError):
    """TLS handshake failed."""


class NetTimeout(NetError):
    """The request timed out."""


class TooLarge(NetError):
    """The response is too large."""

    code = 413


class TooManyRedirects(NetError):
    """Too many redirects."""


class RedirectLoop(NetError):
    """Redirect loop."""


class UnsupportedUrl(NetError):
    """The URL is not supported."""


class BadResponse(NetError):
    """The server sent a malformed response."""


def format_seconds(seconds: float) -> str:
    """``15`` -> ``"15 s"``, ``0.5`` -> ``"0.5 s"``, for timeout messages."""
    return f"{seconds:g} s"


def format_bytes(size: int) -> str:
    """``5242880`` -> ``"5 MiB"``, ``1536`` -> ``"1.5 KiB"``, ``100`` -> ``"100 bytes"``."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.4g} {unit}"
    return f"{size} bytes"
