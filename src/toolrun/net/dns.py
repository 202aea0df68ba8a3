"""DNS queries: one name, one record type, one answer with a status (dnspython, async).

``query()`` asks the given nameservers, else ``TOOLRUN_DNS_NAMESERVERS``, else the
system resolver's nameservers (``/etc/resolv.conf``), over UDP with EDNS, retrying
over TCP when the answer is truncated. Nameservers are tried in order: the first
that answers NOERROR, NODATA or NXDOMAIN wins; after SERVFAIL, REFUSED or silence
the next one is asked. DNS outcomes never raise; each is a status:

    NOERROR   records of the type (or a CNAME chain) answered
    NODATA    the name exists, no record of the type
    NXDOMAIN  the name does not exist
    SERVFAIL  the server failed (SERVFAIL, FORMERR and other rcodes), or answered
              something unusable
    REFUSED   the server refused the query
    TIMEOUT   no answer within the time allowed (or the server could not be reached)

An answer's ``detail`` says why, when the status is not the server's own rcode.
UDP packets that are no answer to the query (another sender, unreadable bytes, another
id or question) are dropped and the wait goes on, as RFC 5452 §9.1 asks of a resolver;
if only such packets came, the status is SERVFAIL, with what was dropped as detail. A
packet that carries the query's id and the response flag but does not parse (bad
rdata, say) is the server's answer: SERVFAIL at once.

Names are written as A-labels first (IDNA 2008 with UTS #46 mapping: "Bücher.example"
asks for ``xn--bcher-kva.example.``). For PTR an IP address stands for its reverse
name. Values are in presentation format ("10 mail.example.com.",
'0 issue "letsencrypt.org"', "10 5 5060 sip.example.com."), except TXT: its
character-strings are concatenated without separator or quotes, as RFC 7208 §3.3
reads them, so an SPF, DMARC or DKIM value split into 255-byte strings comes back whole
(bytes that are not UTF-8 appear as ``\\xNN``).
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass

import dns.asyncquery
import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdata
import dns.rdatatype
import dns.resolver
import dns.reversename
import dns.rrset
import idna

from toolrun.config import Settings

RECORD_TYPES: tuple[str, ...] = (
    "A",
    "AAAA",
    "CNAME",
    "MX",
    "TXT",
    "NS",
    "SOA",
    "SRV",
    "CAA",
    "PTR",
)
"""The record types the DNS tools offer, in catalog order (``query`` takes any known type)."""

NOERROR = "NOERROR"
NODATA = "NODATA"
NXDOMAIN = "NXDOMAIN"
SERVFAIL = "SERVFAIL"
REFUSED = "REFUSED"
TIMEOUT = "TIMEOUT"
ANSWERED = frozenset({NOERROR, NODATA, NXDOMAIN})
"""Statuses that are the name's real answer: no other nameserver is asked after one."""

DNS_PORT = 53
EDNS_PAYLOAD = 1232  # the DNS flag day 2020 size: no IP fragmentation
MAX_NAME_LENGTH = 253
MAX_LABEL_LENGTH = 63


class InvalidName(ValueError):
    """The name cannot be written as DNS labels (bad IDN, empty or over-long label)."""


@dataclass(frozen=True)
class DnsRecord:
    """One record of an answer: owner name (absolute, A-labels), TTL, presentation value."""

    type: str
    name: str
    ttl: int | None
    value: str


@dataclass(frozen=True)
class DnsAnswer:
    """What one nameserver said about one (name, type); ``resolver`` names that nameserver.

    ``detail`` explains a status the server's rcode does not ("malformed answer: ...",
    "no answer in time"); it is None for a plain answer.
    """

    rtype: str
    status: str
    records: list[DnsRecord]
    resolver: str
    authenticated: bool
    detail: str | None = None


