"""The job queue's statements and wake-up, one function per statement.

The ``jobs`` table is the queue. Claiming takes the oldest queued job whose
deadline is ahead: ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so concurrent
workers never wait on each other's rows; on SQLite the ``BEGIN IMMEDIATE`` of
the write transaction serialises claims. Wake-up: a ``NOTIFY`` sent from the
inserting transaction (delivered only at commit) and an in-process event; a
worker also polls, so a lost notification delays a job but never strands it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, select, text, update
from sqlalchemy.engine import make_url

from toolrun.db.base import UTCDateTime
from toolrun.db.dialect import dialect_name
from toolrun.db.engine import Executor, WriteSession
from toolrun.db.tables import Job, JobStatus, table_of

CHANNEL = "toolrun_jobs"
log = logging.getLogger("toolrun.queue")


_jobs = table_of(Job)
_OLDEST_RUNNABLE = (
    select(_jobs.c.id)
    .where(_jobs.c.status == JobStatus.QUEUED.value, _jobs.c.deadline_at > bindparam("now"))
    .order_by(_jobs.c.created_at)
    .limit(1)
    .with_for_update(skip_locked=True)
    .scalar_subquery()
)
_CLAIM = (
    update(_jobs)
    .where(_jobs.c.id == _OLDEST_RUNNABLE, _jobs.c.status == JobStatus.QUEUED.value)
    .values(
        status=JobStatus.RUNNING.value,
        attempts=_jobs.c.attempts + 1,
        worker_id=bindparam("claimer"),
        lease_expires_at=bindparam("lease_until", type_=UTCDateTime()),
        started_at=bindparam("started_at", type_=UTCDateTime()),
    )
    .returning(*_jobs.c)
)


async def claim(
    connection: Executor, *, worker_id: str, now: datetime, lease: timedelta
) -> Job | None:
    """Take the oldest runnable queued job: running, one more attempt, leased to ``worker_id``.

    One statement: on a ``Database.statement`` connection it is its own transaction.
    """
    row = (
        (
            await connection.execute(
                _CLAIM,
                {"now": now, "claimer": worker_id, "lease_until": now + lease, "started_at": now},
            )
        )
        .mappings()
        .first()
    )
    return None if row is None else Job(**row)


async def renew_leases(
    session: WriteSession, *, job_ids: list[str], worker_id: str, now: datetime, lease: timedelta
) -> set[str]:
    """Extend the leases this worker still holds; returns the ids it still holds."""
    if not job_ids:
        return set()
    result = await session.execute(
        update(Job)
        .where(Job.id.in_(job_ids), Job.worker_id == worker_id, Job.status == JobStatus.RUNNING)
        .values(lease_expires_at=now + lease)
        .returning(Job.id)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    return set(result.scalars())


async def finish(
    connection: Executor,
    *,
    job_id: str,
    worker_id: str | None,
    values: dict[str, Any],
    from_statuses: tuple[JobStatus, ...] = (JobStatus.RUNNING,),
) -> Job | None:
    """Move a job out of ``from_statuses`` (held by ``worker_id`` when given); None if it was not.

    Returns a detached copy of the updated row.
    """
    conditions = [_jobs.c.id == job_id, _jobs.c.status.in_([s.value for s in from_statuses])]
    if worker_id is not None:
        conditions.append(_jobs.c.worker_id == worker_id)
    statement = update(_jobs).where(*conditions).values(**values).returning(*_jobs.c)
    row = (await connection.execute(statement)).mappings().first()
    return None if row is None else Job(**row)


_SUCCEED = (
    update(_jobs)
    .where(
        _jobs.c.id == bindparam("job_id"),
        _jobs.c.status == JobStatus.RUNNING.value,
        _jobs.c.worker_id == bindparam("holder"),
    )
    .values(
        status=JobStatus.SUCCEEDED.value,
        result=bindparam("result", type_=_jobs.c.result.type),
        completed_at=bindparam("completed_at", type_=UTCDateTime()),
        worker_id=None,
        lease_expires_at=None,
    )
    .returning(_jobs.c.id)
)


async def succeed(
    connection: Executor, *, job_id: str, worker_id: str, result: dict[str, Any], now: datetime
) -> bool:
    """Store the result of a running job ``worker_id`` holds; False if it holds it no more."""
    parameters = {"job_id": job_id, "holder": worker_id, "result": result, "completed_at": now}
    return (await connection.execute(_SUCCEED, parameters)).first() is not None


async def past_deadline(session: WriteSession, *, now: datetime, limit: int = 100) -> list[str]:
    """Ids of unfinished jobs whose deadline has passed."""
    result = await session.scalars(
        select(Job.id)
        .where(Job.status.in_((JobStatus.QUEUED, JobStatus.RUNNING)), Job.deadline_at <= now)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(result)


async def lease_expired(session: WriteSession, *, now: datetime, limit: int = 100) -> list[Job]:
    """Running jobs whose worker stopped renewing its lease before their deadline."""
    result = await session.scalars(
        select(Job)
        .where(
            Job.status == JobStatus.RUNNING,
            Job.lease_expires_at < now,
            Job.deadline_at > now,
        )
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(result)


async def requeue(session: WriteSession, *, job_id: str, worker_id: str | None) -> bool:
    """Put a running job back in the queue (its worker died or is shutting down)."""
    conditions = [Job.id == job_id, Job.status == JobStatus.RUNNING]
    if worker_id is not None:
        conditions.append(Job.worker_id == worker_id)
    result = await session.execute(
        update(Job)
        .where(and_(*conditions))
        .values(status=JobStatus.QUEUED, worker_id=None, lease_expires_at=None)
        .returning(Job.id)
        .execution_options(synchronize_session=False, populate_existing=True)
    )
    return result.first() is not None


async def send_wakeup(session: WriteSession) -> None:
    """Ask listening workers to claim; PostgreSQL delivers it when the transaction commits."""
    if dialect_name(session) == "postgresql":
        await session.execute(_NOTIFY, {"channel": CHANNEL})


_NOTIFY = text("SELECT pg_notify(:channel, '')")


class Wakeup:
    """Wakes a worker loop: set in-process after a commit, or by a PostgreSQL notification.

    A lost LISTEN connection (a PostgreSQL restart, an idle-connection killer) wakes the
    loop once, since a notification may have been missed, and ``keep_listening`` opens a new
    one; until then the worker's poll still finds every job.
    """

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._connection: Any = None
        self._dsn: str | None = None

    def notify_local(self) -> None:
        self._event.set()

    async def wait(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._event.wait(), seconds)
        self._event.clear()

    @property
    def listening(self) -> bool:
        return self._connection is not None and not self._connection.is_closed()

    async def listen(self, database_url: str) -> None:
        """Subscribe to the NOTIFY channel (PostgreSQL only; a no-op on SQLite)."""
        if not database_url.startswith("postgresql"):
            return
        dsn = make_url(database_url).set(drivername="postgresql")
        self._dsn = dsn.render_as_string(hide_password=False)
        await self._subscribe()

    async def keep_listening(self) -> None:
        """Subscribe again if the LISTEN connection was lost; failures are logged and retried later."""
        if self._dsn is None or self.listening:
            return
        try:
            await self._subscribe()
            log.info("listening for job notifications again")
        except Exception as error:
            log.warning("could not listen for job notifications: %s", error)

    async def _subscribe(self) -> None:
        import asyncpg

        assert self._dsn is not None
        connection = await asyncpg.connect(self._dsn)
        await connection.add_listener(CHANNEL, self._on_notification)
        connection.add_termination_listener(self._on_lost)
        self._connection = connection

    def _on_notification(self, *_: Any) -> None:
        self._event.set()

    def _on_lost(self, *_: Any) -> None:
        log.warning("the connection listening for job notifications was lost")
        self._event.set()

    async def close(self) -> None:
        self._dsn = None
        if self._connection is not None:
            with contextlib.suppress(Exception):
                await self._connection.close()
            self._connection = None
