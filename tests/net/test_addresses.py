"""The address policy, one row per address form."""

from __future__ import annotations

import ipaddress

import pytest

from toolrun.net.addresses import describe_refusal, refusal_reason

REFUSED = [
    # IPv4
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "reserved"),
    ("10.0.0.1", "private"),
    ("10.255.255.255", "private"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("169.254.0.1", "link-local"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.0.0.8", "IETF"),
    ("192.0.2.1", "documentation"),
    ("192.88.99.1", "reserved"),
    ("192.168.1.1", "private"),
    ("198.18.0.1", "benchmarking"),
    ("198.19.255.255", "benchmarking"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.5", "documentation"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
    # cloud metadata
    ("169.254.169.254", "cloud metadata"),
    ("169.254.170.2", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"),
    ("168.63.129.16", "cloud metadata"),
    ("192.0.0.192", "cloud metadata"),
    ("fd00:ec2::254", "cloud metadata"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    # IPv6
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("febf:ffff::1", "link-local"),
    ("fec0::1", "site-local"),
    ("fc00::1", "private"),
    ("fd12:3456:789a::1", "private"),
    ("ff02::1", "multicast"),
    ("ff0e::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("3fff::1", "documentation"),
    ("100::1", "discard"),
    ("2001::1", "Teredo"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("2001:2::1", "IETF"),
    ("5f00::1", "SRv6"),
    ("4000::1", "reserved"),
    ("::2", "IPv4-compatible"),
    # IPv6 carrying IPv4
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:7f00:1", "loopback"),
    ("::ffff:10.1.2.3", "private"),
    ("::ffff:0.0.0.0", "unspecified"),
    ("::127.0.0.1", "IPv4-compatible"),
    ("::8.8.8.8", "IPv4-compatible"),
    ("::ffff:0:8.8.8.8", "IPv4-compatible"),
    ("64:ff9b::127.0.0.1", "loopback"),
    ("64:ff9b::a9fe:a9fe", "cloud metadata"),
    ("64:ff9b::192.168.0.1", "private"),
    ("64:ff9b:1::8.8.8.8", "local NAT64"),
    ("2002:7f00:1::", "loopback"),
    ("2002:a00:1::1", "private"),
    ("2002:a9fe:a9fe::1", "cloud metadata"),
]

ALLOWED = [
    "1.1.1.1",
    "8.8.8.8",
    "93.184.215.14",
    "100.63.255.255",  # just below CGNAT
    "100.128.0.0",  # just above CGNAT
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.1",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:808:808::1",
]


@pytest.mark.parametrize(("text", "reason"), REFUSED)
def test_refusal_reason_refuses(text: str, reason: str) -> None:
    found = refusal_reason(ipaddress.ip_address(text))
    assert found is not None
    assert reason in found


@pytest.mark.parametrize("text", ALLOWED)
def test_refusal_reason_allows_public(text: str) -> None:
    assert refusal_reason(ipaddress.ip_address(text)) is None


def test_describe_refusal_names_address_and_host() -> None:
    ip = ipaddress.ip_address("10.0.0.1")
    assert describe_refusal(ip, "private") == "address 10.0.0.1 is private and not allowed"
    assert (
        describe_refusal(ip, "private", "intranet.example")
        == "address 10.0.0.1 (from intranet.example) is private and not allowed"
    )
