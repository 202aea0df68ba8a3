"""Loopback HTTP and HTTPS servers for tests.

A real HTTP/1.1 server on 127.0.0.1, port 0, running its own event loop in a
thread, so sync tests, async tests and subprocesses can all reach it. Routes
are plain data or small functions::

    def test_page(http_server):
        http_server.route("/", body=b"<title>hi</title>", headers=[("Content-Type", "text/html")])
        http_server.redirect("/old", "/", status=301)
        http_server.route("/huge", body=endless())           # streamed until the client leaves
        http_server.route("/bomb", body=gzip_bomb(), headers=[("Content-Encoding", "gzip")])
        http_server.route("/echo", lambda request: Response(body=request.header("host").encode()))
        url = http_server.url("/old")                        # http://127.0.0.1:<port>/old
        ...
        assert http_server.requests[-1].path == "/"

Fixtures (import them in your conftest: ``from tests.servers.http import http_server, ...``):
``http_server``, ``https_server`` (certificate for localhost, 127.0.0.1, ::1 from the
session's ``tls_ca``), and ``tls_ca`` (a trustme CA; ``ca.configure_trust(ctx)`` or
``server.client_ssl_context()`` makes a client trust it). ``HttpServer(tls=ca,
cert_names=[...])`` serves a certificate for other names, ``cert=`` one you issued
(e.g. expired: ``ca.issue_cert("x.test", not_after=...)``).

``Response.raw`` sends bytes verbatim (malformed answers); ``delay`` holds the
status line back (slow first byte); a body that is a function returning an async
iterator is streamed, chunked unless ``chunked=False`` (then close-delimited).
"""

from __future__ import annotations

import asyncio
import functools
import http
import inspect
import ssl
import threading
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import brotli  # type: ignore[import-untyped]
import pytest
import trustme
import zstandard

BodyStream = Callable[[], AsyncIterator[bytes]]
MAX_REQUEST_HEAD = 64 * 1024


