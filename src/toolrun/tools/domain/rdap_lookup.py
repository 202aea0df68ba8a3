"""rdap-lookup: registration facts from RDAP, registry first, then the registrar.

The registry's base URL comes from the RFC 9224 bootstrap (``toolrun.net.rdap``).
Its answer is authoritative for dates, status, name servers and DNSSEC; the
registrar's answer (its ``related`` link) adds the registrant, the abuse contact
and whatever the registry left out. 404 means ``registered: false``. When no RDAP
service is known for the TLD, or the registry cannot be reached, the facts come
from WHOIS and ``source`` says ``whois``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from toolrun.config import Settings
from toolrun.net import rdap
from toolrun.net.errors import NetError
from toolrun.net.fetch import Fetcher
from toolrun.tools.base import ToolContext, ToolDefinition, ToolFailure
from toolrun.tools.domain.http import open_fetcher
from toolrun.tools.domain.models import CamelModel, DomainInput
from toolrun.tools.domain.names import registrable_domain, tld, unicode_name
from toolrun.tools.domain.rdap_parse import RdapFacts, parse_domain
from toolrun.tools.domain.whois_lookup import WhoisResult, whois_lookup


class RdapRegistrar(CamelModel):
    """The sponsoring registrar and its abuse contact."""

    name: str | None = None
    iana_id: str | None = None
    url: str | None = None
    abuse_email: str | None = None
    abuse_phone: str | None = None


class RdapRegistrant(CamelModel):
    """The registrant's organisation and country where not redacted."""

    organization: str | None = None
    country: str | None = None


class RdapEvent(CamelModel):
    """One RDAP event (``registration``, ``expiration``, ``last changed``, ...)."""

    action: str
    date: str | None = None
    actor: str | None = None


class RdapDnssec(CamelModel):
    """``secureDNS`` of the registry answer."""

    delegation_signed: bool | None = None
    ds_records: int = 0


class RdapServer(CamelModel):
    """One RDAP request made."""

    url: str
    role: Literal["registry", "registrar"]
    status_code: int | None = None
    error: str | None = None


class RdapResult(CamelModel):
    """Registration facts from RDAP (or WHOIS when ``source`` is ``whois``); dates ISO 8601 UTC."""

    domain: str
    unicode_name: str
    registered: bool | None
    source: Literal["rdap", "whois"]
    handle: str | None = None
    status: list[str] = Field(default_factory=list)
    created_at: str | None = None
    updated_at: str | None = None
    expires_at: str | None = None
    events: list[RdapEvent] = Field(default_factory=list)
    registrar: RdapRegistrar = Field(default_factory=RdapRegistrar)
    registrant: RdapRegistrant = Field(default_factory=RdapRegistrant)
    nameservers: list[str] = Field(default_factory=list)
    dnssec: RdapDnssec = Field(default_factory=RdapDnssec)
    notices: list[str] = Field(default_factory=list)
    redactions: list[str] = Field(default_factory=list)
    port43: str | None = None
    servers: list[RdapServer] = Field(default_factory=list)
    bootstrap: str | None = Field(default=None, description="Where the RDAP base URL came from.")
    notes: list[str] = Field(default_factory=list)


def merge(registry: RdapFacts, registrar: RdapFacts) -> RdapFacts:
    """Registry facts, completed by the registrar's; the registrar's contacts win."""
    for name in (
        "registrant_org",
        "registrant_country",
        "abuse_email",
        "abuse_phone",
        "registrar_url",
    ):
        if getattr(registrar, name):
            setattr(registry, name, getattr(registrar, name))
    for name in (
        "registrar",
        "registrar_iana_id",
        "handle",
        "unicode_name",
        "port43",
        "delegation_signed",
    ):
        if getattr(registry, name) is None:
            setattr(registry, name, getattr(registrar, name))
    for list_name in ("status", "nameservers"):
        if not getattr(registry, list_name):
            setattr(registry, list_name, getattr(registrar, list_name))
    for key, value in registrar.events.items():
        registry.events.setdefault(key, value)
    registry.event_list += [e for e in registrar.event_list if e not in registry.event_list]
    registry.redactions = list(dict.fromkeys(registry.redactions + registrar.redactions))
    registry.notices = list(dict.fromkeys(registry.notices + registrar.notices))
    return registry


def to_result(name: str, facts: RdapFacts, servers: list[RdapServer], bootstrap: str) -> RdapResult:
    """The tool result from merged facts."""
    return RdapResult(
        domain=name,
        unicode_name=facts.unicode_name or unicode_name(name),
        registered=True,
        source="rdap",
        handle=facts.handle,
        status=facts.status,
        created_at=facts.events.get("created"),
        updated_at=facts.events.get("updated"),
        expires_at=facts.events.get("expires") or facts.events.get("registrar_expires"),
        events=[RdapEvent.model_validate(e) for e in facts.event_list],
        registrar=RdapRegistrar(
            name=facts.registrar,
            iana_id=facts.registrar_iana_id,
            url=facts.registrar_url,
            abuse_email=facts.abuse_email,
            abuse_phone=facts.abuse_phone,
        ),
        registrant=RdapRegistrant(
            organization=facts.registrant_org, country=facts.registrant_country
        ),
        nameservers=facts.nameservers,
        dnssec=RdapDnssec(delegation_signed=facts.delegation_signed, ds_records=facts.ds_records),
        notices=facts.notices,
        redactions=facts.redactions,
        port43=facts.port43,
        servers=servers,
        bootstrap=bootstrap,
    )


