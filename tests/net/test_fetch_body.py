"""Bodies: charsets, content types, compression, bombs, byte and time caps, broken servers."""

from __future__ import annotations

import gzip
import socket
import zlib

import brotli  # type: ignore[import-untyped]
import pytest
import zstandard

from tests.net.conftest import make_settings
from tests.servers.dns import DnsServer
from tests.servers.http import (
    HttpServer,
    Response,
    brotli_bomb,
    endless,
    gzip_bomb,
    trickle,
    zstd_bomb,
)
from toolrun.config import Settings
from toolrun.net.errors import BadResponse, ConnectFailed, NetTimeout, TooLarge
from toolrun.net.fetch import USER_AGENT, Fetcher

MIB = 1 << 20
FRENCH = "Le cœur déçu mais l'âme plutôt naïve, Louÿs rêva de crapaüter en canoë au-delà des îles."

CHARSETS = [
    # (Content-Type, body, expected text, expected encoding)
    ("text/html; charset=windows-1252", "café €".encode("cp1252"), "café €", "windows-1252"),
    ("text/html; charset=ISO-8859-1", b"\x80 caf\xe9", "€ café", "windows-1252"),
    ("text/html; charset=latin1", b"\x93q\x94", "\u201cq\u201d", "windows-1252"),
    ("text/html; charset=us-ascii", b"\x80", "€", "windows-1252"),
    (
        "text/html; charset=Shift_JIS",
        "日本語のページ".encode("shift_jis"),
        "日本語のページ",
        "shift_jis",
    ),
    ("text/html; charset=GBK", "中文网页".encode("gbk"), "中文网页", "gbk"),
    ("text/html; charset=gb2312", "中文".encode("gbk"), "中文", "gbk"),
    ('text/html; charset="utf-8"', "naïve ✓".encode(), "naïve ✓", "utf-8"),
    ("text/html", b"\xef\xbb\xbfh\xc3\xa9llo", "héllo", "utf-8"),
    ("text/html", b"\xff\xfeh\x00i\x00", "hi", "utf-16le"),
    ("text/html; charset=iso-8859-1", b"\xef\xbb\xbf\xc3\xa9", "é", "utf-8"),
    (
        "text/html",
        b'<meta charset="shift_jis"><p>' + "日本語".encode("shift_jis"),
        '<meta charset="shift_jis"><p>日本語',
        "shift_jis",
    ),
    (
        "text/html",
        b'<meta http-equiv="Content-Type" content="text/html; charset=gbk">' + "中文".encode("gbk"),
        '<meta http-equiv="Content-Type" content="text/html; charset=gbk">中文',
        "gbk",
    ),
    (
        "text/html",
        b"<!-- <meta charset=gbk> --><meta charset=windows-1252>\xe9",
        "<!-- <meta charset=gbk> --><meta charset=windows-1252>é",
        "windows-1252",
    ),
    ("text/html", b"<meta charset=utf-16>caf\xc3\xa9", "<meta charset=utf-16>café", "utf-8"),
    (
        "text/html; charset=utf-8",
        b"<meta charset=shift_jis>caf\xc3\xa9",
        "<meta charset=shift_jis>café",
        "utf-8",
    ),
    (
        "application/xml",
        b'<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>',
        '<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>',
        "windows-1252",
    ),
    ("text/plain", "déjà vu ✓".encode(), "déjà vu ✓", "utf-8"),
    ("text/html; charset=no-such-charset", b"plain", "plain", "utf-8"),
    ("text/html; charset=utf-8", b"cut \xe6\x97", "cut ", "utf-8"),
]


@pytest.mark.parametrize(("content_type", "body", "text", "encoding"), CHARSETS)
async def test_fetch_decodes_charsets(
    open_settings: Settings,
    http_server: HttpServer,
    content_type: str,
    body: bytes,
    text: str,
    encoding: str,
) -> None:
    http_server.route("/", body=body, headers=[("Content-Type", content_type)])
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/"))
    assert (result.text, result.encoding) == (text, encoding)
    assert result.body == body


async def test_fetch_detects_undeclared_legacy_encoding(
    open_settings: Settings, http_server: HttpServer
) -> None:
    body = f"<html><body><p>{FRENCH}</p><p>{FRENCH}</p></body></html>".encode("cp1252")
    http_server.route("/", body=body, headers=[("Content-Type", "text/html")])
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/"))
    assert result.text is not None
    assert FRENCH in result.text