class Unanswered(Exception):
    """No usable answer from one nameserver; ``status`` is TIMEOUT or SERVFAIL."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def query(
    name: str,
    rtype: str,
    settings: Settings,
    *,
    nameservers: Sequence[tuple[str, int]] | None = None,
    timeout: float = 5.0,  # noqa: ASYNC109 (the shared contract's signature)
) -> DnsAnswer:
    """Ask for the ``rtype`` records of ``name``; ``timeout`` is the whole budget in seconds.

    Raises ``InvalidName`` for a name that cannot be encoded and ``ValueError`` for an
    unknown type; every DNS outcome is a status of the returned answer.
    """
    try:
        rdtype = dns.rdatatype.from_text(rtype.upper())
    except dns.rdatatype.UnknownRdatatype:
        raise ValueError(f"unknown record type {rtype!r}") from None
    rtype = dns.rdatatype.to_text(rdtype)
    qname = question_name(name, rtype)
    servers = _servers(nameservers, settings)
    if not servers:
        return DnsAnswer(rtype, SERVFAIL, [], "system (no nameserver configured)", False)
    message = dns.message.make_query(qname, rdtype, use_edns=0, payload=EDNS_PAYLOAD)
    message.flags |= dns.flags.AD  # RFC 6840 §5.7: ask a validating resolver to report AD
    budget = timeout / len(servers)
    fallback: DnsAnswer | None = None
    for (host, port), label in servers:
        answer = await _ask(message, host, port, budget=budget, rtype=rtype, label=label)
        if answer.status in ANSWERED:
            return answer
        if fallback is None or (fallback.status == TIMEOUT and answer.status != TIMEOUT):
            fallback = answer
    assert fallback is not None
    return fallback


def to_ascii(name: str) -> str:
    """``name`` as lower-case A-labels without the trailing dot; raises ``InvalidName``.

    Labels are mapped with UTS #46 (case folding, full-width dots), then each non-ASCII
    label is IDNA-encoded. ASCII labels pass as they are, so ``_dmarc`` and ``_sip``
    work; an ``xn--`` label must decode.
    """
    text = name.strip()
    text = text[:-1] if text.endswith(".") else text
    if not text:
        raise InvalidName("empty name")
    try:
        mapped = idna.uts46_remap(text, std3_rules=False, transitional=False)
    except idna.IDNAError as exc:
        raise InvalidName(f"not a valid domain name: {exc}") from None
    labels = [_ascii_label(label) for label in mapped.split(".")]
    result = ".".join(labels)
    if len(result) > MAX_NAME_LENGTH:
        raise InvalidName(f"longer than {MAX_NAME_LENGTH} characters once encoded")
    return result


def _ascii_label(label: str) -> str:
    if not label:
        raise InvalidName("empty label")
    try:
        if label.isascii():
            if label.startswith("xn--"):
                idna.decode(label)
            encoded = label
        else:
            encoded = idna.encode(label).decode("ascii")
    except (idna.IDNAError, UnicodeError) as exc:
        raise InvalidName(f"label {label!r} is not valid: {exc}") from None
    if len(encoded) > MAX_LABEL_LENGTH:
        raise InvalidName(f"label {label!r} is longer than {MAX_LABEL_LENGTH} characters")
    return encoded


def question_name(name: str, rtype: str) -> dns.name.Name:
    """The name asked: an IP address's reverse name for PTR, else ``name`` in A-labels."""
    if rtype.upper() == "PTR":
        try:
            address = ipaddress.ip_address(name.strip())
        except ValueError:
            pass
        else:
            return dns.reversename.from_address(str(address))
    labels = [label.encode("ascii") for label in to_ascii(name).split(".")]
    return dns.name.Name([*labels, b""])  # labels taken as they are: no zone-file escapes


def parse_nameserver(text: str) -> tuple[str, int]:
    """``(ip, port)`` from "ip", "ip:port", "v6" or "[v6]:port"; raises ``ValueError``.

    Only IP addresses: a nameserver named by host name would need DNS to find DNS.
    """
    text = text.strip()
    port = DNS_PORT
    if text.startswith("["):
        host, closed, rest = text[1:].partition("]")
        if not closed or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r} is not an IP address, IP:port or [IPv6]:port")
        if rest:
            port = _parse_port(rest[1:], text)
        version = 6
    elif text.count(":") == 1:
        host, port_text = text.split(":")
        port = _parse_port(port_text, text)
        version = 4
    else:
        host, version = text, 0
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"{text!r} is not an IP address, IP:port or [IPv6]:port") from None
    if version and address.version != version:
        raise ValueError(f"{text!r}: use [IPv6]:port for an IPv6 address with a port")
    return str(address), port


