"""A state machine drives the credit rules and checks the money invariants after every step."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import func, select

from toolrun.config import Settings
from toolrun.core import accounts, credits
from toolrun.core.errors import InsufficientCredits
from toolrun.db.engine import Database
from toolrun.db.tables import Account, LedgerEntry

_references = itertools.count()
T = TypeVar("T")


def test_credit_invariants_hold_under_any_sequence(database_url: str) -> None:
    app_settings = Settings(database_url=database_url, _env_file=None)

    class Credits(RuleBasedStateMachine):
        reservations = Bundle("reservations")

        def __init__(self) -> None:
            super().__init__()
            self.loop = asyncio.new_event_loop()
            self.db = Database(app_settings.resolved_database_url)
            self.now = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
            self.expected_balance = 0
            self.refunded: set[str] = set()

        def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
            return self.loop.run_until_complete(coroutine)

        def teardown(self) -> None:
            self.run(self.db.dispose())
            self.loop.close()

        @initialize(anonymous=st.booleans())
        def create(self, anonymous: bool) -> None:
            async def work() -> str:
                async with self.db.write() as session:
                    made = await accounts.create_account(
                        session, settings=app_settings, now=self.now, anonymous=anonymous
                    )
                    return made.account.id

            self.account_id = self.run(work())
            self.anonymous = anonymous
            self.expected_balance = 3 if anonymous else 10

        @rule(target=reservations)
        def reserve(self) -> object:
            async def work() -> str | None:
                try:
                    async with self.db.write() as session:
                        entry = await credits.reserve(
                            session,
                            account_id=self.account_id,
                            reference=f"job:{next(_references)}",
                            operation="test",
                            now=self.now,
                        )
                        return entry.id
                except InsufficientCredits:
                    return None

            reservation = self.run(work())
            if reservation is not None:
                self.expected_balance -= 1
            return reservation

        @rule(reservation=consumes(reservations), repeat=st.integers(1, 3))
        def refund(self, reservation: str | None, repeat: int) -> None:
            if reservation is None:
                return
            for _ in range(repeat):

                async def work() -> bool:
                    async with self.db.write() as session:
                        entry = await credits.refund(
                            session, reservation_id=reservation, now=self.now
                        )
                        return entry is not None

                if self.run(work()):
                    assert reservation not in self.refunded
                    self.refunded.add(reservation)
                    self.expected_balance += 1

        @rule(days=st.integers(0, 2), hours=st.integers(0, 23))
        def check_in(self, days: int, hours: int) -> None:
            self.now += timedelta(days=days, hours=hours)

            async def work() -> bool:
                async with self.db.write() as session:
                    account = await session.get(Account, self.account_id, populate_existing=True)
                    assert account is not None
                    return await credits.check_in(
                        session, account=account, now=self.now, settings=app_settings
                    )

            if self.run(work()):
                self.expected_balance += 10

        @rule()
        def register(self) -> None:
            if not self.anonymous:
                return

            async def work() -> None:
                async with self.db.write() as session:
                    await accounts.register(
                        session, account_id=self.account_id, settings=app_settings, now=self.now
                    )

            self.run(work())
            self.anonymous = False
            self.expected_balance += 10

        @invariant()
        def balance_equals_ledger_and_is_not_negative(self) -> None:
            if not hasattr(self, "account_id"):
                return

            async def work() -> tuple[int, int, int]:
                async with self.db.read() as session:
                    total = await session.scalar(
                        select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
                            LedgerEntry.account_id == self.account_id
                        )
                    )
                    balance = await session.scalar(
                        select(Account.balance).where(Account.id == self.account_id)
                    )
                    refunds = await session.scalar(
                        select(func.count()).where(
                            LedgerEntry.account_id == self.account_id,
                            LedgerEntry.reason == "refund",
                        )
                    )
                    assert total is not None
                    assert balance is not None
                    assert refunds is not None
                    return int(total), balance, refunds

            total, balance, refunds = self.run(work())
            assert balance == total == self.expected_balance
            assert balance >= 0
            assert refunds == len(self.refunded)

    run_state_machine_as_test(
        Credits,
        settings=settings(
            max_examples=15,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