@pytest.mark.parametrize(
    ("content_type", "body", "media_type", "has_text"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00", "image/png", False),
        ("application/pdf", b"%PDF-1.7", "application/pdf", False),
        ("application/octet-stream", b"data", "application/octet-stream", False),
        ("Application/JSON; charset=UTF-8", b'{"a": "\xc3\xa9"}', "application/json", True),
        ("application/ld+json", b'{"@type": "Thing"}', "application/ld+json", True),
        ("image/svg+xml", b"<svg/>", "image/svg+xml", True),
        ("Text/HTML; Charset=UTF-8", b"<p>x", "text/html", True),
        (None, b"<!doctype html><p>hi", "", True),
        (None, b"\x00\x01binary", "", False),
    ],
)
async def test_fetch_reports_content_type_and_text(
    open_settings: Settings,
    http_server: HttpServer,
    content_type: str | None,
    body: bytes,
    media_type: str,
    has_text: bool,
) -> None:
    headers = [("Content-Type", content_type)] if content_type else []
    http_server.route("/", body=body, headers=headers)
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/"))
    assert result.content_type == media_type
    assert result.body == body
    assert (result.text is not None, result.encoding is not None) == (has_text, has_text)


PAGE = ("<html><body>" + "compressible text " * 2000 + "</body></html>").encode()


