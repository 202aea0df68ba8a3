"""Helpers shared by the domain tool tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from toolrun.config import Settings
from toolrun.tools.base import ToolContext

DATA = Path(__file__).parents[2] / "data" / "domain"


def context(settings: Settings, **services: Any) -> ToolContext:
    """A ToolContext as the worker builds it, with a minute to run."""
    return ToolContext(
        settings=settings,
        job_id="job-1",
        account_id="account-1",
        deadline_at=datetime.now(UTC) + timedelta(seconds=60),
        services=services,
    )


def whois_sample(name: str) -> bytes:
    return (DATA / "whois" / name).read_bytes()
