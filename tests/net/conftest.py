"""Fixtures for the network guard's tests: loopback HTTP(S) and DNS servers, settings."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.dns import DnsServer
from tests.servers.http import http_server, https_server, tls_ca  # noqa: F401
from toolrun.config import Settings

ZONE = """\
$ORIGIN test.
$TTL 60
site            IN A     127.0.0.1
v6site          IN AAAA  ::1
private         IN A     10.0.0.7
metadata        IN A     169.254.169.254
mixed           IN A     127.0.0.1
mixed           IN A     192.168.1.1
mapped          IN AAAA  ::ffff:7f00:1
nodata          IN TXT   "no address here"
alias           IN CNAME site.test.
second          IN A     127.0.0.2
"""


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    """A loopback DNS server answering for the ``.test`` names in ZONE."""
    with DnsServer(ZONE) as server:
        yield server


@pytest.fixture
def open_settings(dns: DnsServer) -> Settings:
    """Settings for fetching loopback servers: the address rule lifted, our DNS server."""
    return make_settings(dns, allow_private_networks=True)


@pytest.fixture
def strict_settings(dns: DnsServer) -> Settings:
    """Production policy (private networks refused), our DNS server."""
    return make_settings(dns, allow_private_networks=False)


def make_settings(dns: DnsServer, **overrides: object) -> Settings:
    values: dict[str, object] = {"dns_nameservers": [dns.nameserver], "http_timeout_s": 5.0}
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]
