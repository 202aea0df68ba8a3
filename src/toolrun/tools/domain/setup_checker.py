"""domain-setup-checker: DNS, mail and web setup of a domain, as one checker result.

Everything is observed first, concurrently (``setup_data.gather``); the checks are
pure functions of the observations (``checks_dns``, ``checks_mail``, ``checks_web``).
The result is the shared checker shape (DESIGN §6).

Test and intranet seam: ``ctx.services["dns_port"]`` (the port name servers are
asked on directly, default 53) and ``ctx.services["web_ports"]`` (``{"http": p,
"https": p}``, default 80/443).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import Field

from toolrun.tools.base import ToolContext, ToolDefinition, ToolFailure
from toolrun.tools.domain import checks_dns, checks_mail, checks_web
from toolrun.tools.domain.http import open_fetcher
from toolrun.tools.domain.models import CamelModel, Check, DomainInput, Summary, summarise
from toolrun.tools.domain.names import unicode_name
from toolrun.tools.domain.setup_data import Observations, gather

RELATED_TOOLS = ["dns-lookup", "whois-lookup", "rdap-lookup", "domain-vendor-lookup"]


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


def build_result(observed: Observations) -> SetupCheckerResult:
    """Run every check over the observations."""
    checks = [check(observed) for check in CHECKS]
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
