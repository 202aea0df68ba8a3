"""Credits and the append-only ledger: grants, reservations and refunds.

Every change of a balance is one ledger row in the caller's transaction, so
``balance == sum(ledger.amount)`` always holds. A balance never goes below zero
(a guarded UPDATE, backed by a CHECK constraint). A ledger ``reference`` is
unique: a refund, a signup grant or a day's check-in can be written only once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import (
    CTE,
    Integer,
    String,
    bindparam,
    case,
    exists,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from toolrun.config import Settings
from toolrun.core.errors import InsufficientCredits, NotFound
from toolrun.db.base import UTCDateTime, new_id
from toolrun.db.dialect import upsert_insert
from toolrun.db.engine import (
    Database,
    DriverStatement,
    ReadSession,
    SqliteStatement,
    WriteSession,
)
from toolrun.db.tables import Account, CheckIn, LedgerEntry, table_of

CHECK_IN_ZONE = ZoneInfo("Asia/Shanghai")
TOOL_COST = 1
HISTORY_PAGE_SIZE = 20


class Reason(StrEnum):
    SIGNUP = "signup"
    ANONYMOUS_TRIAL = "anonymous_trial"
    DAILY_CHECKIN = "daily_checkin"
    TOOL_USE = "tool_use"
    REFUND = "refund"


class RegistrationRequired(InsufficientCredits):
    """The anonymous trial allowance is used up: register the account to go on."""


async def grant(
    session: WriteSession,
    *,
    account_id: str,
    amount: int,
    reason: Reason,
    reference: str,
    now: datetime,
    operation: str | None = None,
) -> LedgerEntry:
    """Add ``amount`` credits and write the ledger row."""
    balance = (
        await session.execute(
            update(Account)
            .where(Account.id == account_id)
            .values(balance=Account.balance + amount)
            .returning(Account.balance)
        )
    ).scalar_one()
    return await _append(
        session, _entry(account_id, reason, amount, balance, reference, operation, now)
    )


_cost = bindparam("cost", type_=Integer())
_accounts = table_of(Account)
# A Core UPDATE of the table: through the session it skips the ORM's bulk-update handling,
# which cost more CPU than the statement (no Account is loaded in the sessions that reserve).
_RESERVE = (
    update(_accounts)
    .where(
        _accounts.c.id == bindparam("reserve_account_id"),
        _accounts.c.balance >= _cost,
        _accounts.c.is_anonymous.is_(False)
        | (_accounts.c.anonymous_spent + _cost <= _accounts.c.anonymous_limit),
    )
    .values(
        balance=_accounts.c.balance - _cost,
        anonymous_spent=case(
            (_accounts.c.is_anonymous.is_(True), _accounts.c.anonymous_spent + _cost),
            else_=_accounts.c.anonymous_spent,
        ),
    )
    .returning(_accounts.c.balance)
)


_ACCOUNT_STATE = select(
    _accounts.c.balance,
    _accounts.c.is_anonymous,
    _accounts.c.anonymous_spent,
    _accounts.c.anonymous_limit,
).where(_accounts.c.id == bindparam("account_id"))


async def reserve(
    session: WriteSession,
    *,
    account_id: str,
    reference: str,
    operation: str,
    now: datetime,
    cost: int = TOOL_COST,
    reason: Reason = Reason.TOOL_USE,
) -> LedgerEntry:
    """Take ``cost`` credits for one operation, or raise 402 and change nothing.

    The UPDATE's guard is the atomic check: concurrent reservations on one
    account serialise on its row and the last ones find the balance short.
    """
    balance = (
        await session.execute(_RESERVE, {"reserve_account_id": account_id, "cost": cost})
    ).scalar_one_or_none()
    if balance is None:
        account = (
            (await session.execute(_ACCOUNT_STATE, {"account_id": account_id})).mappings().first()
        )
        raise _shortfall(account, account_id, cost)
    return await _append(
        session, _entry(account_id, reason, -cost, balance, reference, operation, now)
    )


def _shortfall(account: Mapping[Any, Any] | None, account_id: str, cost: int) -> Exception:
    """Why a reservation of ``cost`` found nothing to take, from the account's state."""
    if account is None:
        return NotFound(f"account {account_id} not found")
    spent, limit = account["anonymous_spent"], account["anonymous_limit"]
    if account["is_anonymous"] and spent + cost > limit:
        return RegistrationRequired()
    return InsufficientCredits(
        f"not enough credits: balance {account['balance']}, this operation costs {cost}"
    )


