from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from tests.factories import create_account
from toolrun.config import Settings
from toolrun.core import credits
from toolrun.core.errors import InsufficientCredits
from toolrun.db.engine import Database
from toolrun.db.tables import Account, LedgerEntry

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


async def ledger_sum_and_balance(db: Database, account_id: str) -> tuple[int, int]:
    async with db.read() as session:
        total = await session.scalar(
            select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
                LedgerEntry.account_id == account_id
            )
        )
        balance = await session.scalar(select(Account.balance).where(Account.id == account_id))
    assert total is not None
    assert balance is not None
    return int(total), balance


async def reserve(db: Database, account_id: str, reference: str) -> LedgerEntry:
    async with db.write() as session:
        return await credits.reserve(
            session, account_id=account_id, reference=reference, operation="dns-lookup", now=NOW
        )


async def test_signup_grant_is_in_the_ledger(db: Database, settings: Settings) -> None:
    account = await create_account(db, settings)
    assert await ledger_sum_and_balance(db, account.id) == (10, 10)


async def test_reserve_takes_one_credit_and_records_balance_after(
    db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    entry = await reserve(db, account.id, "job:1")
    assert (entry.amount, entry.balance_after, entry.reason) == (-1, 9, "tool_use")
    assert await ledger_sum_and_balance(db, account.id) == (9, 9)


async def test_reserve_refuses_when_the_balance_is_short(db: Database, settings: Settings) -> None:
    account = await create_account(db, settings)
    for n in range(10):
        await reserve(db, account.id, f"job:{n}")
    with pytest.raises(InsufficientCredits, match="balance 0"):
        await reserve(db, account.id, "job:x")
    assert await ledger_sum_and_balance(db, account.id) == (0, 0)


async def test_refund_happens_exactly_once(db: Database, settings: Settings) -> None:
    account = await create_account(db, settings)
    entry = await reserve(db, account.id, "job:1")
    async with db.write() as session:
        first = await credits.refund(session, reservation_id=entry.id, now=NOW)
    async with db.write() as session:
        second = await credits.refund(session, reservation_id=entry.id, now=NOW)
    assert first is not None
    assert (first.reference, first.amount, first.reason) == (f"refund:{entry.id}", 1, "refund")
    assert second is None
    assert await ledger_sum_and_balance(db, account.id) == (10, 10)


async def test_concurrent_refunds_of_one_reservation_refund_once(
    db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    entry = await reserve(db, account.id, "job:1")

    async def refund() -> object:
        async with db.write() as session:
            return await credits.refund(session, reservation_id=entry.id, now=NOW)

    results = await asyncio.gather(*(refund() for _ in range(8)), return_exceptions=True)
    assert sum(1 for r in results if isinstance(r, LedgerEntry)) == 1
    assert await ledger_sum_and_balance(db, account.id) == (10, 10)


async def test_concurrent_reserves_never_overdraw(db: Database, settings: Settings) -> None:
    account = await create_account(db, settings)
    results = await asyncio.gather(
        *(reserve(db, account.id, f"job:{n}") for n in range(30)), return_exceptions=True
    )
    assert sum(1 for r in results if isinstance(r, LedgerEntry)) == 10
    assert all(isinstance(r, LedgerEntry | InsufficientCredits) for r in results)
    assert await ledger_sum_and_balance(db, account.id) == (0, 0)


async def test_anonymous_spend_stops_at_the_trial_limit(db: Database, settings: Settings) -> None:
    account = await create_account(db, settings, anonymous=True)
    entries = [await reserve(db, account.id, f"job:{n}") for n in range(3)]
    with pytest.raises(credits.RegistrationRequired, match="register"):
        await reserve(db, account.id, "job:x")
    async with db.write() as session:
        await credits.refund(session, reservation_id=entries[0].id, now=NOW)
        summary = await credits.summary(session, account_id=account.id, now=NOW, settings=settings)
    assert (summary.anonymous_spent, summary.anonymous_remaining, summary.balance) == (2, 1, 1)
    assert not summary.registration_required


async def test_concurrent_check_ins_grant_once(db: Database, settings: Settings) -> None:
    account = await create_account(db, settings)
    async with db.read() as session:
        row = await session.get(Account, account.id)
    assert row is not None

    async def check_in() -> bool:
        async with db.write() as session:
            return await credits.check_in(session, account=row, now=NOW, settings=settings)

    results = await asyncio.gather(*(check_in() for _ in range(10)))
    assert results.count(True) == 1
    assert await ledger_sum_and_balance(db, account.id) == (20, 20)


@pytest.mark.parametrize(
    ("now", "day"),
    [
        (datetime(2026, 5, 1, 15, 59, 59, tzinfo=UTC), "2026-05-01"),
        (datetime(2026, 5, 1, 16, 0, 0, tzinfo=UTC), "2026-05-02"),
    ],
)
def test_check_in_day_is_the_beijing_calendar_day(now: datetime, day: str) -> None:
    assert credits.check_in_day(now).isoformat() == day


def test_next_check_in_is_beijing_midnight() -> None:
    moment = datetime(2026, 5, 1, 16, 0, 0, tzinfo=UTC)
    assert credits.next_check_in_at(moment) == datetime(2026, 5, 2, 16, 0, tzinfo=UTC)