@dataclass
class Request:
    """A request the server received."""

    method: str
    target: str  # as sent: path and query
    headers: list[tuple[str, str]]  # names lower-case, in order
    body: bytes = b""
    sni: str | None = None  # the TLS server name the client sent (HTTPS only)

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    @property
    def query(self) -> str:
        return urlsplit(self.target).query

    def header(self, name: str) -> str | None:
        """The first value of header ``name`` (any case), or None."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key == wanted), None)


@dataclass
class Response:
    """What a route answers. ``headers`` are sent as given (plus Content-Length or
    Transfer-Encoding unless present); ``body`` is bytes, or a function returning an
    async iterator of chunks (see ``endless`` and ``trickle``)."""

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes | BodyStream = b""
    delay: float = 0.0  # seconds before the status line is sent
    chunked: bool = True  # for streamed bodies; False = no framing, close when done
    raw: bytes | None = None  # sent verbatim instead of everything above


Handler = Callable[[Request], "Response | Awaitable[Response]"]


class HttpServer:
    """A loopback HTTP/1.1 server (HTTPS when ``tls`` is a trustme CA)."""

    def __init__(
        self,
        *,
        tls: trustme.CA | None = None,
        cert_names: Sequence[str] = ("localhost", "127.0.0.1", "::1"),
        cert: trustme.LeafCert | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.host = host
        self.ca = tls
        self.requests: list[Request] = []
        self.connections = 0  # TCP connections accepted (to see keep-alive reuse)
        self._routes: dict[str, Handler] = {}
        self._ssl = _server_context(tls, cert or tls.issue_cert(*cert_names)) if tls else None
        self._sni: dict[int, str | None] = {}
        if self._ssl is not None:
            self._ssl.sni_callback = self._record_sni
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    # -- routes -----------------------------------------------------------------

    def route(
        self, path: str, response: Response | Handler | None = None, /, **fields: Any
    ) -> None:
        """Answer ``path`` (query ignored) with a Response, a handler, or Response fields."""
        if response is None:
            response = Response(**fields)
        if isinstance(response, Response):
            fixed = response
            self._routes[path] = lambda _request: fixed
        else:
            self._routes[path] = response

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        """Answer ``path`` with a redirect to ``location`` (sent exactly as given)."""
        self.route(path, status=status, headers=[("Location", location)])

    # -- addresses --------------------------------------------------------------

    @property
    def scheme(self) -> str:
        return "https" if self._ssl else "http"

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def url(self, path: str = "/", host: str | None = None) -> str:
        """An absolute URL on this server, optionally with another host name."""
        if host is None:
            return self.base_url + path
        return f"{self.scheme}://{host}:{self.port}{path}"

    def client_ssl_context(self) -> ssl.SSLContext:
        """A client context that trusts this server's CA."""
        assert self.ca is not None, "not an HTTPS server"
        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return context

    # -- lifecycle --------------------------------------------------------------

    def start(self) -> HttpServer:
        loop = asyncio.new_event_loop()
        self._loop = loop
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(loop, ready), daemon=True)
        self._thread.start()
        if not ready.wait(10) or self._server is None:
            raise RuntimeError("test HTTP server did not start")
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        self._loop = self._thread = None

    def __enter__(self) -> HttpServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self, loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._connection, self.host, 0, ssl=self._ssl)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            _cancel_leftovers(loop)
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            ready.set()
            loop.close()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        # A connection accepted just now has a handler task that has not started yet: let it
        # register its writer, or its transport would outlive the loop unclosed.
        for _ in range(3):
            await asyncio.sleep(0.01)
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    # -- serving ----------------------------------------------------------------

    def _record_sni(self, ssl_object: Any, name: str | None, _context: ssl.SSLContext) -> None:
        self._sni[id(ssl_object)] = name

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        self.connections += 1
        ssl_object = writer.get_extra_info("ssl_object")
        sni = self._sni.pop(id(ssl_object), None) if ssl_object is not None else None
        try:
            while await self._exchange(reader, writer, sni):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)
            writer.transport.abort()

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, sni: str | None
    ) -> bool:
        """Serve one request; True to keep the connection for another."""
        request = await _read_request(reader, sni)
        if request is None:
            return False
        self.requests.append(request)
        handler = self._routes.get(request.path, _not_found)
        try:
            response = handler(request)
            if inspect.isawaitable(response):
                response = await response
        except Exception as error:  # a broken test handler answers 500, visibly
            response = Response(500, [("Content-Type", "text/plain")], repr(error).encode())
        assert isinstance(response, Response)
        if response.delay:
            await asyncio.sleep(response.delay)
        if response.raw is not None:
            writer.write(response.raw)
            await writer.drain()
            return False
        keep_alive = await _write_response(writer, request, response)
        return keep_alive and (request.header("connection") or "").lower() != "close"


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what still runs on the stopped loop, as ``asyncio.run`` does before closing.

    A connection accepted during shutdown may still be in its TLS handshake, owned by
    asyncio's own accept task rather than by a handler: cancelled, that task closes the
    transport; destroyed with the loop, the transport would leak an unclosed socket.
    """
    leftovers = asyncio.all_tasks(loop)
    for task in leftovers:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))


def _not_found(_request: Request) -> Response:
    return Response(404, [("Content-Type", "text/plain")], b"not found")


async def _read_request(reader: asyncio.StreamReader, sni: str | None) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers = []
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
    request = Request(method, target, headers, sni=sni)
    length = request.header("content-length")
    if length:
        request.body = await reader.readexactly(int(length))
    return request


async def _write_response(
    writer: asyncio.StreamWriter, request: Request, response: Response
) -> bool:
    """Send ``response``; True when the connection may carry another request."""
    names = {name.lower() for name, _ in response.headers}
    headers = list(response.headers)
    streamed = callable(response.body)
    if streamed and response.chunked and "transfer-encoding" not in names:
        headers.append(("Transfer-Encoding", "chunked"))
    elif not streamed and "content-length" not in names:
        assert isinstance(response.body, bytes)
        headers.append(("Content-Length", str(len(response.body))))
    keep_alive = not streamed or response.chunked
    if not keep_alive:
        headers.append(("Connection", "close"))
    writer.write(_head(response.status, headers))
    if request.method == "HEAD":
        await writer.drain()
        return keep_alive
    if isinstance(response.body, bytes):
        writer.write(response.body)
        await writer.drain()
        return keep_alive
    async for chunk in response.body():
        if chunk:
            writer.write(
                f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" if response.chunked else chunk
            )
            await writer.drain()
    if response.chunked:
        writer.write(b"0\r\n\r\n")
    await writer.drain()
    return keep_alive


def _head(status: int, headers: Iterable[tuple[str, str]]) -> bytes:
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = "Unknown"
    lines = [f"HTTP/1.1 {status} {phrase}", *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _server_context(ca: trustme.CA, cert: trustme.LeafCert) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    return context


# -- bodies ----------------------------------------------------------------------


def endless(chunk: bytes = b"x" * 16384) -> BodyStream:
    """A body that never ends: ``chunk`` again and again until the client goes away."""

    async def stream() -> AsyncIterator[bytes]:
        while True:
            yield chunk
            await asyncio.sleep(0)

    return stream


def trickle(chunks: Iterable[bytes], interval: float) -> BodyStream:
    """A slow body: each chunk ``interval`` seconds after the previous one."""
    parts = list(chunks)

    async def stream() -> AsyncIterator[bytes]:
        for part in parts:
            yield part
            await asyncio.sleep(interval)

    return stream


_MIB = 1 << 20


@functools.cache
def gzip_bomb(size: int = 256 * _MIB) -> bytes:
    """A valid gzip body that inflates to ``size`` zero bytes (a multiple of 1 MiB)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    # A full flush makes the segment self-contained, so copies of it may follow each other.
    segment = compressor.compress(bytes(_MIB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(size // _MIB):
        crc = zlib.crc32(bytes(_MIB), crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
    final_block = b"\x03\x00"
    trailer = crc.to_bytes(4, "little") + (size % (1 << 32)).to_bytes(4, "little")
    return header + segment * (size // _MIB) + final_block + trailer


@functools.cache
def brotli_bomb(size: int = 256 * _MIB) -> bytes:
    """A valid brotli body that decodes to ``size`` zero bytes (a multiple of 1 MiB)."""
    compressor = brotli.Compressor(quality=5)
    zeros = bytes(_MIB)
    parts = [bytes(compressor.process(zeros)) for _ in range(size // _MIB)]
    return b"".join(parts) + bytes(compressor.finish())


@functools.cache
def zstd_bomb(size: int = 256 * _MIB) -> bytes:
    """A valid zstd body that decodes to ``size`` zero bytes (a multiple of 1 MiB)."""
    compressor = zstandard.ZstdCompressor().compressobj()
    zeros = bytes(_MIB)
    parts = [compressor.compress(zeros) for _ in range(size // _MIB)]
    return b"".join(parts) + compressor.flush()


# -- fixtures --------------------------------------------------------------------


@pytest.fixture(scope="session")
def tls_ca() -> trustme.CA:
    """A throwaway certificate authority for HTTPS test servers."""
    return trustme.CA()


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    """A fresh loopback HTTP server; add routes, then fetch ``http_server.url(path)``."""
    with HttpServer() as server:
        yield server


@pytest.fixture
def https_server(tls_ca: trustme.CA) -> Iterator[HttpServer]:
    """A fresh loopback HTTPS server with a certificate for localhost, 127.0.0.1 and ::1."""
    with HttpServer(tls=tls_ca) as server:
        yield server
