"""Models shared by the domain tools: camelCase JSON, the domain input, the checker shape."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from toolrun.tools.domain.names import normalise_domain
from toolrun.tools.report import CamelModel, Check, CheckStatus, Summary

__all__ = ["CamelModel", "Check", "CheckStatus", "DomainInput", "Summary", "summarise"]


class DomainInput(CamelModel):
    """The input of the WHOIS, RDAP, vendor and setup tools: one domain name."""

    domain: str = Field(
        min_length=1,
        max_length=260,
        description="Domain name (IDN allowed, written either way); a URL's host is taken.",
    )

    @field_validator("domain")
    @classmethod
    def _normalise(cls, value: str) -> str:
        return normalise_domain(value)


def summarise(checks: list[Check]) -> Summary:
    """The summary of ``checks``: the worst status wins; score in 0-100, one decimal."""
    passed = sum(c.status == "pass" for c in checks)
    warnings = sum(c.status == "warn" for c in checks)
    failed = sum(c.status == "fail" for c in checks)
    info = sum(c.status == "info" for c in checks)
    counted = passed + warnings + failed
    score = round(100 * (passed + 0.5 * warnings) / counted, 1) if counted else None
    status: Literal["pass", "warn", "fail"] = "fail" if failed else "warn" if warnings else "pass"
    return Summary(
        status=status, score=score, passed=passed, warnings=warnings, failed=failed, info=info
    )
