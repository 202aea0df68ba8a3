"""resolve_host against a loopback DNS server: lookups, failures, and the address rule."""

from __future__ import annotations

import ipaddress

import pytest

from tests.net.conftest import make_settings
from tests.servers.dns import DnsServer, Fault
from toolrun.config import Settings
from toolrun.net.errors import BlockedAddress, ResolveFailed
from toolrun.net.resolve import resolve_host


@pytest.mark.parametrize(
    ("host", "addresses"),
    [
        ("site.test", ["127.0.0.1"]),
        ("SITE.test.", ["127.0.0.1"]),
        ("v6site.test", ["::1"]),
        ("alias.test", ["127.0.0.1"]),
        ("mixed.test", ["127.0.0.1", "192.168.1.1"]),
        ("localhost", ["127.0.0.1", "::1"]),
        ("app.localhost", ["127.0.0.1", "::1"]),
        ("10.1.2.3", ["10.1.2.3"]),
        ("::1", ["::1"]),
        ("[::1]", ["::1"]),
        ("0x7f.1", ["127.0.0.1"]),
    ],
)
async def test_resolve_host_answers_when_private_allowed(
    open_settings: Settings, host: str, addresses: list[str]
) -> None:
    found = await resolve_host(host, open_settings)
    assert found == [ipaddress.ip_address(a) for a in addresses]


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("site.test", "address 127.0.0.1 (from site.test) is loopback and not allowed"),
        ("private.test", "address 10.0.0.7 (from private.test) is private and not allowed"),
        ("metadata.test", "is a cloud metadata address"),
        ("mixed.test", "address 127.0.0.1 (from mixed.test) is loopback"),
        ("mapped.test", "loopback (IPv4 127.0.0.1 inside IPv6)"),
        ("alias.test", "loopback"),
        ("localhost", "loopback"),
        ("127.0.0.1", "address 127.0.0.1 is loopback and not allowed"),
        ("2130706433", "address 127.0.0.1 (from 2130706433) is loopback"),
        ("fe80::1", "link-local"),
    ],
)
async def test_resolve_host_refuses_by_policy(
    strict_settings: Settings, host: str, message: str
) -> None:
    with pytest.raises(BlockedAddress) as caught:
        await resolve_host(host, strict_settings)
    assert message in caught.value.message


@pytest.mark.parametrize(
    ("host", "fault", "message"),
    [
        ("missing.test", None, "could not resolve missing.test: no such domain (NXDOMAIN)"),
        ("nodata.test", None, "could not resolve nodata.test: the name has no address records"),
        ("site.test", Fault.SERVFAIL, "could not resolve site.test: the DNS server failed"),
        ("site.test", Fault.REFUSED, "could not resolve site.test: the DNS server failed"),
    ],
)
async def test_resolve_host_reports_dns_failures(
    dns: DnsServer, open_settings: Settings, host: str, fault: Fault | None, message: str
) -> None:
    if fault is not None:
        dns.set_fault(f"{host}.", fault)
    with pytest.raises(ResolveFailed) as caught:
        await resolve_host(host, open_settings)
    assert caught.value.message.startswith(message)
    assert caught.value.code == 400


async def test_resolve_host_times_out_as_resolve_failed(dns: DnsServer) -> None:
    dns.set_fault("site.test.", Fault.TIMEOUT)
    settings = make_settings(dns, allow_private_networks=True, http_timeout_s=0.5)
    with pytest.raises(ResolveFailed, match="the DNS lookup timed out"):
        await resolve_host("site.test", settings)
