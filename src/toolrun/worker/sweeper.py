"""The upload sweeper: deletes the files of expired upload sessions and assets, marks them expired,
and removes leftovers of interrupted writes. Runs as worker maintenance (every 60 s).

Files go first, then the rows are marked: if the process dies in between, the
next sweep finds the same rows and deletes again (deleting is idempotent).
Rows are kept, marked ``expired``: a read of one answers 404 like an unknown id.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from toolrun.core import uploads
from toolrun.core.clock import Clock
from toolrun.db.engine import Database
from toolrun.storage import Storage, StorageError

BATCH = 200
INCOMPLETE_WRITE_AGE_S = 3600.0  # an unfinished write older than this is abandoned
log = logging.getLogger("toolrun.sweeper")


@dataclass(frozen=True)
class SweepResult:
    expired: int
    objects_deleted: int
    incomplete_purged: int


async def sweep(db: Database, storage: Storage, *, clock: Clock) -> SweepResult:
    """One pass: every asset past ``expires_at`` loses its files and becomes ``expired``."""
    expired = deleted = 0
    while True:
        now = clock()
        async with db.read() as session:
            batch = await uploads.expired_assets(session, now=now, limit=BATCH)
        if not batch:
            break
        done: list[str] = []
        for asset in batch:
            try:
                deleted += await storage.delete_prefix(uploads.asset_prefix(asset.id))
                if not asset.storage_key.startswith(uploads.asset_prefix(asset.id)):
                    await storage.delete(asset.storage_key)
                    deleted += 1
            except (StorageError, ValueError):
                log.exception("deleting the files of asset %s failed", asset.id)
                continue
            done.append(asset.id)
        async with db.write() as session:
            expired += await uploads.mark_expired(session, asset_ids=done, now=now)
        if len(batch) < BATCH or not done:
            break
    purged = await storage.purge_incomplete(INCOMPLETE_WRITE_AGE_S)
    if expired or purged:
        log.info(
            "sweeper: %d assets expired, %d objects deleted, %d incomplete writes purged",
            expired,
            deleted,
            purged,
        )
    return SweepResult(expired=expired, objects_deleted=deleted, incomplete_purged=purged)


def sweeper_task(db: Database, storage: Storage, clock: Clock) -> Callable[[], Awaitable[None]]:
    """The sweep as a worker maintenance task."""

    async def run() -> None:
        await sweep(db, storage, clock=clock)

    return run
