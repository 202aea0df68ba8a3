"""Redirects: each code, relative Location forms, loops, the hop cap, and what is recorded."""

from __future__ import annotations

import pytest

from tests.servers.http import HttpServer
from toolrun.config import Settings
from toolrun.net.errors import RedirectLoop, TooManyRedirects, UnsupportedUrl
from toolrun.net.fetch import MAX_REDIRECTS, Fetcher, Redirect


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_fetch_follows_each_redirect_code(
    open_settings: Settings, http_server: HttpServer, status: int
) -> None:
    http_server.redirect("/start", "/final", status=status)
    http_server.route("/final", body=b"done", headers=[("Content-Type", "text/plain")])
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/start"))
    assert (result.status_code, result.text) == (200, "done")
    assert result.url == http_server.url("/start")
    assert result.final_url == http_server.url("/final")
    assert result.redirects == [Redirect(http_server.url("/start"), status, result.final_url)]
    assert [(r.method, r.path) for r in http_server.requests] == [
        ("GET", "/start"),
        ("GET", "/final"),
    ]


@pytest.mark.parametrize(("status", "method"), [(301, "HEAD"), (303, "HEAD"), (307, "HEAD")])
async def test_fetch_keeps_head_across_redirects(
    open_settings: Settings, http_server: HttpServer, status: int, method: str
) -> None:
    http_server.redirect("/start", "/final", status=status)
    http_server.route("/final", body=b"done")
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/start"), method="HEAD")
    assert result.body == b""
    assert [r.method for r in http_server.requests] == ["HEAD", method]


@pytest.mark.parametrize(
    ("location", "final_path"),
    [
        ("final", "/dir/final"),
        ("./final?x=1", "/dir/final?x=1"),
        ("../final", "/final"),
        ("/final", "/final"),
        ("//127.0.0.1:{port}/final", "/final"),
        ("http://127.0.0.1:{port}/final#frag", "/final"),
        ("/fin al/ü", "/fin%20al/%C3%BC"),
    ],
)
async def test_fetch_resolves_relative_location(
    open_settings: Settings, http_server: HttpServer, location: str, final_path: str
) -> None:
    http_server.redirect("/dir/start", location.format(port=http_server.port))
    for path in ("/dir/final", "/final", "/fin%20al/%C3%BC"):
        http_server.route(path, body=path.encode())
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/dir/start"))
    assert result.final_url == http_server.url(final_path)
    assert http_server.requests[-1].target == final_path


async def test_fetch_follows_a_chain_of_the_maximum_length(
    open_settings: Settings, http_server: HttpServer
) -> None:
    for hop in range(MAX_REDIRECTS):
        http_server.redirect(f"/r{hop}", f"/r{hop + 1}")
    http_server.route(f"/r{MAX_REDIRECTS}", body=b"end")
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/r0"))
    assert result.body == b"end"
    assert len(result.redirects) == MAX_REDIRECTS
    assert [r.location for r in result.redirects][-1] == result.final_url


async def test_fetch_refuses_one_redirect_too_many(
    open_settings: Settings, http_server: HttpServer
) -> None:
    for hop in range(MAX_REDIRECTS + 1):
        http_server.redirect(f"/r{hop}", f"/r{hop + 1}")
    http_server.route(f"/r{MAX_REDIRECTS + 1}", body=b"end")
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(TooManyRedirects, match="more than 10 redirects"):
            await fetcher.fetch(http_server.url("/r0"))
    assert len(http_server.requests) == MAX_REDIRECTS + 1


@pytest.mark.parametrize(
    "routes",
    [
        {"/a": "/a"},
        {"/a": "/b", "/b": "/a"},
        {"/a": "/b", "/b": "/c", "/c": "/b"},
        {"/a": "http://127.0.0.1:{port}/b", "/b": "/a?"},
    ],
)
async def test_fetch_detects_redirect_loops(
    open_settings: Settings, http_server: HttpServer, routes: dict[str, str]
) -> None:
    for path, location in routes.items():
        http_server.redirect(path, location.format(port=http_server.port))
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(RedirectLoop, match=r"redirect loop: http://127\.0\.0\.1"):
            await fetcher.fetch(http_server.url("/a"))
    assert len(http_server.requests) <= len(routes)


async def test_fetch_without_following_returns_the_redirect(
    open_settings: Settings, http_server: HttpServer
) -> None:
    http_server.route("/start", status=301, headers=[("Location", "/x")], body=b"moved")
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/start"), follow_redirects=False)
    assert (result.status_code, result.header("Location"), result.body) == (301, "/x", b"moved")
    assert result.redirects == []


async def test_fetch_returns_a_redirect_without_location(
    open_settings: Settings, http_server: HttpServer
) -> None:
    http_server.route("/start", status=302, body=b"nowhere")
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/start"))
    assert (result.status_code, result.body, result.redirects) == (302, b"nowhere", [])


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("ftp://127.0.0.1/file", "unsupported URL scheme 'ftp'"),
        ("javascript:alert(1)", "unsupported URL scheme 'javascript'"),
        ("http://127.0.0.1:25/", "port 25 is not allowed"),
        ("http://user@127.0.0.1:8080/", "user name or password"),
        ("http://[::1/", "not a valid URL"),
    ],
)
async def test_fetch_refuses_redirect_to_unsupported_url(
    open_settings: Settings, http_server: HttpServer, location: str, message: str
) -> None:
    http_server.redirect("/start", location)
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(UnsupportedUrl, match=message):
            await fetcher.fetch(http_server.url("/start"))


async def test_fetch_follows_http_to_https(
    open_settings: Settings, http_server: HttpServer, https_server: HttpServer
) -> None:
    https_server.route("/secure", body=b"tls")
    http_server.redirect("/", https_server.url("/secure", host="localhost"), status=301)
    async with Fetcher(open_settings, ssl_context=https_server.client_ssl_context()) as fetcher:
        result = await fetcher.fetch(http_server.url("/"))
    assert (result.body, result.tls) == (b"tls", True)
    assert result.final_url == f"https://localhost:{https_server.port}/secure"
    assert result.redirects[0].status_code == 301
    assert https_server.requests[0].sni == "localhost"