def reservation_ctes() -> tuple[CTE, CTE]:
    """:func:`reserve` (reason tool use) as two CTEs of one PostgreSQL statement: ``reserved``,
    the guarded UPDATE with the new balance (no row: nothing taken), and ``entry``, its ledger
    row, written only when ``reserved`` has one. Parameters: ``reserve_account_id``, ``cost``,
    ``entry_id``, ``reference``, ``operation``, ``now``."""
    reserved = _RESERVE.cte("reserved")
    entry = insert(table_of(LedgerEntry)).from_select(
        list(_ENTRY_COLUMNS),
        select(
            bindparam("entry_id", type_=String()),
            bindparam("reserve_account_id", type_=String()),
            literal_column(f"'{Reason.TOOL_USE.value}'"),
            -_cost,
            reserved.c.balance,
            bindparam("reference", type_=String()),
            bindparam("operation", type_=String()),
            bindparam("now", type_=UTCDateTime()),
        ),
    )
    return reserved, entry.cte("entry")


_DRIVER_ACCOUNT_STATE = DriverStatement(_ACCOUNT_STATE)


async def shortfall_on_postgres(db: Database, *, account_id: str, cost: int) -> Exception:
    """Why a reservation made by a :func:`reservation_ctes` statement took nothing."""
    account = await db.fetch_one(_DRIVER_ACCOUNT_STATE, {"account_id": account_id})
    return _shortfall(account, account_id, cost)


_SQLITE_RESERVE = SqliteStatement(_RESERVE)
_SQLITE_ACCOUNT_STATE = SqliteStatement(_ACCOUNT_STATE)


def reserve_on_sqlite(
    connection: sqlite3.Connection,
    *,
    account_id: str,
    reference: str,
    operation: str,
    now: datetime,
    cost: int = TOOL_COST,
) -> LedgerEntry:
    """:func:`reserve` (reason tool use) inside a :meth:`Database.sqlite_unit`'s transaction."""
    balance = _SQLITE_RESERVE.scalar(connection, {"reserve_account_id": account_id, "cost": cost})
    if balance is None:
        account = _SQLITE_ACCOUNT_STATE.first(connection, {"account_id": account_id})
        raise _shortfall(account, account_id, cost)
    entry = _entry(account_id, Reason.TOOL_USE, -cost, balance, reference, operation, now)
    _SQLITE_INSERT_ENTRY.run(connection, _entry_row(entry))
    return entry


async def refund(
    session: WriteSession, *, reservation_id: str, now: datetime
) -> LedgerEntry | None:
    """Return a reservation's credits; ``None`` if it was already refunded.

    The account row is locked first, so of two concurrent refunds the second
    sees the first one's ledger row; the unique reference backs that up.
    """
    reservation = await session.scalar(select(LedgerEntry).where(LedgerEntry.id == reservation_id))
    if reservation is None or reservation.amount >= 0:
        raise NotFound(f"reservation {reservation_id} not found")
    await session.execute(
        select(Account.id).where(Account.id == reservation.account_id).with_for_update()
    )
    reference = f"refund:{reservation_id}"
    if await session.scalar(select(LedgerEntry.seq).where(LedgerEntry.reference == reference)):
        return None
    amount = -reservation.amount
    balance = (
        await session.execute(
            update(Account)
            .where(Account.id == reservation.account_id)
            .values(
                balance=Account.balance + amount,
                anonymous_spent=case(
                    (
                        Account.is_anonymous.is_(True) & (Account.anonymous_spent >= amount),
                        Account.anonymous_spent - amount,
                    ),
                    (Account.is_anonymous.is_(True), 0),
                    else_=Account.anonymous_spent,
                ),
            )
            .returning(Account.balance)
        )
    ).scalar_one()
    entry = _entry(
        reservation.account_id,
        Reason.REFUND,
        amount,
        balance,
        reference,
        reservation.operation,
        now,
    )
    return await _append(session, entry)


async def _append(session: WriteSession, entry: LedgerEntry) -> LedgerEntry:
    """Write one ledger row (a Core insert: no unit of work on the hot path); returns it detached."""
    await session.execute(_INSERT_ENTRY, _entry_row(entry))
    return entry


_ENTRY_COLUMNS = (
    "id",
    "account_id",
    "reason",
    "amount",
    "balance_after",
    "reference",
    "operation",
    "created_at",
)
_INSERT_ENTRY = insert(table_of(LedgerEntry)).values(
    {name: bindparam(name) for name in _ENTRY_COLUMNS}
)
_SQLITE_INSERT_ENTRY = SqliteStatement(_INSERT_ENTRY)


def _entry(
    account_id: str,
    reason: Reason,
    amount: int,
    balance_after: int,
    reference: str,
    operation: str | None,
    now: datetime,
) -> LedgerEntry:
    return LedgerEntry(
        id=new_id(),
        account_id=account_id,
        reason=reason.value,
        amount=amount,
        balance_after=balance_after,
        reference=reference,
        operation=operation,
        created_at=now,
    )


def _entry_row(entry: LedgerEntry) -> dict[str, Any]:
    return {name: getattr(entry, name) for name in _ENTRY_COLUMNS}


# --- check-in ---------------------------------------------------------------------------------


def check_in_day(now: datetime) -> date:
    """The calendar day in Beijing time that ``now`` falls on."""
    return now.astimezone(CHECK_IN_ZONE).date()