def from_whois(whois: WhoisResult, reason: str) -> RdapResult:
    """An RDAP-shaped result from WHOIS facts, saying why."""
    return RdapResult(
        domain=whois.domain,
        unicode_name=whois.unicode_name,
        registered=whois.registered,
        source="whois",
        status=whois.status,
        created_at=whois.created_at,
        updated_at=whois.updated_at,
        expires_at=whois.expires_at,
        registrar=RdapRegistrar(
            name=whois.registrar,
            iana_id=whois.registrar_iana_id,
            url=whois.registrar_url,
            abuse_email=whois.abuse_contact.email,
            abuse_phone=whois.abuse_contact.phone,
        ),
        registrant=RdapRegistrant(
            organization=whois.registrant.organization, country=whois.registrant.country
        ),
        nameservers=whois.nameservers,
        dnssec=RdapDnssec(
            delegation_signed={"signed": True, "unsigned": False}.get(whois.dnssec or "")
        ),
        redactions=whois.redacted,
        port43=whois.whois_server,
        notes=[reason, *whois.notes],
    )


async def _registry(
    fetcher: Fetcher, name: str, bases: list[str], servers: list[RdapServer]
) -> rdap.RdapResponse:
    """The registry's answer from the first base URL that gives one."""
    failure: NetError | None = None
    for base in bases:
        url = rdap.domain_url(base, name)
        try:
            response = await rdap.get(fetcher, url)
        except NetError as exc:
            servers.append(RdapServer(url=url, role="registry", error=exc.message))
            failure = exc
            continue
        servers.append(RdapServer(url=url, role="registry", status_code=response.status_code))
        return response
    assert failure is not None
    raise failure


async def _registrar(
    fetcher: Fetcher, name: str, registry: RdapFacts, asked: str, servers: list[RdapServer]
) -> RdapFacts | None:
    """The registrar's answer through the registry's ``related`` link, if it gives one."""
    seen = {asked.rstrip("/"), (registry.self_link or "").rstrip("/")}
    for href in registry.related:
        url = href if "/domain/" in href else rdap.domain_url(href, name)
        if url.rstrip("/") in seen:
            continue
        seen.add(url.rstrip("/"))
        try:
            response = await rdap.get(fetcher, url)
        except NetError as exc:
            servers.append(RdapServer(url=url, role="registrar", error=exc.message))
            continue
        servers.append(RdapServer(url=url, role="registrar", status_code=response.status_code))
        if response.data is not None:
            return parse_domain(response.data)
    return None


async def rdap_lookup(
    domain: str, settings: Settings, ctx: ToolContext | None = None
) -> RdapResult:
    """RDAP facts for the registrable domain of ``domain``, or WHOIS facts when RDAP has none."""
    name = registrable_domain(domain)
    servers: list[RdapServer] = []
    async with open_fetcher(settings, ctx) as fetcher:
        try:
            bootstrap = await rdap.load_bootstrap(settings, fetcher)
        except NetError as exc:
            raise ToolFailure(exc.code, f"RDAP bootstrap: {exc.message}") from None
        bases, overridden = bootstrap.base_urls(name)
        if not bases:
            return await _whois_instead(
                name,
                settings,
                f"no RDAP service is known for .{tld(name)}; these facts come from WHOIS",
            )
        try:
            response = await _registry(fetcher, name, bases, servers)
        except NetError as exc:
            result = await _whois_instead(
                name,
                settings,
                f"the RDAP server could not be reached ({exc.message}); these facts come from WHOIS",
                rdap_error=exc,
            )
            result.servers = servers
            return result
        source = "override table" if overridden else bootstrap.source
        if response.status_code == 404:
            return RdapResult(
                domain=name,
                unicode_name=unicode_name(name),
                registered=False,
                source="rdap",
                servers=servers,
                bootstrap=source,
                notes=[f"the registry has no record of {name}"],
            )
        if response.data is None:
            raise ToolFailure(400, f"the RDAP server answered HTTP {response.status_code}")
        facts = parse_domain(response.data)
        registrar = await _registrar(fetcher, name, facts, response.url, servers)
    merged = merge(facts, registrar) if registrar is not None else facts
    result = to_result(name, merged, servers, source)
    if facts.related and registrar is None:
        result.notes.append("the registrar's RDAP answer could not be read; registry data only")
    if name != domain:
        result.notes.insert(0, f"{domain} is part of the registered domain {name}")
    return result


async def _whois_instead(
    name: str, settings: Settings, reason: str, *, rdap_error: NetError | None = None
) -> RdapResult:
    try:
        whois = await whois_lookup(name, settings)
    except ToolFailure:
        if rdap_error is not None:
            raise ToolFailure(rdap_error.code, f"RDAP: {rdap_error.message}") from None
        raise
    return from_whois(whois, reason)


async def run(payload: DomainInput, ctx: ToolContext) -> RdapResult:
    """Look the domain up in RDAP."""
    return await rdap_lookup(payload.domain, ctx.settings, ctx)


DEFINITION = ToolDefinition(
    slug="rdap-lookup",
    kind="tool",
    action="rdap-lookup",
    category="domain",
    name="RDAP lookup",
    description=(
        "Registration facts from RDAP (RFC 9083): status, events, registrar with IANA id and "
        "abuse contact, name servers, DNSSEC, notices and redactions; the registry's answer is "
        "completed by the registrar's. Falls back to WHOIS where a TLD has no RDAP service."
    ),
    input_model=DomainInput,
    output_model=RdapResult,
    run=run,
    example={"domain": "example.com"},
    aliases=("rdap",),
)
