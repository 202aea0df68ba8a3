"""An authoritative DNS server on loopback for tests (dnslib, UDP and TCP on one port).

``DnsServer`` answers from records given as zone text (dnslib's parser: ``$ORIGIN``,
``$TTL``, relative names, one record a line; names in A-label form, since dnslib
refuses non-ASCII zone text). It runs in a background thread, so it serves sync
and async tests alike::

    with DnsServer(EXAMPLE_ZONE) as server:
        settings = Settings(dns_nameservers=[server.nameserver], allow_private_networks=True)
        server.add("new.example.test. 60 IN A 192.0.2.99")        # records at runtime
        server.add_txt("dkim.example.test.", "k=rsa; p=" + "A" * 400)  # split into 255-byte strings
        server.set_fault("broken.example.test.", Fault.SERVFAIL)   # per name, optionally per type
        server.queries                                              # what was asked, over which transport

Behaviour, as an authoritative server would answer:

- records of the asked type → NOERROR with them (``ANY`` → every record of the name);
- a CNAME at the name → the CNAME, followed inside the served records (up to 8 hops);
- the name exists (or is an empty non-terminal such as ``_tcp.example.test.``) but has
  no record of the type → NOERROR with an empty answer (NODATA);
- an unknown name → NXDOMAIN. Negative answers carry the enclosing zone's SOA;
- a UDP answer larger than 512 bytes (or the client's EDNS size) → TC set, no records,
  so the client retries over TCP.

Faults per name (and optionally per type): ``Fault.SERVFAIL``, ``Fault.REFUSED``,
``Fault.FORMERR`` (that rcode, no records), ``Fault.TIMEOUT`` (no answer at all, UDP or
TCP), ``Fault.TRUNCATE`` (UDP answers carry TC and no records; TCP answers normally),
``Fault.GARBAGE`` (bytes that are no DNS message, ``GARBAGE``), ``Fault.MISMATCHED_ID``
(the right answer under another message id) and ``Fault.BAD_RDATA`` (a response with the
query's id holding one record of the asked type whose rdata is one byte, ``\xc0``: too
short for every type the tools ask). No wildcards, no DNSSEC signing;
``authenticated=True`` sets the AD flag on every answer. ``latency`` (seconds) holds every
UDP answer back that long, each on its own clock, so concurrent queries overlap as they
would against a distant resolver (the benchmark's simulated network). ``port`` binds that
port instead of a free one: a second server on another loopback address (127.0.0.2) and
the same port stands for a second name server of a zone, which the setup checker asks
on its one DNS port.

Fixtures: ``dns_server`` (serving ``EXAMPLE_ZONE``). Import it into a conftest with
``from tests.servers.dns import dns_server  # noqa: F401``.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import heapq
import itertools
import logging
import selectors
import socket
import struct
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from types import TracebackType

import pytest
from dnslib import CNAME, QTYPE, RCODE, RD, RR, TXT, DNSLabel, DNSRecord

logger = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.05
MAX_CNAME_HOPS = 8
PLAIN_UDP_SIZE = 512
TXT_CHUNK = 255
GARBAGE = b"\x00\x00\x00 this is not a DNS message"
"""What ``Fault.GARBAGE`` sends: the third byte has no response flag, so no client can
take it for an answer to its query."""
BAD_RDATA = b"\xc0"

EXAMPLE_ZONE = """\
$ORIGIN example.test.
$TTL 300
@               IN SOA   ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 300
@               IN NS    ns1.example.test.
@               IN NS    ns2.example.test.
@               IN A     192.0.2.10
@               IN AAAA  2001:db8::10
@               IN MX    10 mail.example.test.
@               IN MX    20 backup.example.test.
@               IN TXT   "v=spf1 ip4:192.0.2.0/24 -all"
@               IN CAA   0 issue "letsencrypt.org"
@               IN DS    12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
@               IN DNSKEY 257 3 13 AwEAAQ==
www             IN CNAME example.test.
mail            IN A     192.0.2.25
ns1             IN A     192.0.2.53
ns2             IN A     192.0.2.54
_sip._tcp       IN SRV   10 5 5060 sip.example.test.
_443._tcp       IN TLSA  3 1 1 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
_dmarc          IN TXT   "v=DMARC1; p=reject"
xn--bcher-kva   60 IN A  192.0.2.20
10.2.0.192.in-addr.arpa.  IN PTR  example.test.
0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa. IN PTR example.test.
"""
"""Every record type the DNS tools ask for, under ``example.test.`` (plus reverse names)."""


class Fault(enum.Enum):
    """How the server misbehaves for a name."""

    SERVFAIL = "servfail"
    REFUSED = "refused"
    FORMERR = "formerr"
    TIMEOUT = "timeout"
    TRUNCATE = "truncate"
    GARBAGE = "garbage"
    MISMATCHED_ID = "mismatched-id"
    BAD_RDATA = "bad-rdata"


@dataclass(frozen=True)
class Query:
    """One question the server received, and when (``time.monotonic()``)."""

    name: str
    type: str
    transport: str  # "udp" or "tcp"
    at: float = field(default=0.0, compare=False)


def _key(name: str | DNSLabel) -> str:
    text = str(name).lower()
    return text if text.endswith(".") else text + "."


def _txt_chunks(text: str | bytes) -> list[bytes]:
    data = text.encode() if isinstance(text, str) else text
    return [data[i : i + TXT_CHUNK] for i in range(0, len(data), TXT_CHUNK)] or [b""]


class DnsServer:
    """An authoritative DNS server on ``host`` (default 127.0.0.1), one port for UDP and TCP."""

    def __init__(
        self,
        zone: str | Iterable[RR] = "",
        *,
        host: str = "127.0.0.1",
        origin: str = "",
        ttl: int = 300,
        authenticated: bool = False,
        latency: float = 0.0,
        port: int = 0,
    ) -> None:
        self.host = host
        self.origin = origin
        self.ttl = ttl
        self.authenticated = authenticated
        self.latency = latency
        self.queries: list[Query] = []
        self._due: list[tuple[float, int, bytes, tuple[str, int]]] = []  # UDP answers held back
        self._sequence = itertools.count()
        self._records: dict[str, list[RR]] = {}
        self._faults: dict[tuple[str, str | None], tuple[Fault, str | None]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._udp: socket.socket | None = None
        self._tcp: socket.socket | None = None
        self._selector: selectors.BaseSelector | None = None
        self._buffers: dict[socket.socket, bytes] = {}
        self.port = port  # 0: a free port, picked at start
        self.add(zone)

    # -- records and faults ---------------------------------------------------------------

    def add(self, zone: str | Iterable[RR]) -> None:
        """Add records: zone text (parsed with this server's origin and TTL) or dnslib RRs."""
        records: Iterable[RR] = (
            RR.fromZone(zone, origin=self.origin, ttl=self.ttl) if isinstance(zone, str) else zone
        )
        with self._lock:
            for rr in records:
                self._records.setdefault(_key(rr.rname), []).append(rr)

    def add_txt(self, name: str, text: str | bytes, *, ttl: int | None = None) -> None:
        """Add one TXT record holding ``text``, split into 255-byte character-strings."""
        rr = RR(
            _key(name),
            QTYPE.TXT,
            ttl=self.ttl if ttl is None else ttl,
            rdata=TXT(_txt_chunks(text)),
        )
        self.add([rr])

    def remove(self, name: str, rtype: str | None = None) -> None:
        """Drop the records of ``name`` (only those of ``rtype`` when given)."""
        with self._lock:
            kept = [
                rr
                for rr in self._records.get(_key(name), [])
                if rtype is not None and QTYPE[rr.rtype] != rtype
            ]
            if kept:
                self._records[_key(name)] = kept
            else:
                self._records.pop(_key(name), None)

    def set_fault(
        self,
        name: str,
        fault: Fault | None,
        rtype: str | None = None,
        *,
        transport: str | None = None,
    ) -> None:
        """Make ``name`` (for every type, or only ``rtype``) misbehave; ``None`` clears it.

        ``transport`` ("udp" or "tcp") limits the fault to one transport: a name whose
        UDP answer is truncated anyway then misbehaves only on the TCP retry.
        """
        with self._lock:
            if fault is None:
                self._faults.pop((_key(name), rtype), None)
            else:
                self._faults[(_key(name), rtype)] = (fault, transport)

    # -- addresses ----------------------------------------------------------------------------

    @property
    def nameserver(self) -> tuple[str, int]:
        """``(host, port)``, as ``Settings.dns_nameservers`` and ``query(nameservers=...)`` take."""
        return (self.host, self.port)

    @property
    def address(self) -> str:
        """``"127.0.0.1:5353"`` (``"[::1]:5353"`` for IPv6): the text form of a nameserver."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> DnsServer:
        """Bind UDP and TCP on one port (``port``, else a free one); serve in a daemon thread."""
        self._udp, self._tcp = self._bind()
        self.port = self._udp.getsockname()[1]
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._udp, selectors.EVENT_READ)
        self._selector.register(self._tcp, selectors.EVENT_READ)
        self._stop.clear()
        self._thread = threading.Thread(target=self._serve, name="dns-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every socket."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        for conn in list(self._buffers):
            self._close_connection(conn)
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        for sock in (self._udp, self._tcp):
            if sock is not None:
                sock.close()
        self._udp = self._tcp = None

    def __enter__(self) -> DnsServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _bind(self) -> tuple[socket.socket, socket.socket]:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        for _ in range(1 if self.port else 50):
            udp = socket.socket(family, socket.SOCK_DGRAM)
            try:
                udp.bind((self.host, self.port))
            except OSError:
                udp.close()
                raise
            tcp = socket.socket(family, socket.SOCK_STREAM)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                tcp.bind((self.host, udp.getsockname()[1]))
            except OSError as exc:
                udp.close()
                tcp.close()
                if exc.errno != errno.EADDRINUSE or self.port:
                    raise
                continue
            tcp.listen(16)
            return udp, tcp
        raise OSError(errno.EADDRINUSE, "no port free for both UDP and TCP")

    # -- serving --------------------------------------------------------------------------

    def _serve(self) -> None:
        assert self._selector is not None
        while not self._stop.is_set():
            wait = POLL_INTERVAL_S
            if self._due:
                wait = min(wait, max(self._due[0][0] - time.monotonic(), 0.0))
            events = self._selector.select(wait)
            self._send_due()
            for key, _ in events:
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    if sock is self._udp:
                        self._on_udp(sock)
                    elif sock is self._tcp:
                        self._on_accept(sock)
                    else:
                        self._on_tcp(sock)
                except Exception:  # a test server must outlive a bad packet
                    logger.exception("dns test server: failed to handle a packet")

    def _on_udp(self, sock: socket.socket) -> None:
        try:
            data, peer = sock.recvfrom(65535)
        except OSError:  # an ICMP error left by a client that went away
            return
        reply = self._reply(data, "udp")
        if reply is None:
            return
        if self.latency > 0:
            due = (time.monotonic() + self.latency, next(self._sequence), reply, peer)
            heapq.heappush(self._due, due)
        else:
            sock.sendto(reply, peer)

    def _send_due(self) -> None:
        now = time.monotonic()
        while self._due and self._due[0][0] <= now:
            _, _, reply, peer = heapq.heappop(self._due)
            if self._udp is not None:
                with contextlib.suppress(OSError):
                    self._udp.sendto(reply, peer)

    def _on_accept(self, sock: socket.socket) -> None:
        conn, _ = sock.accept()
        conn.settimeout(1.0)
        self._buffers[conn] = b""
        assert self._selector is not None
        self._selector.register(conn, selectors.EVENT_READ)

    def _on_tcp(self, conn: socket.socket) -> None:
        try:
            chunk = conn.recv(65535)
        except OSError:
            chunk = b""
        if not chunk:
            self._close_connection(conn)
            return
        buffer = self._buffers[conn] + chunk
        while len(buffer) >= 2:
            (length,) = struct.unpack("!H", buffer[:2])
            if len(buffer) < 2 + length:
                break
            message, buffer = buffer[2 : 2 + length], buffer[2 + length :]
            reply = self._reply(message, "tcp")
            if reply is not None:
                conn.sendall(struct.pack("!H", len(reply)) + reply)
        self._buffers[conn] = buffer

    def _close_connection(self, conn: socket.socket) -> None:
        self._buffers.pop(conn, None)
        if self._selector is not None:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(conn)
        conn.close()

    # -- answering ------------------------------------------------------------------------

    def _reply(self, data: bytes, transport: str) -> bytes | None:
        """The wire answer to one query, or None to stay silent."""
        request = DNSRecord.parse(data)
        qname = _key(request.q.qname)
        qtype = QTYPE.get(request.q.qtype, str(request.q.qtype))
        self.queries.append(Query(qname, qtype, transport, time.monotonic()))
        with self._lock:
            fault = self._fault(qname, qtype, transport)
            reply = request.reply(ra=1, aa=1)
            reply.header.ad = int(self.authenticated)
            if fault is Fault.TIMEOUT:
                return None
            if fault is Fault.GARBAGE:
                return GARBAGE
            if fault in _RCODES:
                reply.header.rcode = _RCODES[fault]
            elif fault is Fault.BAD_RDATA:
                reply.add_answer(RR(qname, request.q.qtype, ttl=self.ttl, rdata=RD(BAD_RDATA)))
            else:
                self._resolve(reply, qname, qtype)
        wire: bytes = reply.pack()
        if transport == "udp" and (fault is Fault.TRUNCATE or len(wire) > _udp_limit(request)):
            wire = _truncated(reply)
        if fault is Fault.MISMATCHED_ID:
            wire = struct.pack("!H", (request.header.id + 1) & 0xFFFF) + wire[2:]
        return wire

    def _fault(self, qname: str, qtype: str, transport: str) -> Fault | None:
        found = self._faults.get((qname, qtype)) or self._faults.get((qname, None))
        if found is None or found[1] not in (None, transport):
            return None
        return found[0]

    def _resolve(self, reply: DNSRecord, qname: str, qtype: str) -> None:
        name = qname
        for _ in range(MAX_CNAME_HOPS):
            records = self._records.get(name)
            if records is None:
                exists = self._is_empty_non_terminal(name)
                if not exists and (name == qname or self._zone_soa(name) is not None):
                    reply.header.rcode = RCODE.NXDOMAIN
                self._add_soa(reply, name)
                return
            matching = [rr for rr in records if qtype in ("ANY", QTYPE[rr.rtype])]
            if matching:
                for rr in matching:
                    reply.add_answer(rr)
                return
            cnames = [rr for rr in records if rr.rtype == QTYPE.CNAME]
            if not cnames:
                self._add_soa(reply, name)  # NODATA
                return
            reply.add_answer(cnames[0])
            rdata = cnames[0].rdata
            assert isinstance(rdata, CNAME)
            name = _key(rdata.label)

    def _is_empty_non_terminal(self, name: str) -> bool:
        return any(owner.endswith("." + name) for owner in self._records)

    def _zone_soa(self, name: str) -> RR | None:
        labels = name.rstrip(".").split(".")
        for i in range(len(labels)):
            apex = ".".join(labels[i:]) + "."
            for rr in self._records.get(apex, []):
                if rr.rtype == QTYPE.SOA:
                    return rr
        return None

    def _add_soa(self, reply: DNSRecord, name: str) -> None:
        soa = self._zone_soa(name)
        if soa is not None:
            reply.add_auth(soa)


_RCODES = {
    Fault.SERVFAIL: RCODE.SERVFAIL,
    Fault.REFUSED: RCODE.REFUSED,
    Fault.FORMERR: RCODE.FORMERR,
}


def _udp_limit(request: DNSRecord) -> int:
    sizes: list[int] = [rr.rclass for rr in request.ar if rr.rtype == QTYPE.OPT]
    return max([PLAIN_UDP_SIZE, *sizes])


def _truncated(reply: DNSRecord) -> bytes:
    """The answer's header and question with TC set and no records (what a server sends)."""
    reply.header.tc = 1
    reply.rr, reply.auth, reply.ar = [], [], []
    wire: bytes = reply.pack()
    return wire


@pytest.fixture
def dns_server() -> Iterator[DnsServer]:
    """A started ``DnsServer`` serving ``EXAMPLE_ZONE``, stopped after the test."""
    with DnsServer(EXAMPLE_ZONE) as server:
        yield server
