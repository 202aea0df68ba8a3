"""Provider signatures (``toolrun/data/providers.json``) and matching them against evidence.

Rule kinds: ``ns``, ``mx``, ``spf`` (include targets) and ``cname`` are host-name
suffixes matched on a label boundary (a rule ending in ``-`` such as ``awsdns-`` matches
the start of any label); ``headers`` are ``[name, substring-or-null]`` pairs matched
against HTTP response headers (lower-case); ``registrar`` holds lower-case substrings
of a registrar's name; ``ips`` are addresses or CIDR ranges the provider publishes
(``ipEvidence`` says which publication; the file's ``notes`` give each source).
``web`` says whether web evidence means a CDN or a host.
"""

from __future__ import annotations

import functools
import ipaddress
import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Provider:
    """One provider and its signatures."""

    id: str
    name: str
    families: tuple[str, ...]
    ns: tuple[str, ...] = ()
    mx: tuple[str, ...] = ()
    spf: tuple[str, ...] = ()
    cname: tuple[str, ...] = ()
    headers: tuple[tuple[str, str | None], ...] = ()
    registrar: tuple[str, ...] = ()
    ips: tuple[Network, ...] = ()
    ip_evidence: str = ""
    web: str = "hosting"

    @classmethod
    def from_json(cls, item: dict[str, Any]) -> Provider:
        return cls(
            id=item["id"],
            name=item["name"],
            families=tuple(item["families"]),
            ns=tuple(item.get("ns", ())),
            mx=tuple(item.get("mx", ())),
            spf=tuple(item.get("spf", ())),
            cname=tuple(item.get("cname", ())),
            headers=tuple(
                (str(n).lower(), v.lower() if v else None) for n, v in item.get("headers", ())
            ),
            registrar=tuple(item.get("registrar", ())),
            ips=tuple(ipaddress.ip_network(n) for n in item.get("ips", ())),
            ip_evidence=item.get("ipEvidence", ""),
            web=item.get("web", "hosting"),
        )


@functools.lru_cache(maxsize=1)
def load_providers() -> tuple[Provider, ...]:
    """The bundled signatures, read once."""
    text = resources.files("toolrun.data").joinpath("providers.json").read_text("utf-8")
    return tuple(Provider.from_json(item) for item in json.loads(text)["providers"])


def host_matches(host: str, rule: str) -> bool:
    """``host`` ends with ``rule`` on a label boundary (``rule-`` matches a label's start)."""
    host = host.lower().rstrip(".")
    rule = rule.lower().rstrip(".")
    if rule.endswith("-"):
        return any(label.startswith(rule) for label in host.split("."))
    return host == rule or host.endswith("." + rule)


def match_host(host: str, kind: str) -> list[Provider]:
    """Providers whose ``kind`` rules (ns, mx, spf, cname) match ``host``."""
    return [p for p in load_providers() if any(host_matches(host, r) for r in getattr(p, kind))]


def match_headers(headers: list[tuple[str, str]]) -> list[tuple[Provider, str]]:
    """``(provider, "name: value")`` for every header rule that matches."""
    found: list[tuple[Provider, str]] = []
    for provider in load_providers():
        for name, needle in provider.headers:
            for key, value in headers:
                if key.lower() == name and (needle is None or needle in value.lower()):
                    found.append((provider, f"{key}: {value}"[:200]))
                    break
    return found


def match_address(address: str) -> list[tuple[Provider, Network]]:
    """``(provider, network)`` for every published network holding ``address``."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return []
    return [(p, n) for p in load_providers() for n in p.ips if ip in n]


def match_registrar(name: str) -> Provider | None:
    """The provider a registrar name belongs to."""
    lowered = name.lower()
    return next((p for p in load_providers() if any(r in lowered for r in p.registrar)), None)