def next_check_in_at(now: datetime) -> datetime:
    day = check_in_day(now) + timedelta(days=1)
    midnight = datetime(day.year, day.month, day.day, tzinfo=CHECK_IN_ZONE)
    return midnight.astimezone(now.tzinfo)


async def check_in(
    session: WriteSession, *, account: Account, now: datetime, settings: Settings
) -> bool:
    """Grant the daily credits once per Beijing day; ``False`` if already done or anonymous."""
    if account.is_anonymous:
        return False
    day = check_in_day(now)
    inserted = (
        await session.execute(
            upsert_insert(session, CheckIn)
            .values(account_id=account.id, day=day, created_at=now)
            .on_conflict_do_nothing()
            .returning(CheckIn.account_id)
        )
    ).first()
    if inserted is None:
        return False
    await grant(
        session,
        account_id=account.id,
        amount=settings.daily_checkin_credits,
        reason=Reason.DAILY_CHECKIN,
        reference=f"checkin:{account.id}:{day.isoformat()}",
        now=now,
    )
    return True


# --- reading ----------------------------------------------------------------------------------


async def balance(session: ReadSession | WriteSession, *, account_id: str) -> int:
    value = await session.scalar(select(Account.balance).where(Account.id == account_id))
    if value is None:
        raise NotFound(f"account {account_id} not found")
    return value


@dataclass(frozen=True)
class CreditSummary:
    balance: int
    is_anonymous: bool
    anonymous_spent: int
    anonymous_spend_limit: int
    anonymous_remaining: int | None
    registration_required: bool
    checked_in_today: bool
    daily_reward: int
    signup_reward: int
    tool_cost: int
    next_check_in_at: datetime
    time_zone: str


_SUMMARY = select(
    Account.balance,
    Account.is_anonymous,
    Account.anonymous_spent,
    Account.anonymous_limit,
    exists()
    .where(CheckIn.account_id == Account.id, CheckIn.day == bindparam("day"))
    .label("checked_in"),
).where(Account.id == bindparam("account_id"))


_DRIVER_SUMMARY = DriverStatement(_SUMMARY)
_SQLITE_SUMMARY = SqliteStatement(_SUMMARY)


async def summary(
    connection: AsyncConnection | AsyncSession,
    *,
    account_id: str,
    now: datetime,
    settings: Settings,
) -> CreditSummary:
    """The credit summary in one statement, in the caller's transaction."""
    row = (
        (await connection.execute(_SUMMARY, {"account_id": account_id, "day": check_in_day(now)}))
        .mappings()
        .first()
    )
    return _summary_of(row, account_id=account_id, now=now, settings=settings)


async def current_summary(
    db: Database, *, account_id: str, now: datetime, settings: Settings
) -> CreditSummary:
    """The credit summary as one autocommit statement (on PostgreSQL, run by the driver)."""
    parameters = {"account_id": account_id, "day": check_in_day(now)}
    if db.is_sqlite:
        row = await db.sqlite_unit(
            lambda connection: _SQLITE_SUMMARY.first(connection, parameters), write=False
        )
    else:
        row = await db.fetch_one(_DRIVER_SUMMARY, parameters)
    return _summary_of(row, account_id=account_id, now=now, settings=settings)


def _summary_of(row: Any, *, account_id: str, now: datetime, settings: Settings) -> CreditSummary:
    if row is None:
        raise NotFound(f"account {account_id} not found")
    anonymous = bool(row["is_anonymous"])
    spent, limit = row["anonymous_spent"], row["anonymous_limit"]
    remaining = max(0, limit - spent) if anonymous else None
    return CreditSummary(
        balance=row["balance"],
        is_anonymous=anonymous,
        anonymous_spent=spent if anonymous else 0,
        anonymous_spend_limit=limit if anonymous else 0,
        anonymous_remaining=remaining,
        registration_required=anonymous and remaining == 0,
        checked_in_today=bool(row["checked_in"]),
        daily_reward=settings.daily_checkin_credits,
        signup_reward=settings.signup_credits,
        tool_cost=TOOL_COST,
        next_check_in_at=next_check_in_at(now),
        time_zone=CHECK_IN_ZONE.key,
    )


@dataclass(frozen=True)
class HistoryPage:
    items: list[LedgerEntry]
    has_more: bool
    page: int


async def history(session: ReadSession, *, account_id: str, page: int) -> HistoryPage:
    """One page of the ledger, newest first."""
    rows = list(
        await session.scalars(
            select(LedgerEntry)
            .where(LedgerEntry.account_id == account_id)
            .order_by(LedgerEntry.seq.desc())
            .offset((page - 1) * HISTORY_PAGE_SIZE)
            .limit(HISTORY_PAGE_SIZE + 1)
        )
    )
    return HistoryPage(
        items=rows[:HISTORY_PAGE_SIZE], has_more=len(rows) > HISTORY_PAGE_SIZE, page=page
    )
