"""The per-account request limit: a counter per UTC calendar minute, kept in the shared database.

``core.access`` counts each request with one upsert (``INSERT .. ON CONFLICT DO
UPDATE SET count = count + 1 RETURNING count``), atomic on both backends, so
every API process sees one count per account and minute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete

from toolrun.db.engine import WriteSession
from toolrun.db.tables import RateLimitWindow

WINDOW = timedelta(minutes=1)


@dataclass(frozen=True)
class RateLimitStatus:
    limit: int
    count: int
    reset_at: datetime

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.count)

    def retry_after(self, now: datetime) -> int:
        """Whole seconds until the next minute starts, at least 1."""
        return max(1, math.ceil((self.reset_at - now).total_seconds()))


def window_start(now: datetime) -> datetime:
    return now.replace(second=0, microsecond=0)


async def purge_old_windows(session: WriteSession, *, now: datetime) -> int:
    """Delete the counters of minutes that are over; returns how many went."""
    result = await session.execute(
        delete(RateLimitWindow).where(RateLimitWindow.window_start < window_start(now) - WINDOW)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
