"""domain-vendor-lookup: who registers, serves DNS, handles mail, hosts and fronts a domain.

Evidence, per role:

- registrar: RDAP (then WHOIS), matched to a provider by name;
- DNS host: the NS records (high confidence when every name server matches);
- email: the MX records (high), the SPF record's ``include:`` targets (low: they
  name senders, not the mailbox provider);
- web host and CDN: the CNAME chains of the apex and ``www`` (high), their A/AAAA
  addresses inside a provider's published addresses or ranges (high), and the HTTP
  response headers of ``https://<domain>/`` (``http://`` if HTTPS fails; high for a
  provider-specific header, medium for a generic ``server`` value).

Signatures live in ``toolrun/data/providers.json`` (see ``providers.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from toolrun.config import Settings
from toolrun.net.errors import NetError
from toolrun.net.fetch import Fetcher, FetchResult
from toolrun.tools.base import ToolContext, ToolDefinition, ToolFailure
from toolrun.tools.domain.http import open_fetcher
from toolrun.tools.domain.lookups import Lookups
from toolrun.tools.domain.models import CamelModel, DomainInput
from toolrun.tools.domain.names import registrable_domain
from toolrun.tools.domain.providers import (
    Provider,
    match_address,
    match_headers,
    match_host,
    match_registrar,
)
from toolrun.tools.domain.rdap_lookup import rdap_lookup
from toolrun.tools.domain.setup_data import host_of
from toolrun.tools.domain.spf import parse_terms, spf_records

Confidence = Literal["high", "medium", "low"]
_RANK = {"low": 0, "medium": 1, "high": 2}


class VendorMatch(CamelModel):
    """A provider in one role, with the evidence that points at it."""

    provider: str = Field(description="Provider id from providers.json, or 'unknown'.")
    name: str
    confidence: Confidence
    evidence: list[str]


class RegistrarFact(CamelModel):
    """The sponsoring registrar as RDAP or WHOIS reports it."""

    name: str | None = None
    iana_id: str | None = None
    provider: str | None = None
    source: Literal["rdap", "whois"] | None = None
    confidence: Confidence | None = None
    evidence: list[str] = Field(default_factory=list)


class VendorResult(CamelModel):
    """The vendors behind a domain, each with evidence and confidence."""

    domain: str
    registrar: RegistrarFact
    dns_host: list[VendorMatch]
    email_provider: list[VendorMatch]
    web_host: list[VendorMatch]
    cdn: list[VendorMatch]
    nameservers: list[str]
    mx: list[str]
    notes: list[str] = Field(default_factory=list)


class _Tally:
    """Evidence per provider for one role."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[Provider, Confidence, list[str]]] = {}

    def add(self, provider: Provider, confidence: Confidence, evidence: str) -> None:
        _, best, found = self.items.get(provider.id, (provider, "low", []))
        if evidence not in found:
            found.append(evidence)
        if _RANK[confidence] > _RANK[best]:
            best = confidence
        if len(found) >= 2 and best == "medium":
            best = "high"  # two independent signals agree
        self.items[provider.id] = (provider, best, found)

    def result(self) -> list[VendorMatch]:
        ranked = sorted(self.items.values(), key=lambda i: (-_RANK[i[1]], -len(i[2]), i[0].name))
        return [
            VendorMatch(provider=p.id, name=p.name, confidence=c, evidence=e) for p, c, e in ranked
        ]


def dns_hosts(nameservers: list[str]) -> list[VendorMatch]:
    """DNS host from NS names: high when every name server matches the provider."""
    tally = _Tally()
    for ns in nameservers:
        for provider in match_host(ns, "ns"):
            tally.add(provider, "medium", f"NS {ns}")
    for provider_id, (provider, _, evidence) in list(tally.items.items()):
        if len(evidence) == len(nameservers):
            tally.items[provider_id] = (provider, "high", evidence)
    return tally.result()


def email_providers(mx_hosts: list[str], txt: list[str]) -> list[VendorMatch]:
    """Mailbox provider from MX (high), senders from SPF includes (low)."""
    tally = _Tally()
    for host in mx_hosts:
        for provider in match_host(host, "mx"):
            tally.add(provider, "high", f"MX {host}")
    for record in spf_records(txt)[:1]:
        terms, _ = parse_terms(record)
        for _, name, argument in terms:
            if name == "include" and argument:
                for provider in match_host(argument, "spf"):
                    tally.add(provider, "low", f"SPF include:{argument}")
    return tally.result()


def web_vendors(
    cnames: Iterable[tuple[str, str]],
    headers: list[tuple[str, str]] | None,
    addresses: Iterable[tuple[str, str, str]] = (),
) -> tuple[list[VendorMatch], list[VendorMatch]]:
    """``(web hosts, CDNs)`` from CNAME targets, ``(type, owner, address)`` records and
    HTTP response headers."""
    hosts, cdns = _Tally(), _Tally()
    for owner, target in cnames:
        for provider in match_host(target, "cname"):
            (cdns if provider.web == "cdn" else hosts).add(
                provider, "high", f"CNAME {owner} -> {target}"
            )
    for rtype, owner, address in addresses:
        for provider, network in match_address(address):
            (cdns if provider.web == "cdn" else hosts).add(
                provider, "high", f"{rtype} {owner} {address} in {network} ({provider.ip_evidence})"
            )
    for provider, header in match_headers(headers or []):
        generic = header.lower().startswith(("server:", "via:"))
        (cdns if provider.web == "cdn" else hosts).add(
            provider, "medium" if generic else "high", f"HTTP header {header}"
        )
    return hosts.result(), cdns.result()