def _parse_port(text: str, whole: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(f"{whole!r}: the port must be a number from 1 to 65535")
    return int(text)


def format_nameserver(nameserver: tuple[str, int]) -> str:
    """ "1.1.1.1:53" or "[2606:4700::1111]:53": the label a nameserver is reported by."""
    host, port = nameserver
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _servers(
    nameservers: Sequence[tuple[str, int]] | None, settings: Settings
) -> list[tuple[tuple[str, int], str]]:
    """The nameservers to ask, each with the label answers will name it by."""
    chosen = list(nameservers or settings.dns_nameservers)
    if chosen:
        return [(server, format_nameserver(server)) for server in chosen]
    return [
        (server, f"system ({server[0] if server[1] == DNS_PORT else format_nameserver(server)})")
        for server in system_nameservers()
    ]


@functools.lru_cache(maxsize=1)
def system_nameservers() -> tuple[tuple[str, int], ...]:
    """The IP nameservers of the system configuration, read once per process."""
    try:
        resolver = dns.resolver.Resolver()
    except dns.resolver.NoResolverConfiguration:
        return ()
    servers = []
    for server in resolver.nameservers:
        try:
            servers.append((str(ipaddress.ip_address(str(server))), resolver.port))
        except ValueError:  # DNS-over-HTTPS URLs and the like: not for plain queries
            continue
    return tuple(servers)


async def _ask(
    message: dns.message.Message, host: str, port: int, *, budget: float, rtype: str, label: str
) -> DnsAnswer:
    """One nameserver's answer as a status."""
    try:
        response = await exchange(message, host, port, timeout=budget)
    except Unanswered as exc:
        return DnsAnswer(rtype, exc.status, [], label, False, exc.detail)
    return _answer(response, rtype, label)


async def exchange(
    message: dns.message.Message,
    host: str,
    port: int,
    *,
    timeout: float,  # noqa: ASYNC109 (one budget for UDP and the TCP retry)
) -> dns.message.Message:
    """The answer of ``host`` to ``message``: UDP, then TCP when truncated.

    Raises ``Unanswered`` (TIMEOUT or SERVFAIL, with the reason) instead of DNS errors;
    the module docstring says which packets are dropped and which are final.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    response = await _udp(message, host, port, deadline)
    if response.flags & dns.flags.TC:
        response = await _tcp(message, host, port, max(deadline - loop.time(), 0.001))
    return response


class _Inbox(asyncio.DatagramProtocol):
    """The packets (or socket errors) arriving on one query's UDP socket."""

    def __init__(self) -> None:
        self.packets: asyncio.Queue[tuple[bytes, tuple[str, int]] | Exception] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.packets.put_nowait((data, addr))

    def error_received(self, exc: Exception) -> None:
        self.packets.put_nowait(exc)


async def _udp(
    message: dns.message.Message, host: str, port: int, deadline: float
) -> dns.message.Message:
    """The answer over UDP, from a socket of its own (a fresh random source port)."""
    loop = asyncio.get_running_loop()
    address = ipaddress.ip_address(host)
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    dropped: list[str] = []
    try:
        transport, inbox = await loop.create_datagram_endpoint(_Inbox, family=family)
        try:
            transport.sendto(message.to_wire(), (host, port))
            async with asyncio.timeout_at(deadline):
                while True:
                    packet = await inbox.packets.get()
                    if isinstance(packet, Exception):
                        raise packet
                    data, source = packet
                    if ipaddress.ip_address(source[0]) != address or source[1] != port:
                        continue  # not from the server asked
                    read = _read(message, data)
                    if isinstance(read, dns.message.Message):
                        return read
                    dropped.append(read)
        finally:
            transport.close()
    except TimeoutError:
        pass
    except OSError as exc:
        raise Unanswered(TIMEOUT, f"the nameserver could not be reached ({exc})") from None
    if dropped:
        reasons = "; ".join(dict.fromkeys(dropped))
        raise Unanswered(SERVFAIL, f"no usable answer in time, only: {reasons}")
    raise Unanswered(TIMEOUT, "no answer in time")


def _read(query: dns.message.Message, data: bytes) -> dns.message.Message | str:
    """The packet as the answer to ``query``, else why it is dropped.

    Only the header, question and answer sections are read: nothing here uses the
    authority or additional records (the SOA of a negative answer, glue, OPT), and
    parsing them was most of the cost of reading an answer (a NODATA answer with its
    SOA: 7x faster without). So an extended RCODE (OPT) is not seen; we send EDNS
    version 0, so only BADVERS could use one. Raises ``Unanswered`` for a packet that
    does not parse but carries the query's id and the response flag: the server's own
    answer, malformed.
    """
    try:
        response = dns.message.from_wire(_header_and_answers(data), ignore_trailing=True)
    except dns.exception.DNSException as exc:
        if len(data) >= 12 and int.from_bytes(data[:2], "big") == query.id and data[2] & 0x80:
            raise Unanswered(SERVFAIL, f"malformed answer: {exc}") from None
        return f"an unreadable packet ({len(data)} bytes)"
    if response.id != query.id:
        return f"an answer with id {response.id}, not {query.id}"
    if not query.is_response(response):
        return "an answer to another question"
    return response


def _header_and_answers(data: bytes) -> bytes:
    """``data`` with NSCOUNT and ARCOUNT set to 0, so a parser stops after the answers."""
    return data[:8] + b"\0\0\0\0" + data[12:] if len(data) >= 12 else data


async def _tcp(
    message: dns.message.Message, host: str, port: int, budget: float
) -> dns.message.Message:
    try:
        return await dns.asyncquery.tcp(message, host, timeout=budget, port=port)
    except dns.exception.Timeout:
        raise Unanswered(TIMEOUT, "no answer over TCP in time") from None
    except (OSError, EOFError) as exc:
        raise Unanswered(TIMEOUT, f"no answer over TCP ({exc or type(exc).__name__})") from None
    except dns.query.BadResponse:
        raise Unanswered(SERVFAIL, "the TCP answer does not match the query") from None
    except dns.exception.DNSException as exc:
        raise Unanswered(SERVFAIL, f"malformed answer over TCP: {exc}") from None


def _answer(response: dns.message.Message, rtype: str, label: str) -> DnsAnswer:
    rdtype = dns.rdatatype.from_text(rtype)
    records = [
        DnsRecord(dns.rdatatype.to_text(rrset.rdtype), rrset.name.to_text(), rrset.ttl, _value(rd))
        for rrset in response.answer
        if rrset.rdtype in (rdtype, dns.rdatatype.CNAME)
        for rd in rrset
    ]
    rcode = response.rcode()
    detail = None
    if rcode == dns.rcode.NOERROR:
        status = NOERROR if records else NODATA
    elif rcode == dns.rcode.NXDOMAIN:
        status = NXDOMAIN
    elif rcode == dns.rcode.REFUSED:
        status = REFUSED
    else:
        status = SERVFAIL
        if rcode != dns.rcode.SERVFAIL:
            detail = f"the nameserver answered {dns.rcode.to_text(rcode)}"
    authenticated = bool(response.flags & dns.flags.AD)
    return DnsAnswer(rtype, status, records, label, authenticated, detail)


def _value(rdata: dns.rdata.Rdata) -> str:
    if rdata.rdtype in (dns.rdatatype.TXT, dns.rdatatype.SPF):
        strings: tuple[bytes, ...] = rdata.strings  # type: ignore[attr-defined]
        return b"".join(strings).decode("utf-8", errors="backslashreplace")
    return rdata.to_text()
