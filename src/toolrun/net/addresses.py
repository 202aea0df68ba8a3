"""The address policy: which IP addresses outbound connections may reach.

Only public unicast addresses are allowed. IPv6 forms that carry an IPv4
address (mapped, compatible, 6to4, NAT64) are judged by the IPv4 address they
lead to, as imgproxy's ``privatenet`` does. Cloud metadata endpoints are named
on their own, because some sit in otherwise public space (Azure's wireserver).
"""

from __future__ import annotations

import ipaddress
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network

IPAddress = IPv4Address | IPv6Address

CLOUD_METADATA = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OCI, DigitalOcean, Hetzner, OpenStack
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.253",  # AWS VPC DNS
        "169.254.169.123",  # AWS time sync
        "169.254.0.23",  # Tencent Cloud
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
        "168.63.129.16",  # Azure wireserver: public space, so named here
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::253",  # AWS VPC DNS over IPv6
        "fd00:ec2::123",  # AWS time sync over IPv6
    )
)

_V4_RULES: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), reason)
    for net, reason in (
        ("0.0.0.0/32", "unspecified"),
        ("0.0.0.0/8", "reserved"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared (carrier-grade NAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved for IETF protocols"),
        ("192.0.2.0/24", "reserved for documentation"),
        ("192.88.99.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "reserved for benchmarking"),
        ("198.51.100.0/24", "reserved for documentation"),
        ("203.0.113.0/24", "reserved for documentation"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
    )
)

_V6_RULES: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), reason)
    for net, reason in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "reserved for local NAT64"),
        ("100::/64", "reserved (discard-only)"),
        ("2001::/32", "a Teredo tunnel address"),
        ("2001::/23", "reserved for IETF protocols"),
        ("2001:db8::/32", "reserved for documentation"),
        ("3fff::/20", "reserved for documentation"),
        ("5f00::/16", "reserved (SRv6)"),
        ("fc00::/7", "private"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "private (site-local)"),
        ("ff00::/8", "multicast"),
    )
)

_GLOBAL_UNICAST_V6 = IPv6Network("2000::/3")
_V4_MAPPED = IPv6Network("::ffff:0:0/96")
_V4_TRANSLATED = IPv6Network("::ffff:0:0:0/96")
_V4_COMPATIBLE = IPv6Network("::/96")
_NAT64 = IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = IPv6Network("2002::/16")


def refusal_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` may not be reached, or None when it is a public address.

    The reason is a short phrase that reads after "is": "loopback", "private",
    "link-local", "multicast", "reserved", "a cloud metadata address", ...
    """
    if isinstance(ip, IPv6Address) and ip.scope_id is not None:
        ip = IPv6Address(ip.compressed.split("%", 1)[0])
    if ip in CLOUD_METADATA:
        return "a cloud metadata address"
    if isinstance(ip, IPv4Address):
        return _v4_reason(ip)
    return _v6_reason(ip)


def _v4_reason(ip: IPv4Address) -> str | None:
    for network, reason in _V4_RULES:
        if ip in network:
            return reason
    return None if ip.is_global else "reserved"


def _v6_reason(ip: IPv6Address) -> str | None:
    embedded = _embedded_v4(ip)
    if embedded is not None:
        reason = refusal_reason(embedded)
        return None if reason is None else f"{reason} (IPv4 {embedded} inside IPv6)"
    for network, reason in _V6_RULES:
        if ip in network:
            return reason
    if ip in _V4_COMPATIBLE or ip in _V4_TRANSLATED:
        # Deprecated forms no real host uses; refuse whatever they carry.
        return "reserved (IPv4-compatible)"
    if ip in _NAT64:
        return None
    return None if ip in _GLOBAL_UNICAST_V6 else "reserved"


def _embedded_v4(ip: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address leads to: mapped, NAT64 or 6to4 forms."""
    if ip in _V4_MAPPED or ip in _NAT64:
        return IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _SIX_TO_FOUR:
        return IPv4Address((int(ip) >> 80) & 0xFFFFFFFF)
    return None


def describe_refusal(ip: IPAddress, reason: str, host: str | None = None) -> str:
    """The public message for a refused address, naming the host it came from."""
    via = f" (from {host})" if host and host != str(ip) else ""
    return f"address {ip}{via} is {reason} and not allowed"
