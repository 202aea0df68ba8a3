"""Jobs: creation with its credit and idempotency key, reading, cancel, and the worker's outcomes.

Every change that moves credits happens in the same transaction as the job
change it belongs to; ``credits_refunded`` flips at most once (a guarded
UPDATE), and the unique ledger reference backs that up.
"""

from __future__ import annotations

import hashlib
import sqlite3
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
from sqlalchemy import (
    Integer,
    String,
    bindparam,
    cast,
    delete,
    false,
    func,
    insert,
    literal_column,
    null,
    select,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.sql.elements import ColumnElement

from toolrun.config import Settings
from toolrun.core import credits
from toolrun.core.errors import Conflict, NotFound
from toolrun.db import queue
from toolrun.db.base import UTCDateTime, new_id
from toolrun.db.dialect import upsert_insert
from toolrun.db.engine import (
    Database,
    DriverStatement,
    Executor,
    ReadSession,
    SqliteStatement,
    WriteSession,
)
from toolrun.db.tables import IdempotencyKey, Job, JobStatus, table_of

IDEMPOTENCY_RETENTION = timedelta(hours=24)
MAX_ATTEMPTS = 3
JOB_LIST_SIZE = 50
CANCELED_MESSAGE = "job canceled; credit refunded"
DEADLINE_MESSAGE = "job passed its deadline of {seconds:g} s and was stopped; credit refunded"
WORKER_LOST_MESSAGE = "job was interrupted {attempts} times (worker lost) and was given up"


class IdempotencyRace(Exception):
    """Another transaction inserted the same Idempotency-Key first: retry to replay its job."""


class IdempotencyMismatch(Conflict):
    """This Idempotency-Key was already used for a different request; use a new key."""


class NotCancelable(Conflict):
    """Only a queued job can be canceled."""


def fingerprint(operation: str, payload: dict[str, Any]) -> str:
    """SHA-256 of the operation and the canonical JSON (sorted keys) of its validated input."""
    canonical = orjson.dumps(
        {"operation": operation, "input": payload}, option=orjson.OPT_SORT_KEYS
    )
    return hashlib.sha256(canonical).hexdigest()


@dataclass(frozen=True, slots=True)
class NewJob:
    """What a submission asks to charge and queue."""

    account_id: str
    kind: str
    action: str
    payload: dict[str, Any]
    variant: str | None = None


@dataclass(frozen=True)
class Created:
    job: Job
    replayed: bool
    balance: int
    """The account's balance after this request (a replay charges nothing)."""


_QUEUED_COLUMNS = (
    "id",
    "account_id",
    "kind",
    "action",
    "variant",
    "status",
    "payload",
    "result",
    "credit_cost",
    "credits_refunded",
    "reservation_id",
    "attempts",
    "created_at",
    "deadline_at",
)
_INSERT_JOB = insert(table_of(Job)).values({name: bindparam(name) for name in _QUEUED_COLUMNS})


def _postgres_create(*, notify: bool) -> DriverStatement:
    """Reservation, ledger row, job row (and the workers' wake-up) as one PostgreSQL statement:
    one round trip in autocommit, atomic as any statement; no row when nothing was taken."""
    reserved, entry = credits.reservation_ctes()

    def text_of(name: str) -> ColumnElement[Any]:
        return bindparam(name, type_=String())

    values: dict[str, ColumnElement[Any]] = {
        "id": text_of("id"),
        "account_id": text_of("reserve_account_id"),
        "kind": text_of("kind"),
        "action": text_of("action"),
        "variant": text_of("variant"),
        "status": text_of("status"),
        "payload": cast(text_of("payload"), JSONB),
        "result": null(),
        "credit_cost": bindparam("cost", type_=Integer()),
        "credits_refunded": false(),
        "reservation_id": text_of("entry_id"),
        "attempts": literal_column("0"),
        "created_at": bindparam("now", type_=UTCDateTime()),
        "deadline_at": bindparam("deadline_at", type_=UTCDateTime()),
    }
    job = (
        insert(table_of(Job))
        .from_select(list(values), select(*values.values()).select_from(reserved))
        .cte("job")
    )
    columns: list[ColumnElement[Any]] = [reserved.c.balance]
    if notify:
        columns.append(func.pg_notify(text_of("channel"), literal_column("''")))
    return DriverStatement(select(*columns).add_cte(entry, job))


_POSTGRES_CREATE = _postgres_create(notify=False)
_POSTGRES_CREATE_NOTIFY = _postgres_create(notify=True)
_SQLITE_INSERT_JOB = SqliteStatement(_INSERT_JOB)
_JOB_OF_ACCOUNT = select(Job.__table__).where(
    Job.__table__.c.id == bindparam("job_id"),
    Job.__table__.c.account_id == bindparam("account_id"),
)


async def create(
    session: WriteSession,
    new: NewJob,
    *,
    settings: Settings,
    now: datetime,
    idempotency_key: str | None = None,
    request_fingerprint: str | None = None,
) -> Created:
    """Reserve one credit and queue the job, or replay the job an Idempotency-Key already made.

    Raises ``InsufficientCredits`` (402) with nothing written, ``IdempotencyMismatch``
    (409), or ``IdempotencyRace`` when a concurrent first use won: the caller
    retries in a new transaction and gets the replay. :func:`create_queued` is the faster
    path of a job without an Idempotency-Key.
    """
    job_id = str(uuid.uuid4())
    if idempotency_key is not None:
        assert request_fingerprint is not None
        existing = await _live_key(session, new.account_id, idempotency_key, now)
        if existing is not None:
            if existing.fingerprint != request_fingerprint:
                raise IdempotencyMismatch()
            job = await session.get(Job, existing.job_id, populate_existing=True)
            if job is None:
                raise NotFound("the job of this Idempotency-Key no longer exists")
            balance = await credits.balance(session, account_id=new.account_id)
            return Created(job=job, replayed=True, balance=balance)
        inserted = (
            await session.execute(
                upsert_insert(session, IdempotencyKey)
                .values(
                    account_id=new.account_id,
                    key=idempotency_key,
                    fingerprint=request_fingerprint,
                    job_id=job_id,
                    created_at=now,
                )
                .on_conflict_do_nothing()
                .returning(IdempotencyKey.job_id)
            )
        ).first()
        if inserted is None:
            raise IdempotencyRace()
    reservation = await credits.reserve(
        session,
        account_id=new.account_id,
        reference=f"job:{job_id}",
        operation=new.action,
        now=now,
    )
    row = _queued_row(job_id, new, reservation.id, now, settings)
    await session.execute(_INSERT_JOB, row)
    if settings.job_wakeup == "notify":
        await queue.send_wakeup(session)
    return Created(job=Job(**row), replayed=False, balance=reservation.balance_after)


async def create_queued(db: Database, new: NewJob, *, settings: Settings, now: datetime) -> Created:
    """:func:`create` without an Idempotency-Key, in a transaction of its own: one statement on
    PostgreSQL, one unit in the connection's thread on SQLite."""
    job_id = str(uuid.uuid4())
    if not db.is_sqlite:
        entry_id = new_id()
        row = _queued_row(job_id, new, entry_id, now, settings)
        statement = _POSTGRES_CREATE_NOTIFY if settings.job_wakeup == "notify" else _POSTGRES_CREATE
        reserved = await db.fetch_one(
            statement,
            {
                **row,
                "payload": orjson.dumps(new.payload).decode(),
                "entry_id": entry_id,
                "reserve_account_id": new.account_id,
                "cost": credits.TOOL_COST,
                "reference": f"job:{job_id}",
                "operation": new.action,
                "now": now,
                "channel": queue.CHANNEL,
            },
        )
        if reserved is None:
            raise await credits.shortfall_on_postgres(
                db, account_id=new.account_id, cost=credits.TOOL_COST
            )
        return Created(job=Job(**row), replayed=False, balance=reserved["balance"])

    def work(connection: sqlite3.Connection) -> Created:
        reservation = credits.reserve_on_sqlite(
            connection,
            account_id=new.account_id,
            reference=f"job:{job_id}",
            operation=new.action,
            now=now,
        )
        row = _queued_row(job_id, new, reservation.id, now, settings)
        _SQLITE_INSERT_JOB.run(connection, row)
        return Created(job=Job(**row), replayed=False, balance=reservation.balance_after)

    return await db.sqlite_unit(work, write=True)


def _queued_row(
    job_id: str, new: NewJob, reservation_id: str, now: datetime, settings: Settings
) -> dict[str, Any]:
    """A new, queued job's row."""
    return {
        "id": job_id,
        "account_id": new.account_id,
        "kind": new.kind,
        "action": new.action,
        "variant": new.variant,
        "status": JobStatus.QUEUED.value,
        "payload": new.payload,
        "result": None,
        "credit_cost": credits.TOOL_COST,
        "credits_refunded": False,
        "reservation_id": reservation_id,
        "attempts": 0,
        "created_at": now,
        "deadline_at": now + timedelta(seconds=settings.job_timeout_s),
    }


async def _live_key(
    session: WriteSession, account_id: str, key: str, now: datetime
) -> IdempotencyKey | None:
    row = await session.get(IdempotencyKey, (account_id, key), populate_existing=True)
    if row is None:
        return None
    if row.created_at <= now - IDEMPOTENCY_RETENTION:
        await session.delete(row)
        await session.flush()
        return None
    return row


def _parse_id(job_id: str) -> str | None:
    try:
        return str(uuid.UUID(job_id))
    except ValueError:
        return None


_SQLITE_JOB_OF_ACCOUNT = SqliteStatement(_JOB_OF_ACCOUNT)


async def read(db: Database, *, account_id: str, job_id: str) -> Job:
    """:func:`get` as its own read: on SQLite one unit in the connection's thread."""
    if not db.is_sqlite:
        async with db.statement(write=False) as connection:
            return await get(connection, account_id=account_id, job_id=job_id)
    parsed = _parse_id(job_id)
    parameters = {"job_id": parsed, "account_id": account_id}
    row = (
        await db.sqlite_unit(lambda c: _SQLITE_JOB_OF_ACCOUNT.first(c, parameters), write=False)
        if parsed
        else None
    )
    if row is None:
        raise NotFound(f"job {job_id} not found")
    return Job(**row)


async def get(connection: AsyncConnection | AsyncSession, *, account_id: str, job_id: str) -> Job:
    """The caller's job as it is now; 404 for an unknown, foreign or malformed id alike.

    One statement on a ``Database.statement`` connection or in a session's transaction;
    the returned ``Job`` is a detached copy of the row.
    """
    parsed = _parse_id(job_id)
    row = (
        (await connection.execute(_JOB_OF_ACCOUNT, {"job_id": parsed, "account_id": account_id}))
        .mappings()
        .first()
        if parsed
        else None
    )
    if row is None:
        raise NotFound(f"job {job_id} not found")
    return Job(**row)


async def list_recent(session: ReadSession, *, account_id: str) -> list[Job]:
    """The account's latest jobs, newest created first."""
    result = await session.scalars(
        select(Job)
        .where(Job.account_id == account_id)
        .order_by(Job.created_at.desc(), Job.id.desc())
        .limit(JOB_LIST_SIZE)
    )
    return list(result)


async def cancel(session: WriteSession, *, account_id: str, job_id: str, now: datetime) -> Job:
    """Cancel a queued job and refund its credit in this transaction; else 404 or 409."""
    job = await get(session, account_id=account_id, job_id=job_id)
    canceled = await queue.finish(
        session,
        job_id=job.id,
        worker_id=None,
        from_statuses=(JobStatus.QUEUED,),
        values=_refunded_end(JobStatus.CANCELED, 409, CANCELED_MESSAGE, now),
    )
    if canceled is None:
        current = await get(session, account_id=account_id, job_id=job_id)
        raise NotCancelable(f"job is {current.status}; only a queued job can be canceled")
    await credits.refund(session, reservation_id=canceled.reservation_id, now=now)
    return canceled


def _refunded_end(status: JobStatus, code: int, message: str, now: datetime) -> dict[str, Any]:
    return {
        "status": status,
        "error_code": code,
        "error_message": message[:1000],
        "completed_at": now,
        "credits_refunded": True,
        "worker_id": None,
        "lease_expires_at": None,
    }


# --- the worker's side ------------------------------------------------------------------------


async def succeed(
    connection: Executor, *, job_id: str, worker_id: str, result: dict[str, Any], now: datetime
) -> bool:
    """Record a result; False if the job is no longer this worker's (reaped or requeued).

    One statement: a ``Database.statement`` connection suffices.
    """
    return await queue.succeed(
        connection, job_id=job_id, worker_id=worker_id, result=result, now=now
    )


async def fail(
    session: WriteSession,
    *,
    job_id: str,
    worker_id: str | None,
    code: int,
    message: str,
    now: datetime,
    from_statuses: tuple[JobStatus, ...] = (JobStatus.RUNNING,),
) -> bool:
    """Fail a job and refund its credit exactly once; False if it was not in ``from_statuses``."""
    job = await queue.finish(
        session,
        job_id=job_id,
        worker_id=worker_id,
        from_statuses=from_statuses,
        values=_refunded_end(JobStatus.FAILED, code, message, now),
    )
    if job is None:
        return False
    await credits.refund(session, reservation_id=job.reservation_id, now=now)
    return True


@dataclass(frozen=True)
class Reaped:
    timed_out: int
    requeued: int
    given_up: int


async def reap(session: WriteSession, *, now: datetime, settings: Settings) -> Reaped:
    """Fail jobs past their deadline (504) and requeue or give up jobs whose worker died."""
    timed_out = 0
    for job_id in await queue.past_deadline(session, now=now):
        message = DEADLINE_MESSAGE.format(seconds=settings.job_timeout_s)
        if await fail(
            session,
            job_id=job_id,
            worker_id=None,
            code=504,
            message=message,
            now=now,
            from_statuses=(JobStatus.QUEUED, JobStatus.RUNNING),
        ):
            timed_out += 1
    requeued = given_up = 0
    for job in await queue.lease_expired(session, now=now):
        if job.attempts >= MAX_ATTEMPTS:
            message = WORKER_LOST_MESSAGE.format(attempts=job.attempts)
            if await fail(
                session, job_id=job.id, worker_id=None, code=500, message=message, now=now
            ):
                given_up += 1
        elif await queue.requeue(session, job_id=job.id, worker_id=None):
            requeued += 1
    if requeued:
        await queue.send_wakeup(session)
    return Reaped(timed_out=timed_out, requeued=requeued, given_up=given_up)


async def purge_idempotency_keys(session: WriteSession, *, now: datetime) -> int:
    result = await session.execute(
        delete(IdempotencyKey).where(IdempotencyKey.created_at <= now - IDEMPOTENCY_RETENTION)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
