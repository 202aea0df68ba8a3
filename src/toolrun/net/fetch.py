"""The guarded HTTP fetcher every website tool uses.

Each hop of a fetch: parse the URL (http/https, allowed port, no user info),
resolve the host and check every address (``resolve_host``), pin the checked
addresses so httpcore dials exactly them (``transport``), send the request,
and either follow a redirect (a fresh hop, re-resolved and re-checked) or read
the body under the byte cap, decompressing under the same cap. The whole
fetch, redirects included, runs under ``settings.http_timeout_s``.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import time
from dataclasses import dataclass, field
from types import TracebackType

import certifi
import httpcore

from toolrun.config import Settings
from toolrun.net.charset import decode_body
from toolrun.net.decoding import CHUNK, BodyDecoder
from toolrun.net.errors import (
    BadResponse,
    ConnectFailed,
    NetTimeout,
    RedirectLoop,
    TooLarge,
    TooManyRedirects,
    format_bytes,
    format_seconds,
)
from toolrun.net.resolve import resolve_host
from toolrun.net.transport import PinnedBackend, pinned
from toolrun.net.urls import Target, check_port, parse_url

USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36 toolrun/2.0"
)
DEFAULT_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
ACCEPT_ENCODING = "gzip, deflate, br, zstd"
MAX_REDIRECTS = 10
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
REDIRECT_CODES = frozenset({301, 302, 303, 307, 308})
_NO_BODY_CODES = frozenset({204, 304})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/xhtml+xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
    }
)


@dataclass(frozen=True)
class Redirect:
    """One redirect followed: the URL that answered, its status, and where it pointed."""

    url: str
    status_code: int
    location: str  # absolute, resolved against ``url``


@dataclass(frozen=True)
class FetchResult:
    """The final response of a fetch.

    ``timing_ms`` runs from the start of the fetch (redirects included) to the
    last body byte; ``ttfb_ms`` from the start of the final request (lookup,
    connect and TLS included) to its response headers. ``transfer_bytes``
    counts the final body as received, before decompression.
    """

    url: str
    final_url: str
    status_code: int
    headers: list[tuple[str, str]]
    content_type: str
    body: bytes
    text: str | None
    encoding: str | None
    redirects: list[Redirect]
    timing_ms: float
    ttfb_ms: float
    transfer_bytes: int
    remote_ip: str
    tls: bool
    truncated: bool

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or None."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)


@dataclass
class _Options:
    method: str
    accept: str
    max_bytes: int
    truncate: bool
    follow_redirects: bool
    started: float = field(default_factory=time.perf_counter)


@dataclass
class _Hop:
    target: Target
    status_code: int
    headers: list[tuple[str, str]]
    remote_ip: str
    ttfb_ms: float
    location: Target | None = None
    body: bytes = b""
    transfer_bytes: int = 0
    truncated: bool = False


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """Certificate verification against the certifi bundle (what httpx uses), loaded once.

    Loading the bundle costs 20-130 ms of CPU on the bench machine, blocking the event loop;
    one context serves any number of connections at once. Never modify the returned context.
    """
    return ssl.create_default_context(cafile=certifi.where())


class Fetcher:
    """Fetch http(s) URLs through the address guard. Use as ``async with Fetcher(...)``.

    ``ssl_context`` replaces the default trust store (tests pass one that
    trusts their own CA); verification itself is never switched off.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        user_agent: str | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._settings = settings
        self._user_agent = user_agent or USER_AGENT
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context or default_ssl_context(),
            max_connections=16,
            keepalive_expiry=5.0,
            http1=True,
            http2=False,
            retries=0,
            network_backend=PinnedBackend(),
        )

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close pooled connections."""
        await self._pool.aclose()

    async def fetch(
        self,
        url: str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        accept: str | None = None,
        method: str = "GET",
        follow_redirects: bool = True,
        truncate: bool = False,
    ) -> FetchResult:
        """Fetch ``url`` (GET or HEAD), following up to 10 redirects.

        Raises a NetError subclass. A body over ``max_bytes`` (after
        decompression) raises TooLarge, unless ``truncate`` is true: then the
        first ``max_bytes`` come back with ``truncated=True``.
        """
        method = method.upper()
        if method not in ("GET", "HEAD"):
            raise ValueError(f"unsupported method {method!r}")
        options = _Options(method, accept or DEFAULT_ACCEPT, max_bytes, truncate, follow_redirects)
        timeout = self._settings.http_timeout_s
        try:
            async with asyncio.timeout(timeout):
                return await self._follow(parse_url(url), options)
        except (TimeoutError, httpcore.TimeoutException):
            raise NetTimeout(f"timed out after {format_seconds(timeout)}") from None

    async def _follow(self, first: Target, options: _Options) -> FetchResult:
        target, method = first, options.method
        visited = {(method, target.url)}
        redirects: list[Redirect] = []
        while True:
            hop = await self._hop(target, method, options)
            if hop.location is None:
                return _result(first, hop, redirects, options)
            if len(redirects) == MAX_REDIRECTS:
                raise TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")
            redirects.append(Redirect(target.url, hop.status_code, hop.location.url))
            if hop.status_code == 303 and method != "HEAD":
                method = "GET"
            target = hop.location
            if (method, target.url) in visited:
                raise RedirectLoop(f"redirect loop: {target.url} was already visited")
            visited.add((method, target.url))

    async def _hop(self, target: Target, method: str, options: _Options) -> _Hop:
        check_port(target)
        started = time.perf_counter()
        addresses = await resolve_host(target.host, self._settings)
        try:
            with pinned(target.host, target.port, addresses):
                return await self._exchange(target, method, options, started)
        except httpcore.TimeoutException:
            raise
        except httpcore.RemoteProtocolError:
            raise BadResponse(f"{target.host} sent a malformed HTTP response") from None
        except httpcore.NetworkError:
            raise ConnectFailed(f"the connection to {target.host} failed") from None

    async def _exchange(
        self, target: Target, method: str, options: _Options, started: float
    ) -> _Hop:
        url = httpcore.URL(
            scheme=target.scheme.encode(),
            host=target.host.encode(),
            port=target.port,
            target=target.target.encode(),
        )
        remaining = max(0.001, self._settings.http_timeout_s - (started - options.started))
        async with self._pool.stream(
            method,
            url,
            headers=self._headers(target, options.accept),
            extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"), remaining)},
        ) as response:
            headers = [
                (name.decode("latin-1").lower(), value.decode("latin-1"))
                for name, value in response.headers
            ]
            stream = response.extensions.get("network_stream")
            server = stream.get_extra_info("server_addr") if stream is not None else None
            hop = _Hop(
                target,
                response.status,
                headers,
                str(server[0]) if server else "",
                (time.perf_counter() - started) * 1000,
            )
            hop.location = _redirect_target(hop, options.follow_redirects)
            if hop.location is None and method != "HEAD" and hop.status_code not in _NO_BODY_CODES:
                await _read_body(response, hop, options)
            return hop

    def _headers(self, target: Target, accept: str) -> list[tuple[str, str]]:
        return [
            ("Host", target.host_header),
            ("User-Agent", self._user_agent),
            ("Accept", accept),
            ("Accept-Encoding", ACCEPT_ENCODING),
            ("Accept-Language", "en-US,en;q=0.9"),
        ]


def _redirect_target(hop: _Hop, follow: bool) -> Target | None:
    if not follow or hop.status_code not in REDIRECT_CODES:
        return None
    location = _first(hop.headers, "location")
    if not location:
        return None
    return parse_url(location, base=hop.target.url)


async def _read_body(response: httpcore.Response, hop: _Hop, options: _Options) -> None:
    """Read and decompress the body into ``hop``, stopping just past the byte cap."""
    cap = options.max_bytes
    encoding = _first(hop.headers, "content-encoding")
    length = _first(hop.headers, "content-length")
    if not options.truncate and not encoding and length and length.isdigit() and int(length) > cap:
        raise TooLarge(f"response larger than {format_bytes(cap)}")
    decoder = BodyDecoder(encoding)
    body = bytearray()
    async for chunk in response.aiter_stream():
        hop.transfer_bytes += len(chunk)
        decoder.feed(chunk)
        while len(body) <= cap and (output := decoder.read(min(CHUNK, cap + 1 - len(body)))):
            body += output
        # Compressed data that decodes to nothing cannot keep us reading forever either.
        if len(body) > cap or hop.transfer_bytes > 2 * cap + CHUNK:
            break
    else:
        decoder.finish()
    if len(body) > cap or hop.transfer_bytes > 2 * cap + CHUNK:
        if not options.truncate:
            raise TooLarge(f"response larger than {format_bytes(cap)}")
        hop.truncated = True
        del body[cap:]
    hop.body = bytes(body)


def _result(first: Target, hop: _Hop, redirects: list[Redirect], options: _Options) -> FetchResult:
    content_type_header = _first(hop.headers, "content-type")
    content_type = (content_type_header or "").split(";", 1)[0].strip().lower()
    text: str | None = None
    encoding: str | None = None
    if _is_text(content_type, hop.body):
        text, encoding = decode_body(hop.body, content_type_header)
    return FetchResult(
        url=first.url,
        final_url=hop.target.url,
        status_code=hop.status_code,
        headers=hop.headers,
        content_type=content_type,
        body=hop.body,
        text=text,
        encoding=encoding,
        redirects=redirects,
        timing_ms=(time.perf_counter() - options.started) * 1000,
        ttfb_ms=hop.ttfb_ms,
        transfer_bytes=hop.transfer_bytes,
        remote_ip=hop.remote_ip,
        tls=hop.target.scheme == "https",
        truncated=hop.truncated,
    )


def _is_text(content_type: str, body: bytes) -> bool:
    if not content_type:
        # No declared type: text when the start of the body holds no NUL byte.
        return bool(body) and b"\x00" not in body[:1024]
    return (
        content_type.startswith("text/")
        or content_type in _TEXT_TYPES
        or content_type.endswith(("+xml", "+json"))
    )


def _first(headers: list[tuple[str, str]], name: str) -> str | None:
    return next((value for key, value in headers if key == name), None)