def _zlib(data: bytes, wbits: int) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "wire"),
    [
        ("gzip", gzip.compress(PAGE)),
        ("x-gzip", gzip.compress(PAGE)),
        ("GZIP", gzip.compress(PAGE[:100]) + gzip.compress(PAGE[100:])),
        ("deflate", _zlib(PAGE, zlib.MAX_WBITS)),
        ("deflate", _zlib(PAGE, -zlib.MAX_WBITS)),
        ("br", brotli.compress(PAGE)),
        ("zstd", zstandard.ZstdCompressor().compress(PAGE)),
        ("gzip, br", brotli.compress(gzip.compress(PAGE))),
        ("identity", PAGE),
        ("x-unknown", PAGE),
    ],
)
async def test_fetch_decompresses(
    open_settings: Settings, http_server: HttpServer, encoding: str, wire: bytes
) -> None:
    headers = [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", encoding)]
    http_server.route("/", body=wire, headers=headers)
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/"))
    assert result.body == PAGE
    assert result.text == PAGE.decode()
    assert result.transfer_bytes == len(wire)
    assert http_server.requests[0].header("accept-encoding") == "gzip, deflate, br, zstd"


@pytest.mark.parametrize(
    ("encoding", "bomb"),
    [("gzip", gzip_bomb), ("br", brotli_bomb), ("zstd", zstd_bomb)],
)
async def test_fetch_stops_decompression_bombs(
    open_settings: Settings, http_server: HttpServer, encoding: str, bomb
) -> None:
    wire = bomb()
    http_server.route("/", body=wire, headers=[("Content-Encoding", encoding)])
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(TooLarge) as caught:
            await fetcher.fetch(http_server.url("/"))
        assert (caught.value.code, caught.value.message) == (413, "response larger than 5 MiB")
        result = await fetcher.fetch(http_server.url("/"), max_bytes=MIB, truncate=True)
    assert (len(result.body), result.truncated) == (MIB, True)
    assert result.body == bytes(MIB)
    if encoding == "gzip":  # the others fit in one read, so only gzip shows the early stop
        assert result.transfer_bytes < len(wire) // 4


async def test_fetch_caps_endless_bodies(open_settings: Settings, http_server: HttpServer) -> None:
    http_server.route("/", body=endless())
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(TooLarge, match="response larger than 256 KiB"):
            await fetcher.fetch(http_server.url("/"), max_bytes=256 * 1024)
        result = await fetcher.fetch(http_server.url("/"), max_bytes=100_000, truncate=True)
    assert (len(result.body), result.truncated) == (100_000, True)
    assert result.transfer_bytes < 1 * MIB


async def test_fetch_refuses_announced_oversize_without_reading(
    open_settings: Settings, http_server: HttpServer
) -> None:
    http_server.route(
        "/",
        Response(headers=[("Content-Length", str(10 << 30))], body=endless(), chunked=False),
    )
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(TooLarge, match="response larger than 5 MiB"):
            await fetcher.fetch(http_server.url("/"))


@pytest.mark.parametrize(("size", "over"), [(1000, False), (1001, True)])
async def test_fetch_cap_is_inclusive(
    open_settings: Settings, http_server: HttpServer, size: int, over: bool
) -> None:
    http_server.route("/", body=b"a" * size)
    http_server.route(
        "/gz", body=gzip.compress(b"a" * size), headers=[("Content-Encoding", "gzip")]
    )
    async with Fetcher(open_settings) as fetcher:
        for path in ("/", "/gz"):
            result = await fetcher.fetch(http_server.url(path), max_bytes=1000, truncate=True)
            assert (len(result.body), result.truncated) == (1000, over)


@pytest.mark.parametrize(
    "response",
    [
        Response(body=trickle([b"x"] * 50, interval=0.1)),
        Response(body=b"late", delay=2.0),
        Response(body=trickle([b"x"] * 50, interval=0.1), chunked=False),
    ],
)
async def test_fetch_times_out_slow_servers(
    dns: DnsServer, http_server: HttpServer, response: Response
) -> None:
    http_server.route("/", response)
    settings = make_settings(dns, allow_private_networks=True, http_timeout_s=0.5)
    async with Fetcher(settings) as fetcher:
        with pytest.raises(NetTimeout) as caught:
            await fetcher.fetch(http_server.url("/"))
    assert (caught.value.code, caught.value.message) == (400, "timed out after 0.5 s")


async def test_fetch_time_cap_covers_the_whole_redirect_chain(
    dns: DnsServer, http_server: HttpServer
) -> None:
    for hop in range(5):
        http_server.route(f"/r{hop}", Response(302, [("Location", f"/r{hop + 1}")], delay=0.15))
    http_server.route("/r5", body=b"end")
    settings = make_settings(dns, allow_private_networks=True, http_timeout_s=0.5)
    async with Fetcher(settings) as fetcher:
        with pytest.raises(NetTimeout):
            await fetcher.fetch(http_server.url("/r0"))


async def test_fetch_measures_time(open_settings: Settings, http_server: HttpServer) -> None:
    http_server.redirect("/start", "/slow")
    http_server.route("/slow", Response(body=trickle([b"a", b"b"], interval=0.2), delay=0.2))
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/start"))
    assert result.body == b"ab"
    assert 200 <= result.ttfb_ms < 2000
    assert result.timing_ms >= result.ttfb_ms + 300


async def test_fetch_keeps_headers_in_order_with_repeats(
    open_settings: Settings, http_server: HttpServer
) -> None:
    headers = [("Set-Cookie", "a=1"), ("X-Thing", "x"), ("set-cookie", "b=2")]
    http_server.route("/", body=b"", headers=headers)
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/"))
    assert result.headers[:3] == [("set-cookie", "a=1"), ("x-thing", "x"), ("set-cookie", "b=2")]
    assert result.header("SET-COOKIE") == "a=1"
    assert result.header("missing") is None
    assert (result.remote_ip, result.tls, result.truncated) == ("127.0.0.1", False, False)


async def test_fetch_sends_browser_like_headers(
    open_settings: Settings, http_server: HttpServer
) -> None:
    http_server.route("/", body=b"ok")
    async with Fetcher(open_settings) as fetcher:
        await fetcher.fetch(http_server.url("/"))
        await fetcher.fetch(http_server.url("/"), accept="application/json")
    async with Fetcher(open_settings, user_agent="custom/1.0") as fetcher:
        await fetcher.fetch(http_server.url("/"))
    first, second, third = http_server.requests
    assert first.header("user-agent") == USER_AGENT
    assert "toolrun" in USER_AGENT
    assert USER_AGENT.startswith("Mozilla/5.0")
    assert (first.header("accept") or "").startswith("text/html")
    assert second.header("accept") == "application/json"
    assert third.header("user-agent") == "custom/1.0"
    assert first.header("host") == f"127.0.0.1:{http_server.port}"


@pytest.mark.parametrize(("method", "status"), [("HEAD", 200), ("GET", 204), ("GET", 304)])
async def test_fetch_reads_no_body_where_there_is_none(
    open_settings: Settings, http_server: HttpServer, method: str, status: int
) -> None:
    http_server.route("/", status=status, body=b"" if status != 200 else b"body")
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/"), method=method)
    assert (result.status_code, result.body, result.text) == (status, b"", None)


async def test_fetch_rejects_other_methods(open_settings: Settings) -> None:
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(ValueError, match="unsupported method"):
            await fetcher.fetch("http://127.0.0.1:8080/", method="POST")


@pytest.mark.parametrize(("status"), [404, 500, 503])
async def test_fetch_returns_error_statuses(
    open_settings: Settings, http_server: HttpServer, status: int
) -> None:
    http_server.route("/", status=status, body=b"oops", headers=[("Content-Type", "text/plain")])
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/"))
    assert (result.status_code, result.text) == (status, "oops")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"garbage\r\n\r\n", "sent a malformed HTTP response"),
        (b"", "sent a malformed HTTP response"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "sent a malformed HTTP response"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", "sent a malformed HTTP response"),
    ],
)
async def test_fetch_reports_malformed_responses(
    open_settings: Settings, http_server: HttpServer, raw: bytes, message: str
) -> None:
    http_server.route("/", Response(raw=raw))
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(BadResponse, match=message):
            await fetcher.fetch(http_server.url("/"))


@pytest.mark.parametrize(
    ("encoding", "wire", "message"),
    [
        ("gzip", b"not gzip at all", "not valid gzip/deflate"),
        ("br", b"\xff\xff\xff\xff not brotli", "not valid brotli"),
        ("zstd", b"not zstd", "not valid zstd"),
        ("gzip", gzip.compress(PAGE)[:-30], "cut short"),
    ],
)
async def test_fetch_reports_corrupt_compression(
    open_settings: Settings, http_server: HttpServer, encoding: str, wire: bytes, message: str
) -> None:
    http_server.route("/", body=wire, headers=[("Content-Encoding", encoding)])
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(BadResponse, match=message):
            await fetcher.fetch(http_server.url("/"))


async def test_fetch_reports_refused_connections(open_settings: Settings) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(ConnectFailed) as caught:
            await fetcher.fetch(f"http://127.0.0.1:{port}/")
    assert caught.value.message == f"connection refused by 127.0.0.1:{port}"
