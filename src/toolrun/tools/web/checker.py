"""Assemble a checker result (DESIGN §6 shape) from a ``Site`` and its checks."""

from __future__ import annotations

from collections.abc import Sequence

from toolrun.tools.web.checks import CheckFunction, run_checks
from toolrun.tools.web.models import Check, CheckerResult, Summary
from toolrun.tools.web.scoring import suggestions, summarize
from toolrun.tools.web.site import Site


def evaluate(site: Site, functions: Sequence[CheckFunction]) -> tuple[list[Check], Summary]:
    """Run the checks once and summarise them."""
    checks = run_checks(site, functions)
    return checks, summarize(checks)


def base_fields(
    site: Site, checks: list[Check], summary: Summary, related: Sequence[str]
) -> dict[str, object]:
    """The fields every checker result shares, keyed by Python field name."""
    page = site.page
    return {
        "url": page.url,
        "final_url": page.final_url,
        "status_code": page.status_code,
        "fetched_at": page.fetched_at,
        "timing_ms": round(page.timing_ms, 1),
        "redirects": page.redirects,
        "summary": summary,
        "checks": checks,
        "suggestions": suggestions(checks),
        "related_tools": list(related),
    }


def checker_result(
    site: Site, functions: Sequence[CheckFunction], related: Sequence[str]
) -> CheckerResult:
    checks, summary = evaluate(site, functions)
    return CheckerResult.model_validate(base_fields(site, checks, summary, related))
