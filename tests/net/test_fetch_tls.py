"""HTTPS: the checked address is dialed while SNI, Host and verification use the host name."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import trustme

from tests.servers.dns import DnsServer
from tests.servers.http import HttpServer
from toolrun.config import Settings
from toolrun.net.errors import TlsFailed
from toolrun.net.fetch import Fetcher


@pytest.fixture
def site_server(tls_ca: trustme.CA) -> Iterator[HttpServer]:
    """An HTTPS server whose certificate names only site.test (resolved by the test DNS)."""
    with HttpServer(tls=tls_ca, cert_names=["site.test"]) as server:
        server.route("/", body=b"<title>site</title>", headers=[("Content-Type", "text/html")])
        yield server


async def test_fetch_https_sends_sni_and_host_of_the_name(
    open_settings: Settings, dns: DnsServer, site_server: HttpServer
) -> None:
    url = site_server.url("/", host="site.test")
    async with Fetcher(open_settings, ssl_context=site_server.client_ssl_context()) as fetcher:
        result = await fetcher.fetch(url)
    assert (result.status_code, result.text, result.tls) == (200, "<title>site</title>", True)
    assert (result.final_url, result.remote_ip) == (url, "127.0.0.1")
    request = site_server.requests[0]
    assert request.sni == "site.test"
    assert request.header("host") == f"site.test:{site_server.port}"
    assert sorted(q.type for q in dns.queries if q.name.lower() == "site.test.") == ["A", "AAAA"]


async def test_fetch_https_reuses_the_connection(
    open_settings: Settings, site_server: HttpServer
) -> None:
    url = site_server.url("/", host="site.test")
    async with Fetcher(open_settings, ssl_context=site_server.client_ssl_context()) as fetcher:
        await fetcher.fetch(url)
        await fetcher.fetch(url)
    assert [r.sni for r in site_server.requests] == ["site.test", "site.test"]
    assert site_server.connections == 1


async def test_fetch_https_to_an_ip_literal_sends_no_sni(
    open_settings: Settings, https_server: HttpServer
) -> None:
    https_server.route("/", body=b"ip")
    async with Fetcher(open_settings, ssl_context=https_server.client_ssl_context()) as fetcher:
        result = await fetcher.fetch(https_server.url("/"))
    assert result.body == b"ip"
    assert https_server.requests[0].sni is None


async def test_fetch_https_refuses_an_untrusted_certificate(
    open_settings: Settings, site_server: HttpServer
) -> None:
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(TlsFailed) as caught:
            await fetcher.fetch(site_server.url("/", host="site.test"))
    assert caught.value.message == "TLS handshake failed: unable to get local issuer certificate"
    assert site_server.requests == []


async def test_fetch_https_refuses_a_certificate_for_another_name(
    open_settings: Settings, site_server: HttpServer
) -> None:
    context = site_server.client_ssl_context()
    async with Fetcher(open_settings, ssl_context=context) as fetcher:
        with pytest.raises(TlsFailed) as caught:
            await fetcher.fetch(site_server.url("/", host="alias.test"))
        with pytest.raises(TlsFailed):
            await fetcher.fetch(site_server.url("/", host="127.0.0.1"))
    assert caught.value.message == (
        "TLS handshake failed: the certificate does not match the host name"
    )


async def test_fetch_https_refuses_an_expired_certificate(
    open_settings: Settings, tls_ca: trustme.CA
) -> None:
    now = datetime.now(UTC)
    cert = tls_ca.issue_cert(
        "site.test", not_before=now - timedelta(days=30), not_after=now - timedelta(days=1)
    )
    with HttpServer(tls=tls_ca, cert=cert) as server:
        async with Fetcher(open_settings, ssl_context=server.client_ssl_context()) as fetcher:
            with pytest.raises(TlsFailed) as caught:
                await fetcher.fetch(server.url("/", host="site.test"))
    assert caught.value.message == "TLS handshake failed: certificate has expired"


async def test_fetch_https_to_a_plain_http_server_fails_the_handshake(
    open_settings: Settings,
) -> None:
    async def plain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()
        await writer.wait_closed()

    server = await asyncio.start_server(plain, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server, Fetcher(open_settings) as fetcher:
        with pytest.raises(TlsFailed, match=r"^TLS handshake failed: "):
            await fetcher.fetch(f"https://site.test:{port}/")
