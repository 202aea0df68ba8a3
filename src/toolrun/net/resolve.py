"""Resolve a host to the addresses an outbound connection may use.

The guard resolves names itself (dnspython, the configured nameservers or the
system's) and checks every address; callers then dial one of exactly these
addresses, so there is no second lookup for DNS rebinding to exploit.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress

import dns.asyncresolver
import dns.exception
import dns.name
import dns.nameserver
import dns.resolver

from toolrun.config import Settings
from toolrun.net.addresses import IPAddress, describe_refusal, refusal_reason
from toolrun.net.errors import BlockedAddress, ResolveFailed
from toolrun.net.urls import parse_host

_LOOPBACK = [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]


async def resolve_host(host: str, settings: Settings) -> list[IPAddress]:
    """The addresses of ``host`` (a name or an IP literal), all allowed by the policy.

    Raises ResolveFailed when the name has no address, and BlockedAddress when
    any address is refused (one bad address refuses the host), unless
    ``settings.allow_private_networks`` lifts the address rule.
    """
    addresses = await lookup(host, settings)
    if not settings.allow_private_networks:
        check_addresses(host, addresses)
    return addresses


def check_addresses(host: str, addresses: list[IPAddress]) -> None:
    """Raise BlockedAddress for the first address the policy refuses."""
    for address in addresses:
        reason = refusal_reason(address)
        if reason is not None:
            raise BlockedAddress(describe_refusal(address, reason, host))


async def lookup(host: str, settings: Settings) -> list[IPAddress]:
    """The A then AAAA addresses of ``host``, without the policy check."""
    name, literal = _normalise(host)
    if literal is not None:
        return [literal]
    bare = name.rstrip(".")
    if bare == "localhost" or bare.endswith(".localhost"):
        return list(_LOOPBACK)  # RFC 6761: never sent to DNS
    resolver = _resolver(settings)
    results = await asyncio.gather(
        _query(resolver, name, "A", settings.http_timeout_s),
        _query(resolver, name, "AAAA", settings.http_timeout_s),
        return_exceptions=True,
    )
    addresses = [a for result in results if isinstance(result, list) for a in result]
    if addresses:
        return addresses
    errors = [r for r in results if isinstance(r, BaseException)]
    raise ResolveFailed(f"could not resolve {name}: {_describe(errors)}")


def _normalise(host: str) -> tuple[str, IPAddress | None]:
    text = host.strip()
    if ":" in text and not text.startswith("["):
        text = f"[{text}]"
    return parse_host(text)


def _resolver(settings: Settings) -> dns.asyncresolver.Resolver:
    return _resolver_for(tuple(settings.dns_nameservers))


@functools.lru_cache(maxsize=16)
def _resolver_for(nameservers: tuple[tuple[str, int], ...]) -> dns.asyncresolver.Resolver:
    """One resolver per set of nameservers (none: the system's), kept for the process: a
    resolver holds no per-query state, and the system's reads /etc/resolv.conf when made."""
    if not nameservers:
        try:
            return dns.asyncresolver.Resolver()
        except dns.resolver.NoResolverConfiguration:
            raise ResolveFailed("no DNS resolver is configured") from None
    resolver = dns.asyncresolver.Resolver(configure=False)
    resolver.nameservers = [
        dns.nameserver.Do53Nameserver(address, port) for address, port in nameservers
    ]
    return resolver


async def _query(
    resolver: dns.asyncresolver.Resolver, name: str, rdtype: str, lifetime: float
) -> list[IPAddress]:
    answer = await resolver.resolve(
        dns.name.from_text(name), rdtype, search=False, lifetime=lifetime
    )
    return [ipaddress.ip_address(record.address) for record in answer]


def _describe(errors: list[BaseException]) -> str:
    kinds = {type(error) for error in errors}
    if dns.resolver.NXDOMAIN in kinds:
        return "no such domain (NXDOMAIN)"
    if kinds <= {dns.resolver.NoAnswer}:
        return "the name has no address records"
    if kinds & {dns.resolver.LifetimeTimeout, dns.exception.Timeout}:
        return "the DNS lookup timed out"
    if dns.resolver.NoNameservers in kinds:
        return "the DNS server failed (SERVFAIL or refused)"
    if kinds & {dns.name.LabelTooLong, dns.name.NameTooLong, dns.name.EmptyLabel}:
        return "not a valid host name"
    return "the DNS lookup failed"
