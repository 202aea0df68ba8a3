"""Output models shared by the website checkers (DESIGN §6 checker shape)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, HttpUrl
from pydantic.alias_generators import to_camel

CheckStatus = Literal["pass", "warn", "fail", "info"]


class CamelModel(BaseModel):
    """A model whose JSON names are camelCase; Python names stay snake_case."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class UrlInput(CamelModel):
    """The input of every website tool: one absolute http(s) URL."""

    url: HttpUrl = Field(description="Page to fetch (http or https).")


class Check(CamelModel):
    """One check: its outcome, the measured value and what to do about it."""

    id: str
    title: str
    status: CheckStatus
    value: Any = None
    detail: str
    recommendation: str | None = None


class Summary(CamelModel):
    """Counts of the checks and the score (see ``scoring.py`` for the formula)."""

    status: Literal["pass", "warn", "fail"]
    score: float | None
    passed: int
    warnings: int
    failed: int
    info: int = 0


class RedirectHop(CamelModel):
    """One redirect the fetch followed."""

    url: str
    status_code: int
    location: str


class FetchFacts(CamelModel):
    """What every website tool reports about the fetch of the page."""

    url: str
    final_url: str
    status_code: int
    fetched_at: datetime
    timing_ms: float
    redirects: list[RedirectHop] = Field(default_factory=list)


class CheckerResult(FetchFacts):
    """The shared checker shape: summary, checks, suggestions and related tools."""

    summary: Summary
    checks: list[Check]
    suggestions: list[str]
    related_tools: list[str]
