"""Models shared by the domain tools: camelCase JSON, the domain input, the checker shape."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from toolrun.tools.domain.names import normalise_domain

CheckStatus = Literal["pass", "warn", "fail", "info"]


class CamelModel(BaseModel):
    """A model whose JSON names are camelCase; Python names stay snake_case."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


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


class Check(CamelModel):
    """One check of a checker: its outcome, the measured value and what to do about it."""

    id: str
    title: str
    status: CheckStatus
    value: Any = None
    detail: str
    recommendation: str | None = None


class Summary(CamelModel):
    """Counts of the checks and the score (pass = 1, warn = 0.5, fail = 0; info not counted)."""

    status: Literal["pass", "warn", "fail"]
    score: float | None
    passed: int
    warnings: int
    failed: int
    info: int = 0


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
