"""Output models shared by the website checkers (DESIGN §6 checker shape)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field, HttpUrl

from toolrun.tools.report import CamelModel, Check, CheckStatus, Summary

__all__ = [
    "CamelModel",
    "Check",
    "CheckStatus",
    "CheckerResult",
    "FetchFacts",
    "RedirectHop",
    "Summary",
    "UrlInput",
]


class UrlInput(CamelModel):
    """The input of every website tool: one absolute http(s) URL."""

    url: HttpUrl = Field(description="Page to fetch (http or https).")


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
