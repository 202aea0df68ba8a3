"""The checker score: a weighted mean of check outcomes, capped by gate checks.

    score = round(100 * sum(w_i * s_i) / sum(w_i))    over checks with status pass|warn|fail
    s_i   = 1 for pass, 0.5 for warn, 0 for fail;     info checks carry no weight
    w_i   = WEIGHTS.get(id, 1)

A failed *gate* check (the page is not indexable, answered an error status, is
an empty JavaScript shell, or shuts out AI search) caps the score at 49, as
Lighthouse weights is-crawlable so that failing it fails the SEO category.
Summary status: pass at 90 or more, warn from 50, fail below 50. No scored
check -> score null, status warn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from toolrun.tools.web.models import Check, Summary

STATUS_SCORE: Mapping[str, float] = {"pass": 1.0, "warn": 0.5, "fail": 0.0}
WEIGHTS: Mapping[str, float] = {
    "is-crawlable": 5,
    "http-status-code": 3,
    "document-title": 3,
    "is-on-https": 3,
    "meta-description": 2,
    "canonical": 2,
    "broken-links": 2,
    "h1": 2,
    "viewport": 2,
    "ai-crawler-access": 4,
    "server-rendered-text": 3,
    "llms-txt": 2,
    "structured-data": 2,
    "open-graph": 2,
    "security-headers": 0.5,
    "url-hygiene": 0.5,
    "dom-size": 0.5,
    "doctype": 0.5,
    "page-weight": 0.5,
    "image-aspect-ratio": 0.5,
    "hidden-instructions": 1,
    "markdown-mirror": 0.5,
}
GATES = frozenset({"is-crawlable", "http-status-code", "server-rendered-text", "ai-crawler-access"})
GATE_CAP = 49
PASS_AT = 90
WARN_AT = 50


def score(checks: Iterable[Check]) -> float | None:
    """The 0-100 score of ``checks`` (None when none is scored)."""
    total = earned = 0.0
    gate_failed = False
    for check in checks:
        if check.status not in STATUS_SCORE:
            continue
        weight = WEIGHTS.get(check.id, 1.0)
        total += weight
        earned += weight * STATUS_SCORE[check.status]
        gate_failed = gate_failed or (check.id in GATES and check.status == "fail")
    if total == 0:
        return None
    value = round(100 * earned / total)
    return float(min(value, GATE_CAP) if gate_failed else value)


def summarize(checks: list[Check]) -> Summary:
    """Counts per status, the score and the overall status."""
    value = score(checks)
    status: Literal["pass", "warn", "fail"]
    if value is None:
        status = "warn"
    elif value >= PASS_AT:
        status = "pass"
    elif value >= WARN_AT:
        status = "warn"
    else:
        status = "fail"
    return Summary(
        status=status,
        score=value,
        passed=sum(c.status == "pass" for c in checks),
        warnings=sum(c.status == "warn" for c in checks),
        failed=sum(c.status == "fail" for c in checks),
        info=sum(c.status == "info" for c in checks),
    )


def suggestions(checks: list[Check], limit: int = 10) -> list[str]:
    """Recommendations of failed checks first, then warnings, heaviest first."""
    ranked = sorted(
        (c for c in checks if c.recommendation and c.status in ("fail", "warn")),
        key=lambda c: (c.status != "fail", -WEIGHTS.get(c.id, 1.0)),
    )
    seen: dict[str, None] = {}
    for check in ranked:
        seen.setdefault(f"{check.title}: {check.recommendation}", None)
    return list(seen)[:limit]
