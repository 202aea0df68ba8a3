"""whois-lookup: registration facts from WHOIS, following referrals to the registrar.

The trail starts at ``TOOLRUN_WHOIS_SERVER`` (IANA), follows ``refer:`` to the TLD
registry and ``Registrar WHOIS Server:`` to the registrar. The registry's answer is
authoritative for dates, status, name servers and DNSSEC; the registrar's fills
what the registry lacks and gives the registrant and abuse contact when it has them.
Every hop's raw text is returned. "No match" answers mean ``registered: false``;
a rate-limit refusal before any record fails the job (400).
"""

from __future__ import annotations

import dataclasses
import re

from pydantic import Field

from toolrun.config import Settings
from toolrun.net.errors import NetError
from toolrun.net.whois import WhoisAnswer, follow
from toolrun.tools.base import ToolContext, ToolDefinition, ToolFailure
from toolrun.tools.domain.models import CamelModel, DomainInput
from toolrun.tools.domain.names import registrable_domain, unicode_name
from toolrun.tools.domain.whois_parse import (
    WhoisFacts,
    is_not_found,
    is_rate_limited,
    parse_whois,
    referral,
)


class Registrant(CamelModel):
    """The registrant's organisation and country, where the registry publishes them."""

    organization: str | None = None
    country: str | None = None


class AbuseContact(CamelModel):
    """Where to report abuse: the registrar's abuse address."""

    email: str | None = None
    phone: str | None = None


class WhoisHop(CamelModel):
    """One server asked, what was sent and what came back (raw text)."""

    server: str
    port: int
    query: str
    bytes: int
    encoding: str
    complete: bool
    text: str


class WhoisResult(CamelModel):
    """Registration facts; dates are ISO 8601 UTC (``2024-04-01T03:05:04Z``)."""

    domain: str
    unicode_name: str
    registered: bool | None = Field(description="null when no answer said either way")
    registrar: str | None = None
    registrar_iana_id: str | None = None
    registrar_url: str | None = None
    whois_server: str | None = Field(
        default=None, description="The server of the most specific answer."
    )
    created_at: str | None = None
    updated_at: str | None = None
    expires_at: str | None = None
    status: list[str] = Field(default_factory=list)
    nameservers: list[str] = Field(default_factory=list)
    dnssec: str | None = Field(default=None, description='"signed", "unsigned" or null')
    registrant: Registrant = Field(default_factory=Registrant)
    abuse_contact: AbuseContact = Field(default_factory=AbuseContact)
    redacted: list[str] = Field(default_factory=list, description="Fields the servers withheld.")
    hops: list[WhoisHop] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def lists_host_objects(text: str) -> bool:
    """Verisign answered a list of host (``Server Name``) objects, not the domain."""
    lowered = text.lower()
    if re.search(r"^\s*domain name\s*:", lowered, re.M):
        return False
    return 'look it up with "' in lowered or bool(re.search(r"^\s*server name\s*:", lowered, re.M))


def _is_about(answer: WhoisAnswer, facts: WhoisFacts, name: str) -> bool:
    """The answer is a record of ``name`` (DENIC names a free domain too: ``Status: free``)."""
    if facts.domain is None or facts.domain.strip().rstrip(".").lower() != name:
        return False
    return not (is_not_found(answer.text) and not facts.nameservers and not facts.created)


def combine(name: str, answers: list[WhoisAnswer]) -> WhoisResult:
    """The result for ``name`` from the answers of a trail (no network)."""
    hops = [
        WhoisHop(
            server=a.server,
            port=a.port,
            query=a.query,
            bytes=a.size,
            encoding=a.encoding,
            complete=a.complete,
            text=a.text,
        )
        for a in answers
    ]
    result = WhoisResult(domain=name, unicode_name=unicode_name(name), registered=None, hops=hops)
    records = [(a, parse_whois(a.text)) for a in answers]
    about = [(a, f) for a, f in records if _is_about(a, f, name)]
    limited = [a for a in answers if is_rate_limited(a.text)]
    if not about:
        if limited:
            raise ToolFailure(
                400,
                f"the WHOIS server {limited[0].server} refused the query: rate limit reached; try again later",
            )
        last = answers[-1]
        if is_not_found(last.text):
            result.registered = False
            result.whois_server = last.server
            result.notes.append(f"{last.server} has no record of {name}")
        else:
            result.notes.append("no WHOIS answer named the domain; the raw text is in hops")
        return result
    for answer in limited:
        result.notes.append(f"{answer.server} refused the query (rate limit); its data is missing")
    facts = dataclasses.replace(about[0][1])
    for _, later in about[1:]:
        for key in ("registrant_org", "registrant_country", "abuse_email", "abuse_phone"):
            if getattr(later, key):
                setattr(facts, key, getattr(later, key))
        facts.merge(later)
    result.registered = True
    result.whois_server = about[-1][0].server
    _fill(result, facts)
    return result


def _fill(result: WhoisResult, facts: WhoisFacts) -> None:
    result.registrar = facts.registrar
    result.registrar_iana_id = facts.registrar_iana_id
    result.registrar_url = facts.registrar_url
    result.created_at = facts.created
    result.updated_at = facts.updated
    result.expires_at = facts.expires
    result.status = facts.status
    result.nameservers = facts.nameservers
    result.dnssec = facts.dnssec
    result.registrant = Registrant(
        organization=facts.registrant_org, country=facts.registrant_country
    )
    result.abuse_contact = AbuseContact(email=facts.abuse_email, phone=facts.abuse_phone)
    result.redacted = [f for f in facts.redacted if getattr(facts, f, None) in (None, [], "")]


async def whois_lookup(domain: str, settings: Settings) -> WhoisResult:
    """Follow the WHOIS trail for the registrable domain of ``domain``; raises ToolFailure."""
    name = registrable_domain(domain)
    try:
        trail = await follow(
            name,
            settings,
            next_server=referral,
            needs_exact_match=lists_host_objects,
            timeout=min(settings.http_timeout_s, 10.0),
        )
    except NetError as exc:
        raise ToolFailure(exc.code, f"WHOIS: {exc.message}") from None
    result = combine(name, trail.answers)
    if trail.error is not None:
        if result.registered is None:
            raise ToolFailure(trail.error.code, f"WHOIS: {trail.error.message}")
        result.notes.append(f"a referred WHOIS server could not be asked: {trail.error.message}")
    if name != domain:
        result.notes.insert(0, f"{domain} is part of the registered domain {name}")
    return result


async def run(payload: DomainInput, ctx: ToolContext) -> WhoisResult:
    """Look the domain up in WHOIS."""
    return await whois_lookup(payload.domain, ctx.settings)


DEFINITION = ToolDefinition(
    slug="whois-lookup",
    kind="tool",
    action="whois-lookup",
    category="domain",
    name="WHOIS lookup",
    description=(
        "Registration facts from WHOIS: registrar, dates (ISO 8601 UTC), status, name servers, "
        "DNSSEC, registrant organisation and country where published, abuse contact, and the "
        "raw answer of every server asked (IANA, registry, registrar)."
    ),
    input_model=DomainInput,
    output_model=WhoisResult,
    run=run,
    example={"domain": "example.com"},
    aliases=("whois",),
)
