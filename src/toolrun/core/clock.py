"""The time source: tests inject a fixed or stepping clock, everything else uses the system's."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def system_clock() -> datetime:
    return datetime.now(UTC)


def isoformat(moment: datetime) -> str:
    """RFC 3339 in UTC with milliseconds and a ``Z``: ``2026-11-22T07:15:35.123Z``."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
