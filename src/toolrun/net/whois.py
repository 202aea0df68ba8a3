"""WHOIS (RFC 3912) over guarded TCP: one query per server, referrals followed.

``query_server`` sends one line and reads to EOF, bounded in bytes and time, and
decodes with the server's known charset (then UTF-8, then Latin-1). ``follow``
starts at ``settings.whois_server`` and follows ``refer:``/``whois:`` (IANA) and
``Registrar WHOIS Server:`` (thin registries) referrals to ``settings.whois_port``,
at most ``MAX_HOPS`` servers and never the same server twice. Every dial goes
through ``open_guarded_connection``, so a referral to a private address is refused
like any other outbound connection.

Per-server query forms: Verisign (.com/.net) is asked ``domain NAME`` so that host
objects named like the domain do not answer, and ``=NAME`` when it still lists
several matches; DENIC ``-T dn,ace NAME``; JPRS ``NAME/e`` (English);
DK Hostmaster ``--show-handles NAME``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from toolrun.config import Settings
from toolrun.net.errors import NetError, NetTimeout, TooLarge, format_bytes, format_seconds
from toolrun.net.tcp import open_guarded_connection

MAX_HOPS = 4
MAX_ANSWER_BYTES = 256 * 1024
HOP_TIMEOUT_S = 10.0
READ_CHUNK = 16 * 1024

CHARSETS: dict[str, str] = {
    "whois.apnic.net": "iso-8859-1",
    "whois.registro.br": "iso-8859-1",
    "whois.fi": "iso-8859-1",
    "whois.nic.hu": "iso-8859-1",
    "whois.isnic.is": "iso-8859-1",
    "whois.dns.lu": "iso-8859-1",
    "whois.norid.no": "iso-8859-1",
    "whois.nic.ad.jp": "iso-2022-jp",
    "whois.jprs.jp": "utf-8",
    "whois.kg": "cp1251",
}
"""Charsets of servers that do not answer in UTF-8 (rfc1036/whois ``servers_charset_list``)."""

THIN_REGISTRIES = frozenset({"whois.verisign-grs.com", "whois.crsnic.net", "whois.nsiregistry.net"})


@dataclass(frozen=True)
class WhoisTrail:
    """The answers in the order asked; ``error`` is why a referral could not be followed."""

    answers: list[WhoisAnswer]
    error: NetError | None = None


@dataclass(frozen=True)
class WhoisAnswer:
    """One server's answer: what was asked, the text, and how it was read."""

    server: str
    port: int
    query: str
    text: str
    size: int  # bytes received
    encoding: str
    complete: bool  # False when the server stopped sending without closing in time


def query_text(server: str, name: str, *, registry_hop: bool) -> str:
    """The line to send ``server`` for ``name`` (A-labels), without CRLF."""
    server = server.lower()
    tld = name.rsplit(".", 1)[-1].lower()
    if server in THIN_REGISTRIES or (registry_hop and tld in ("com", "net")):
        return f"domain {name}"
    if server == "whois.denic.de":
        return f"-T dn,ace {name}"
    if server == "whois.jprs.jp":
        return f"{name}/e"
    if server == "whois.dk-hostmaster.dk":
        return f"--show-handles {name}"
    return name


def decode(data: bytes, server: str) -> tuple[str, str]:
    """``(text, encoding)``: the server's charset if known, else UTF-8, else Latin-1."""
    known = CHARSETS.get(server.lower())
    for encoding in (known, "utf-8"):
        if encoding is None:
            continue
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    return data.decode("iso-8859-1"), "iso-8859-1"


async def query_server(
    server: str,
    port: int,
    query: str,
    settings: Settings,
    *,
    timeout: float = HOP_TIMEOUT_S,  # noqa: ASYNC109 (a per-hop budget passed down)
    max_bytes: int = MAX_ANSWER_BYTES,
) -> WhoisAnswer:
    """Send ``query`` to ``server:port`` and read the answer.

    Raises the guard's NetErrors; TooLarge past ``max_bytes``; NetTimeout when
    nothing at all arrived within ``timeout`` (an answer that stops without the
    server closing is kept, ``complete=False``).
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    reader, writer = await open_guarded_connection(server, port, settings, timeout=timeout)
    data = bytearray()
    complete = True
    try:
        writer.write(query.encode("utf-8") + b"\r\n")
        await asyncio.wait_for(writer.drain(), max(deadline - loop.time(), 0.01))
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                complete = False
                break
            try:
                chunk = await asyncio.wait_for(reader.read(READ_CHUNK), remaining)
            except TimeoutError:
                complete = False
                break
            if not chunk:
                break
            data += chunk
            if len(data) > max_bytes:
                raise TooLarge(f"the WHOIS answer from {server} is over {format_bytes(max_bytes)}")
    except (ConnectionError, OSError) as exc:
        if not data:
            raise NetTimeout(
                f"the WHOIS server {server} closed the connection: {exc.strerror or 'reset'}"
            ) from None
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()
    if not complete and not data:
        raise NetTimeout(f"the WHOIS server {server} sent nothing within {format_seconds(timeout)}")
    text, encoding = decode(bytes(data), server)
    return WhoisAnswer(server, port, query, text, len(data), encoding, complete)


async def follow(
    name: str,
    settings: Settings,
    *,
    next_server: Callable[[str], str | None],
    needs_exact_match: Callable[[str], bool] | None = None,
    max_hops: int = MAX_HOPS,
    timeout: float = HOP_TIMEOUT_S,  # noqa: ASYNC109 (a per-hop budget passed down)
) -> WhoisTrail:
    """Ask the first server, then each server the last answer refers to.

    ``next_server(text)`` extracts a referral; ``needs_exact_match(text)`` says the
    answer listed host objects instead of the domain (Verisign), and the same server
    is asked again with ``=NAME``. Stops at ``max_hops``, at a referral already
    visited, or at an answer with no referral. A failure of the first server
    raises its NetError; a failure of a referred server ends the trail with it.
    """
    host, port = settings.whois_server
    answers: list[WhoisAnswer] = []
    visited: set[tuple[str, int]] = set()
    registry_hop = False
    while len(answers) < max_hops and (host.lower(), port) not in visited:
        visited.add((host.lower(), port))
        query = query_text(host, name, registry_hop=registry_hop)
        try:
            answer = await query_server(host, port, query, settings, timeout=timeout)
            if needs_exact_match is not None and needs_exact_match(answer.text):
                answer = await query_server(host, port, f"={name}", settings, timeout=timeout)
        except NetError as error:
            if not answers:
                raise
            return WhoisTrail(answers, error)
        answers.append(answer)
        referred = next_server(answer.text)
        if referred is None:
            break
        registry_hop = len(answers) == 1 and _is_tld_referral(answer.text)
        host, port = referred, settings.whois_port
    return WhoisTrail(answers)


def _is_tld_referral(text: str) -> bool:
    """An IANA-style answer (``refer:``): the next server is the TLD registry."""
    return any(line.lower().startswith("refer:") for line in text.splitlines())
