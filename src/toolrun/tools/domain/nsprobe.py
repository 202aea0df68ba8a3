"""Ask one name server directly for a zone's SOA: is it authoritative, which serial.

The shared DNS client reports a resolver's view; lame delegation needs each
delegated server's own answer and its AA flag, so this asks the server itself
(UDP, TCP when truncated). Addresses the network policy refuses are not asked.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import dns.asyncquery
import dns.exception
import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype

from toolrun.config import Settings
from toolrun.net.addresses import refusal_reason


@dataclass(frozen=True)
class NsProbe:
    """One server's answer to ``<zone> SOA``."""

    address: str
    answered: bool
    authoritative: bool
    rcode: str | None = None
    serial: int | None = None
    mname: str | None = None
    error: str | None = None


async def probe(
    zone: str,
    address: str,
    settings: Settings,
    *,
    port: int = 53,
    timeout: float = 3.0,  # noqa: ASYNC109 (dnspython's per-query timeout)
) -> NsProbe:
    """Ask ``address`` for ``zone``'s SOA without recursion."""
    ip = ipaddress.ip_address(address)
    reason = None if settings.allow_private_networks else refusal_reason(ip)
    if reason is not None:
        return NsProbe(address, False, False, error=f"not asked: {reason} address")
    message = dns.message.make_query(zone + ".", dns.rdatatype.SOA)
    message.flags &= ~dns.flags.RD
    try:
        response = await dns.asyncquery.udp(message, address, port=port, timeout=timeout)
        if response.flags & dns.flags.TC:
            response = await dns.asyncquery.tcp(message, address, port=port, timeout=timeout)
    except dns.exception.Timeout:
        return NsProbe(address, False, False, error="no answer (timeout)")
    except (OSError, dns.exception.DNSException) as exc:
        return NsProbe(address, False, False, error=f"no usable answer ({type(exc).__name__})")
    rcode = dns.rcode.to_text(response.rcode())
    authoritative = bool(response.flags & dns.flags.AA) and rcode == "NOERROR"
    for rrset in response.answer:
        if rrset.rdtype == dns.rdatatype.SOA and rrset:
            soa = rrset[0]
            return NsProbe(
                address,
                True,
                authoritative,
                rcode,
                int(soa.serial),
                soa.mname.to_text().rstrip("."),
            )
    return NsProbe(address, True, False, rcode)
