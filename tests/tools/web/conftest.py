"""Fixtures for the website tools: loopback HTTP(S) and DNS servers, contexts and pages."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from PIL import Image

from tests.servers.dns import DnsServer
from tests.servers.http import http_server, https_server, tls_ca  # noqa: F401
from toolrun.config import Settings
from toolrun.tools.base import ToolContext
from toolrun.tools.web.page import Page
from toolrun.tools.web.site import Site, SiteFile

ZONE = """\
$ORIGIN test.
$TTL 60
site            IN A     127.0.0.1
other           IN A     127.0.0.1
"""


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with DnsServer(ZONE) as server:
        yield server


@pytest.fixture
def settings(dns: DnsServer) -> Settings:
    return Settings(allow_private_networks=True, dns_nameservers=[dns.nameserver], http_timeout_s=3)


def make_ctx(settings: Settings, **services: object) -> ToolContext:
    return ToolContext(
        settings=settings,
        job_id="job",
        account_id="account",
        deadline_at=datetime.now(UTC) + timedelta(seconds=60),
        services=services,
    )


@pytest.fixture
def ctx(settings: Settings) -> ToolContext:
    return make_ctx(settings)


def image_bytes(width: int, height: int, fmt: str = "PNG", **options: object) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, fmt, **options)
    return buffer.getvalue()


def site_of(
    html: str,
    url: str = "https://example.test/page",
    *,
    headers: list[tuple[str, str]] | None = None,
    robots: str | None = None,
    sitemap: str | None = None,
    llms: str | None = None,
    status_code: int = 200,
) -> Site:
    """A Site from literal HTML and site files (None = the file answered 404)."""
    page = Page.from_html(html, url, headers=headers, status_code=status_code)

    def file(path: str, text: str | None) -> SiteFile:
        if text is None:
            return SiteFile(url=page.origin + path, status_code=404, text="not found")
        return SiteFile(
            url=page.origin + path, status_code=200, content_type="text/plain", text=text
        )

    return Site(
        page=page,
        robots_file=file("/robots.txt", robots),
        sitemap_file=file("/sitemap.xml", sitemap),
        llms_file=file("/llms.txt", llms),
    )
