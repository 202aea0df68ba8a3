"""Ask one name server directly for a zone's SOA and NS: authoritative? which serial?

The shared DNS client reports a resolver's view; lame delegation and consistency need
each delegated server's own answers and its AA flag, so this asks the server itself
(no recursion; UDP, TCP when truncated; packets that are no answer are dropped as
``toolrun.net.dns.exchange`` does). Addresses the network policy refuses are not asked.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdata
import dns.rdatatype
import dns.rdtypes.nsbase
from dns.rdtypes.ANY.SOA import SOA

from toolrun.config import Settings
from toolrun.net.addresses import refusal_reason
from toolrun.net.dns import TIMEOUT, Unanswered, exchange


@dataclass(frozen=True)
class NsProbe:
    """One server's answers for ``<zone> SOA`` and ``<zone> NS``.

    ``ns`` is the NS set the server returns (sorted host names), None when that
    question got no authoritative answer; the SOA fields are None without an SOA.
    """

    address: str
    answered: bool
    authoritative: bool
    rcode: str | None = None
    serial: int | None = None
    mname: str | None = None
    error: str | None = None
    rname: str | None = None
    timers: tuple[int, int, int, int] | None = None  # refresh, retry, expire, minimum
    ns: tuple[str, ...] | None = None


async def probe(
    zone: str,
    address: str,
    settings: Settings,
    *,
    port: int = 53,
    timeout: float = 3.0,  # noqa: ASYNC109 (the budget of each question)
) -> NsProbe:
    """Ask ``address`` for ``zone``'s SOA and NS (both at once) without recursion."""
    ip = ipaddress.ip_address(address)
    reason = None if settings.allow_private_networks else refusal_reason(ip)
    if reason is not None:
        return NsProbe(address, False, False, error=f"not asked: {reason} address")
    soa, ns = await asyncio.gather(
        _ask(zone, dns.rdatatype.SOA, address, port, timeout),
        _ask(zone, dns.rdatatype.NS, address, port, timeout),
    )
    if isinstance(soa, Unanswered):
        error = "no answer (timeout)" if soa.status == TIMEOUT else f"no usable answer ({soa})"
        return NsProbe(address, False, False, error=error)
    rcode = dns.rcode.to_text(soa.rcode())
    authoritative = bool(soa.flags & dns.flags.AA) and rcode == "NOERROR"
    found = [r for r in _records(soa, zone, dns.rdatatype.SOA) if isinstance(r, SOA)]
    if not found:
        return NsProbe(address, True, False, rcode)
    record = found[0]
    return NsProbe(
        address,
        True,
        authoritative,
        rcode,
        int(record.serial),
        _host(record.mname),
        rname=_host(record.rname),
        timers=(int(record.refresh), int(record.retry), int(record.expire), int(record.minimum)),
        ns=_ns_set(ns, zone),
    )


async def _ask(
    zone: str, rdtype: dns.rdatatype.RdataType, address: str, port: int, budget: float
) -> dns.message.Message | Unanswered:
    message = dns.message.make_query(zone + ".", rdtype)
    message.flags &= ~dns.flags.RD
    try:
        return await exchange(message, address, port, timeout=budget)
    except Unanswered as exc:
        return exc


def _records(
    response: dns.message.Message, zone: str, rdtype: dns.rdatatype.RdataType
) -> list[dns.rdata.Rdata]:
    owner = dns.name.from_text(zone)
    return [
        rd
        for rrset in response.answer
        if rrset.rdtype == rdtype and rrset.name == owner
        for rd in rrset
    ]


def _ns_set(response: dns.message.Message | Unanswered, zone: str) -> tuple[str, ...] | None:
    if isinstance(response, Unanswered) or not response.flags & dns.flags.AA:
        return None
    hosts = {
        _host(rd.target)
        for rd in _records(response, zone, dns.rdatatype.NS)
        if isinstance(rd, dns.rdtypes.nsbase.NSBase)
    }
    return tuple(sorted(hosts)) if hosts else None


def _host(name: dns.name.Name) -> str:
    return name.to_text().rstrip(".").lower()
