"""The fetcher refuses what the address policy refuses: directly, via DNS and via redirects.

These tests keep ``allow_private_networks`` false. Every server here is on loopback,
which the policy refuses, so the redirect tests let exactly one address, 127.0.0.1,
stand in for "a public server" (a server on a public address is the one thing a test
cannot have); every other rule stays as it is.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

import pytest

import toolrun.net.resolve
from tests.servers.dns import DnsServer
from tests.servers.http import HttpServer
from toolrun.config import Settings
from toolrun.net.addresses import IPAddress, refusal_reason
from toolrun.net.errors import BlockedAddress, UnsupportedUrl
from toolrun.net.fetch import Fetcher

STAND_IN_PUBLIC = ipaddress.ip_address("127.0.0.1")

LITERAL_FORMS = [
    "127.0.0.1",
    "2130706433",
    "0177.0.0.1",
    "0x7f.1",
    "0x7f000001",
    "127.1",
    "127.0.0.1.",
    "%31%32%37.0.0.1",
    "\uff11\uff12\uff17.\uff10.\uff10.\uff11",  # fullwidth digits
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[64:ff9b::7f00:1]",
    "[2002:7f00:1::]",
    "[::1]",
    "localhost",
    "LOCALHOST.",
    "site.test",
    "alias.test",
    "mapped.test",
    "mixed.test",
    "private.test",
    "metadata.test",
]


@pytest.mark.parametrize("host", LITERAL_FORMS)
async def test_fetch_refuses_private_targets(
    strict_settings: Settings, http_server: HttpServer, host: str
) -> None:
    http_server.route("/", body=b"secret")
    async with Fetcher(strict_settings) as fetcher:
        with pytest.raises(BlockedAddress) as caught:
            await fetcher.fetch(f"http://{host}:{http_server.port}/")
    assert "not allowed" in caught.value.message
    assert caught.value.code == 400
    assert http_server.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/latest/meta-data/",
        "http://100.100.100.200/latest/meta-data/",
        "http://10.0.0.1/",
        "https://192.168.0.1/",
        "http://[fe80::1]/",
    ],
)
async def test_fetch_refuses_before_connecting(strict_settings: Settings, url: str) -> None:
    async with Fetcher(strict_settings) as fetcher:
        with pytest.raises(BlockedAddress, match="not allowed"):
            await fetcher.fetch(url)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("ftp://127.0.0.1/", "unsupported URL scheme 'ftp'"),
        ("http://user:pw@127.0.0.1:8080/", "user name or password"),
        ("http://127.0.0.1:22/", "port 22 is not allowed"),
        ("http://127.0.0.1:25/", "port 25 is not allowed"),
    ],
)
async def test_fetch_refuses_unsupported_urls_even_when_private_allowed(
    open_settings: Settings, url: str, message: str
) -> None:
    async with Fetcher(open_settings) as fetcher:
        with pytest.raises(UnsupportedUrl, match=message):
            await fetcher.fetch(url)


@pytest.fixture
def public_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let 127.0.0.1 (only) pass the policy, as if it were a public address."""

    def reason(ip: IPAddress) -> str | None:
        return None if ip == STAND_IN_PUBLIC else refusal_reason(ip)

    monkeypatch.setattr(toolrun.net.resolve, "refusal_reason", reason)


@pytest.fixture
def inner_server() -> Iterator[HttpServer]:
    """A server on 127.0.0.2: private, so it must never receive a request."""
    with HttpServer(host="127.0.0.2") as server:
        server.route("/", body=b"internal")
        yield server


@pytest.mark.usefixtures("public_loopback")
async def test_fetch_allows_the_stand_in_public_address(
    strict_settings: Settings, http_server: HttpServer
) -> None:
    http_server.route("/", body=b"public")
    async with Fetcher(strict_settings) as fetcher:
        result = await fetcher.fetch(http_server.url("/"))
    assert result.body == b"public"


@pytest.mark.usefixtures("public_loopback")
@pytest.mark.parametrize(
    "location",
    [
        "http://127.0.0.2:{port}/",
        "http://second.test:{port}/",
        "http://2130706434:{port}/",
        "http://127.2:{port}/",
        "http://[::ffff:127.0.0.2]:{port}/",
        "http://localhost:{port}/",
        "http://169.254.169.254/latest/meta-data/",
        "http://private.test/",
    ],
)
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
async def test_fetch_refuses_redirect_to_private_address(
    strict_settings: Settings,
    http_server: HttpServer,
    inner_server: HttpServer,
    location: str,
    status: int,
) -> None:
    http_server.redirect("/go", location.format(port=inner_server.port), status=status)
    async with Fetcher(strict_settings) as fetcher:
        with pytest.raises(BlockedAddress, match="not allowed"):
            await fetcher.fetch(http_server.url("/go"))
    assert [r.path for r in http_server.requests] == ["/go"]
    assert inner_server.requests == []


async def test_fetch_resolves_each_host_once(
    open_settings: Settings, dns: DnsServer, http_server: HttpServer
) -> None:
    http_server.route("/", body=b"ok")
    async with Fetcher(open_settings) as fetcher:
        result = await fetcher.fetch(f"http://site.test:{http_server.port}/")
    assert result.body == b"ok"
    assert result.remote_ip == "127.0.0.1"
    asked = sorted((q.name.lower(), q.type) for q in dns.queries)
    assert asked == [("site.test.", "A"), ("site.test.", "AAAA")]
    assert http_server.requests[0].header("host") == f"site.test:{http_server.port}"
