"""A state machine drives jobs through every transition and checks the money after every step."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import func, select

from toolrun.config import Settings
from toolrun.core import accounts, jobs
from toolrun.core.errors import Conflict, InsufficientCredits
from toolrun.db import queue
from toolrun.db.engine import Database
from toolrun.db.tables import Account, Job, JobStatus, LedgerEntry

T = TypeVar("T")
KEYS = st.sampled_from([None, None, "a", "b", "c"])
VALUES = st.sampled_from(["x", "y"])


def test_job_money_invariants_hold_under_any_sequence(database_url: str) -> None:
    app_settings = Settings(database_url=database_url, _env_file=None)

    class Jobs(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.loop = asyncio.new_event_loop()
            self.db = Database(app_settings.resolved_database_url)
            self.now = datetime(2026, 1, 1, 8, 0, tzinfo=UTC)
            self.account_id = self.run(self._create_account())
            self.keys: dict[str, str] = {}

        def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
            return self.loop.run_until_complete(coroutine)

        def teardown(self) -> None:
            self.run(self.db.dispose())
            self.loop.close()

        async def _create_account(self) -> str:
            async with self.db.write() as session:
                made = await accounts.create_account(session, settings=app_settings, now=self.now)
                return made.account.id

        async def _jobs(self, *statuses: str) -> list[Job]:
            async with self.db.read() as session:
                query = select(Job).where(Job.account_id == self.account_id)
                if statuses:
                    query = query.where(Job.status.in_(statuses))
                return list(await session.scalars(query.order_by(Job.created_at)))

        @rule(key=KEYS, value=VALUES)
        def create(self, key: str | None, value: str) -> None:
            payload = {"value": value}

            async def work() -> jobs.Created | None:
                async with self.db.write() as session:
                    account = await session.get(Account, self.account_id)
                assert account is not None
                new = jobs.NewJob(
                    account_id=account.id, kind="tool", action="echo", payload=payload
                )
                try:
                    if key is None:  # as the API creates it: one statement, or one SQLite unit
                        return await jobs.create_queued(
                            self.db, new, settings=app_settings, now=self.now
                        )
                    async with self.db.write() as session:
                        return await jobs.create(
                            session,
                            new,
                            settings=app_settings,
                            now=self.now,
                            idempotency_key=key,
                            request_fingerprint=jobs.fingerprint("echo", payload),
                        )
                except (InsufficientCredits, Conflict):
                    return None

            created = self.run(work())
            if created is not None and key is not None:
                assert self.keys.setdefault(key, created.job.id) == created.job.id

        @rule(pick=st.integers(0, 100))
        def cancel(self, pick: int) -> None:
            all_jobs = self.run(self._jobs())
            if not all_jobs:
                return
            job = all_jobs[pick % len(all_jobs)]

            async def work() -> None:
                try:
                    async with self.db.write() as session:
                        await jobs.cancel(
                            session, account_id=self.account_id, job_id=job.id, now=self.now
                        )
                except Conflict:
                    assert job.status != JobStatus.QUEUED

            self.run(work())

        @rule()
        def claim(self) -> None:
            async def work() -> None:
                async with self.db.write() as session:
                    await queue.claim(
                        session, worker_id="w", now=self.now, lease=timedelta(seconds=15)
                    )

            self.run(work())

        @rule(succeed=st.booleans(), pick=st.integers(0, 100))
        def finish(self, succeed: bool, pick: int) -> None:
            running = self.run(self._jobs(JobStatus.RUNNING))
            if not running:
                return
            job = running[pick % len(running)]

            async def work() -> None:
                async with self.db.write() as session:
                    if succeed:
                        await jobs.succeed(
                            session, job_id=job.id, worker_id="w", result={}, now=self.now
                        )
                    else:
                        await jobs.fail(
                            session,
                            job_id=job.id,
                            worker_id="w",
                            code=400,
                            message="no",
                            now=self.now,
                        )

            self.run(work())

        @rule(seconds=st.sampled_from([5, 16, 61]))
        def time_passes_and_reaper_runs(self, seconds: int) -> None:
            self.now += timedelta(seconds=seconds)

            async def work() -> None:
                async with self.db.write() as session:
                    await jobs.reap(session, now=self.now, settings=app_settings)

            self.run(work())

        @invariant()
        def money_is_exact(self) -> None:
            async def work() -> tuple[int, int, list[Job], dict[str, int]]:
                async with self.db.read() as session:
                    balance = await session.scalar(
                        select(Account.balance).where(Account.id == self.account_id)
                    )
                    total = await session.scalar(
                        select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
                            LedgerEntry.account_id == self.account_id
                        )
                    )
                    refunds = dict(
                        (
                            await session.execute(
                                select(LedgerEntry.reference, LedgerEntry.amount).where(
                                    LedgerEntry.account_id == self.account_id,
                                    LedgerEntry.reason == "refund",
                                )
                            )
                        ).all()
                    )
                assert balance is not None
                assert total is not None
                return balance, int(total), await self._jobs(), refunds

            balance, total, all_jobs, refunds = self.run(work())
            assert balance == total >= 0
            for job in all_jobs:
                refunded = f"refund:{job.reservation_id}" in refunds
                ended_badly = job.status in (JobStatus.FAILED, JobStatus.CANCELED)
                assert refunded == ended_badly == job.credits_refunded, job.status
                assert job.attempts <= jobs.MAX_ATTEMPTS
            assert len(refunds) == sum(
                1 for job in all_jobs if job.status in (JobStatus.FAILED, JobStatus.CANCELED)
            )
            charged = sum(1 for job in all_jobs if not job.credits_refunded)
            assert balance == 10 - charged

    run_state_machine_as_test(
        Jobs,
        settings=settings(
            max_examples=12,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )
