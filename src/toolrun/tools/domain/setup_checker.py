"""domain-setup-checker: DNS, mail and web setup of a domain, as one checker result.

Everything is observed first, concurrently (``setup_data.gather``); the checks are
pure functions of the observations (``checks_dns``, ``checks_mail``, ``checks_web``).
The result is the shared checker shape (DESIGN §6), plus ``dnsErrors``: every question
that got no usable answer (SERVFAIL, REFUSED, TIMEOUT), with the reason. A check whose
own question is among them says it could not be checked (fail after an unusable answer,
warn after a timeout) instead of reporting the record missing.

Test and intranet seam: ``ctx.services["dns_port"]`` (the port name servers are
asked on directly, default 53) and ``ctx.services["web_ports"]`` (``{"http": p,
"https": p}``, default 80/443).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import Field

from toolrun.net.dns import ANSWERED, TIMEOUT
from toolrun.tools.base import ToolContext, ToolDefinition, ToolFailure
from toolrun.tools.domain import checks_dns, checks_mail, checks_web
from toolrun.tools.domain.http import open_fetcher
from toolrun.tools.domain.models import CamelModel, Check, DomainInput, Summary, summarise
from toolrun.tools.domain.names import unicode_name
from toolrun.tools.domain.setup_data import Observations, gather

RELATED_TOOLS = ["dns-lookup", "whois-lookup", "rdap-lookup", "domain-vendor-lookup"]


class DnsError(CamelModel):
    """A DNS question that got no usable answer."""

    name: str
    type: str
    status: str = Field(description="SERVFAIL, REFUSED or TIMEOUT.")
    resolver: str
    detail: str | None = Field(description="Why, when the server's rcode does not say it.")


class SetupCheckerResult(CamelModel):
    """The checker shape: summary, checks, suggestions, related tools."""

    domain: str
    unicode_name: str
    checked_at: datetime
    summary: Summary
    checks: list[Check]
    suggestions: list[str] = Field(
        description="The recommendations of failed checks, then of warnings."
    )
    related_tools: list[str]
    dns_queries: int = Field(description="DNS questions asked through the resolver.")
    dns_errors: list[DnsError] = Field(
        description="Questions without a usable answer; the checks reading them say so."
    )


CHECKS: list[Callable[[Observations], Check]] = [
    checks_dns.ns_count,
    checks_dns.ns_diversity,
    checks_dns.ns_lame,
    checks_dns.ns_consistency,
    checks_dns.soa,
    lambda o: checks_dns.addresses(o, o.domain, "apex-address", "Apex address"),
    lambda o: checks_dns.addresses(o, f"www.{o.domain}", "www-address", "www address"),
    checks_mail.mx,
    checks_mail.mx_resolvable,
    checks_mail.spf,
    checks_mail.spf_limits,
    checks_mail.dmarc,
    checks_mail.dmarc_reporting,
    checks_mail.dkim,
    checks_mail.mta_sts,
    checks_mail.tls_rpt,
    checks_mail.bimi,
    checks_dns.caa,
    checks_dns.dnssec,
    checks_web.https,
    checks_web.http_redirect,
    checks_web.hsts,
]
"""Every check, in report order."""


def inputs(o: Observations) -> dict[str, list[tuple[str, str]]]:
    """The questions a check cannot do without, by check id (CAA, DKIM and the SPF tree
    report their own failed lookups)."""
    d = o.domain
    ns = [(d, "NS")]
    return {
        "ns-count": ns,
        "ns-diversity": ns,
        "ns-lame": ns,
        "ns-consistency": ns,
        "soa": [(d, "SOA")],
        "apex-address": [(d, "A"), (d, "AAAA")],
        "www-address": [(f"www.{d}", "A"), (f"www.{d}", "AAAA")],
        "mx": [(d, "MX")],
        "mx-resolvable": [(d, "MX")],
        "spf": [(d, "TXT")],
        "spf-lookups": [(d, "TXT")],
        "dmarc": [(f"_dmarc.{d}", "TXT")],
        "dmarc-reporting": [(f"_dmarc.{d}", "TXT")],
        "mta-sts": [(f"_mta-sts.{d}", "TXT")],
        "tls-rpt": [(f"_smtp._tls.{d}", "TXT")],
        "bimi": [(f"default._bimi.{d}", "TXT"), (f"_dmarc.{d}", "TXT")],
        "dnssec": [(d, "DNSKEY"), (d, "DS")],
    }


def unanswerable(check: Check, o: Observations, questions: list[tuple[str, str]]) -> Check:
    """``check``, or "could not be checked" when a question it needs got no usable answer:
    a fail when the server answered unusably (every resolver sees that), a warning when
    nothing came back in time (which may be this side's network)."""
    failed = [(n, t, o.answer(n, t)) for n, t in questions if o.answer(n, t).status not in ANSWERED]
    if not failed:
        return check
    reasons = [
        f"{n} {t}: {a.status}" + (f" ({a.detail})" if a.detail else "") for n, t, a in failed
    ]
    return check.model_copy(
        update={
            "status": "warn" if all(a.status == TIMEOUT for _, _, a in failed) else "fail",
            "value": {"unanswered": {f"{n} {t}": a.status for n, t, a in failed}},
            "detail": f"Could not be checked: no usable DNS answer for {'; '.join(reasons)}.",
            "recommendation": "Make sure every name server of the zone answers these questions; "
            "resolvers and mail servers that get no answer treat the records as unavailable.",
        }
    )


def dns_errors(o: Observations) -> list[DnsError]:
    """Every question of the run without a usable answer, sorted by name and type."""
    return [
        DnsError(name=n, type=t, status=a.status, resolver=a.resolver, detail=a.detail)
        for (n, t), a in sorted(o.answers.items())
        if a.status not in ANSWERED
    ]


def build_result(observed: Observations) -> SetupCheckerResult:
    """Run every check over the observations."""
    needed = inputs(observed)
    checks = []
    for check in CHECKS:
        found = check(observed)
        checks.append(unanswerable(found, observed, needed.get(found.id, [])))
    suggestions = [c.recommendation for c in checks if c.status == "fail" and c.recommendation]
    suggestions += [c.recommendation for c in checks if c.status == "warn" and c.recommendation]
    return SetupCheckerResult(
        domain=observed.domain,
        unicode_name=unicode_name(observed.domain),
        checked_at=datetime.now(UTC).replace(microsecond=0),
        summary=summarise(checks),
        checks=checks,
        suggestions=list(dict.fromkeys(suggestions)),
        related_tools=RELATED_TOOLS,
        dns_queries=observed.queries,
        dns_errors=dns_errors(observed),
    )


async def run(payload: DomainInput, ctx: ToolContext) -> SetupCheckerResult:
    """Observe the domain and check it."""
    dns_port = ctx.services.get("dns_port", 53)
    web_ports = ctx.services.get("web_ports") or {}
    async with open_fetcher(ctx.settings, ctx) as fetcher:
        observed = await gather(
            payload.domain, ctx.settings, fetcher, dns_port=dns_port, web_ports=web_ports
        )
    if all(a.status == "TIMEOUT" for a in observed.answers.values()):
        raise ToolFailure(400, "no DNS answer for any question: the resolver is unreachable")
    if observed.answer(payload.domain, "SOA").status == "NXDOMAIN":
        raise ToolFailure(400, f"{payload.domain} does not exist (NXDOMAIN)")
    return build_result(observed)


DEFINITION = ToolDefinition(
    slug="domain-setup-checker",
    kind="tool",
    action="domain-setup-checker",
    category="domain",
    name="Domain setup checker",
    description=(
        "Checks a domain's name servers (count, diversity, consistency, lame delegation), SOA, "
        "addresses, MX, SPF (syntax and lookup limits), DMARC, DKIM, MTA-STS, TLS-RPT, BIMI, CAA, "
        "DNSSEC, HTTPS certificate, HTTP to HTTPS redirect and HSTS."
    ),
    input_model=DomainInput,
    output_model=SetupCheckerResult,
    run=run,
    example={"domain": "example.com"},
    aliases=("domain-setup",),
)
