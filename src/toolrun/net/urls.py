"""Parse and normalise the URLs the fetcher is asked for.

Hosts are read the way a browser reads them (WHATWG URL): percent-decoded,
IDNA-mapped to A-labels, and a host ending in a number is an IPv4 address in
any of its legacy spellings (``2130706433``, ``0177.0.0.1``, ``0x7f.1``,
``127.1``). So a URL can never name an address the policy does not see.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import quote, unquote_to_bytes, urljoin, urlsplit

import idna

from toolrun.net.addresses import IPAddress
from toolrun.net.errors import UnsupportedUrl

DEFAULT_PORTS = {"http": 80, "https": 443}
# The fetch spec's "bad ports" that sit above 1024; the ones below are covered by the rule.
BAD_HIGH_PORTS = frozenset(
    {1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667}
    | {6668, 6669, 6679, 6697, 10080}
)
PORT_RULE = "80, 443 or 1024-65535"

_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
_STRIP = "".join(chr(c) for c in range(0x21))
_PATH_SAFE = "/%!$&'()*+,;=:@-._~"
_QUERY_SAFE = _PATH_SAFE + "?"


@dataclass(frozen=True)
class Target:
    """A parsed http(s) URL: where to connect and what to ask for."""

    scheme: str
    host: str  # lower-case A-label name, or an IP address without brackets
    port: int
    target: str  # path and query, percent-encoded, starting with "/"
    ip: IPAddress | None  # the address when the host is an IP literal

    @property
    def host_header(self) -> str:
        """The ``Host`` header value (and the URL authority)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if DEFAULT_PORTS[self.scheme] == self.port else f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host_header}{self.target}"


def parse_url(text: str, base: str | None = None) -> Target:
    """Parse an absolute http(s) URL, or ``text`` relative to ``base``.

    Raises UnsupportedUrl for another scheme, user info, a bad host or port.
    """
    cleaned = _clean(text)
    try:
        parts = urlsplit(cleaned if base is None else urljoin(base, cleaned))
    except ValueError:
        raise UnsupportedUrl(f"not a valid URL: {_shorten(text)}") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        shown = f"'{scheme}'" if scheme else "missing"
        raise UnsupportedUrl(f"unsupported URL scheme {shown} (only http and https)")
    if "@" in parts.netloc:
        raise UnsupportedUrl("URLs with a user name or password are not allowed")
    host_text, port = _split_authority(parts.netloc, DEFAULT_PORTS[scheme])
    host, ip = parse_host(host_text)
    path = quote(parts.path or "/", safe=_PATH_SAFE)
    query = quote(parts.query, safe=_QUERY_SAFE)
    return Target(scheme, host, port, path + (f"?{query}" if query else ""), ip)


def check_port(target: Target) -> None:
    """Refuse ports outside 80, 443 and 1024-65535 (and the fetch spec's bad ports)."""
    port = target.port
    if port in (80, 443) or (port >= 1024 and port not in BAD_HIGH_PORTS):
        return
    raise UnsupportedUrl(f"port {port} is not allowed (allowed: {PORT_RULE})")


def parse_host(text: str) -> tuple[str, IPAddress | None]:
    """Normalise a URL host: ``(A-label name, None)`` or ``(address text, address)``."""
    if text.startswith("[") and text.endswith("]"):
        try:
            v6 = ipaddress.IPv6Address(text[1:-1])
        except ValueError:
            raise UnsupportedUrl(f"invalid IPv6 address in URL: {_shorten(text)}") from None
        return v6.compressed, v6
    try:
        decoded = unquote_to_bytes(text).decode("utf-8")
    except UnicodeDecodeError:
        raise UnsupportedUrl(f"invalid host name: {_shorten(text)}") from None
    host = _to_ascii(decoded)
    if not host or _FORBIDDEN_HOST.search(host):
        raise UnsupportedUrl(f"invalid host name: {_shorten(text)}")
    if _ends_in_number(host):
        v4 = parse_ipv4(host)
        return str(v4), v4
    return host, None


def parse_ipv4(host: str) -> ipaddress.IPv4Address:
    """The WHATWG IPv4 parser: 1-4 parts, each decimal, octal (0...) or hex (0x...)."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    numbers = [_ipv4_number(part, host) for part in parts]
    if (
        len(numbers) > 4
        or any(n > 255 for n in numbers[:-1])
        or numbers[-1] >= 256 ** (5 - len(numbers))
    ):
        raise UnsupportedUrl(f"invalid IPv4 address in URL: {_shorten(host)}")
    value = numbers[-1]
    for index, number in enumerate(numbers[:-1]):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _ipv4_number(part: str, host: str) -> int:
    try:
        if part[:2].lower() == "0x":
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part[1:], 8)
        if part.isdigit():
            return int(part)
    except ValueError:
        pass
    raise UnsupportedUrl(f"invalid IPv4 address in URL: {_shorten(host)}")


def _ends_in_number(host: str) -> bool:
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1]
    if last.isascii() and last.isdigit():
        return True
    return last[:2].lower() == "0x" and all(c in "0123456789abcdefABCDEF" for c in last[2:])


def _to_ascii(host: str) -> str:
    if host.isascii():
        return host.lower()
    try:
        return idna.encode(host, uts46=True).decode("ascii").lower()
    except idna.IDNAError:
        raise UnsupportedUrl(f"invalid host name: {_shorten(host)}") from None


def _split_authority(netloc: str, default_port: int) -> tuple[str, int]:
    if netloc.startswith("["):
        end = netloc.find("]")
        host, rest = netloc[: end + 1], netloc[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            raise UnsupportedUrl(f"not a valid URL authority: {_shorten(netloc)}")
        port_text = rest[1:]
    else:
        host, _, port_text = netloc.partition(":")
    if not host:
        raise UnsupportedUrl("the URL has no host")
    if not port_text:
        return host, default_port
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise UnsupportedUrl(f"invalid port in URL: {_shorten(port_text)}")
    return host, int(port_text)


def _clean(text: str) -> str:
    """Trim and drop tabs/newlines, drop the fragment, read ``\\`` as ``/`` (WHATWG)."""
    text = text.strip(_STRIP).replace("\t", "").replace("\n", "").replace("\r", "")
    text = text.split("#", 1)[0]
    head, sep, query = text.partition("?")
    return head.replace("\\", "/") + sep + query


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