async def _registrar(domain: str, settings: Settings, ctx: ToolContext | None) -> RegistrarFact:
    try:
        found = await rdap_lookup(domain, settings, ctx)
    except ToolFailure as exc:
        return RegistrarFact(evidence=[f"registration data unavailable: {exc.message}"])
    name = found.registrar.name
    if not name:
        return RegistrarFact(
            source=found.source, evidence=[f"{found.source.upper()} names no registrar"]
        )
    provider = match_registrar(name)
    iana = f" (IANA id {found.registrar.iana_id})" if found.registrar.iana_id else ""
    return RegistrarFact(
        name=name,
        iana_id=found.registrar.iana_id,
        provider=provider.id if provider else None,
        source=found.source,
        confidence="high",
        evidence=[f"{found.source.upper()} registrar: {name}{iana}"],
    )


async def _headers(
    domain: str, fetcher: Fetcher, ports: dict[str, int]
) -> tuple[list[tuple[str, str]] | None, str | None]:
    errors = []
    for scheme in ("https", "http"):
        port = ports.get(scheme)
        url = f"{scheme}://{domain}{f':{port}' if port else ''}/"
        try:
            result: FetchResult = await fetcher.fetch(url, max_bytes=64 * 1024, truncate=True)
        except NetError as exc:
            errors.append(f"{scheme}: {exc.message}")
            continue
        return result.headers, None
    return None, "; ".join(errors)


async def _web_records(
    lookups: Lookups, names: list[str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """The CNAME steps ``(owner, target)`` and addresses ``(type, owner, address)`` of
    ``names``."""
    answers = await lookups.many([(n, "A") for n in names] + [(n, "AAAA") for n in names])
    chains, addresses = [], []
    for answer in answers:
        for record in answer.records:
            if record.type == "CNAME":
                chains.append((record.name.rstrip("."), record.value.rstrip(".")))
            elif record.type in ("A", "AAAA"):
                addresses.append((record.type, record.name.rstrip("."), record.value))
    return list(dict.fromkeys(chains)), list(dict.fromkeys(addresses))


async def vendor_lookup(
    domain: str, settings: Settings, ctx: ToolContext | None = None
) -> VendorResult:
    """Gather the evidence concurrently and name the vendors."""
    zone = registrable_domain(domain)
    lookups = Lookups(settings)
    ports = (ctx.services.get("web_ports") if ctx else None) or {}
    try:
        async with open_fetcher(settings, ctx) as fetcher:
            (
                registrar,
                ns,
                mx,
                txt,
                (cnames, addresses),
                (headers, web_error),
            ) = await asyncio.gather(
                _registrar(zone, settings, ctx),
                lookups.get(zone, "NS"),
                lookups.get(zone, "MX"),
                lookups.get(zone, "TXT"),
                _web_records(lookups, list(dict.fromkeys([domain, f"www.{zone}"]))),
                _headers(domain, fetcher, ports),
            )
    finally:
        await lookups.aclose()
    if ns.status == "NXDOMAIN" and registrar.name is None:
        raise ToolFailure(400, f"{zone} does not exist (NXDOMAIN)")
    nameservers = sorted({host_of(r.value) for r in ns.records if r.type == "NS"})
    mx_hosts = [host_of(r.value) for r in mx.records if r.type == "MX" and host_of(r.value)]
    web_hosts, cdns = web_vendors(cnames, headers, addresses)
    notes = (
        []
        if web_error is None
        else [f"the website could not be fetched ({web_error}); web vendors from DNS only"]
    )
    return VendorResult(
        domain=domain,
        registrar=registrar,
        dns_host=dns_hosts(nameservers),
        email_provider=email_providers(mx_hosts, [r.value for r in txt.records if r.type == "TXT"]),
        web_host=web_hosts,
        cdn=cdns,
        nameservers=nameservers,
        mx=mx_hosts,
        notes=notes,
    )


async def run(payload: DomainInput, ctx: ToolContext) -> VendorResult:
    """Name the domain's registrar, DNS host, email provider, web host and CDN."""
    return await vendor_lookup(payload.domain, ctx.settings, ctx)


DEFINITION = ToolDefinition(
    slug="domain-vendor-lookup",
    kind="tool",
    action="domain-vendor-lookup",
    category="domain",
    name="Domain vendor lookup",
    description=(
        "Names the registrar (RDAP, then WHOIS), DNS host (NS), email provider (MX and SPF "
        "includes), web host and CDN (CNAMEs, addresses in ranges the providers publish, and "
        "HTTP response headers) of a domain, each with the evidence behind it and a confidence."
    ),
    input_model=DomainInput,
    output_model=VendorResult,
    run=run,
    example={"domain": "example.com"},
    aliases=("domain-vendor",),
)
