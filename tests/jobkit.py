"""Test-only tools and helpers for driving jobs: an echo tool that can fail, raise or hang."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import func, select

from toolrun.config import Settings
from toolrun.core.clock import Clock, system_clock
from toolrun.db.engine import Database
from toolrun.db.tables import Account, Job, JobStatus, LedgerEntry
from toolrun.tools.base import ToolContext, ToolDefinition, ToolFailure
from toolrun.tools.registry import Registry, default_definitions
from toolrun.worker.loop import Worker

TERMINAL = {JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELED}


class EchoInput(BaseModel):
    value: str = Field(..., min_length=1, max_length=100)
    fail: int | None = Field(None, description="fail the job with this code")
    sleep: float = Field(0, ge=0, le=60)
    crash: bool = False


class EchoOutput(BaseModel):
    value: str


async def run_echo(payload: EchoInput, ctx: ToolContext) -> EchoOutput:
    if payload.sleep:
        await asyncio.sleep(payload.sleep)
    if payload.crash:
        raise RuntimeError("unexpected /internal/path detail")
    if payload.fail is not None:
        raise ToolFailure(payload.fail, f"echo failed with {payload.fail}")
    return EchoOutput(value=payload.value)


ECHO = ToolDefinition(
    slug="echo",
    kind="tool",
    action="echo",
    category="website",
    name="Echo",
    description="Test tool: returns its input, or fails, raises or sleeps on request.",
    input_model=EchoInput,
    output_model=EchoOutput,
    run=run_echo,
    example={"value": "hello"},
    aliases=("echo-v1",),
)


def test_registry() -> Registry:
    return Registry([*default_definitions(), ECHO])


@asynccontextmanager
async def running_worker(
    settings: Settings,
    db: Database,
    *,
    concurrency: int = 2,
    clock: Clock = system_clock,
    shutdown_grace_s: float = 5.0,
    services: dict[str, Any] | None = None,
) -> AsyncIterator[Worker]:
    worker = Worker(
        settings=settings,
        db=db,
        registry=test_registry(),
        concurrency=concurrency,
        clock=clock,
        poll_interval_s=0.05,
        shutdown_grace_s=shutdown_grace_s,
        services=services,
    )
    task = asyncio.create_task(worker.run())
    try:
        yield worker
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)


async def job_row(db: Database, job_id: str) -> Job:
    async with db.read() as session:
        job = await session.get(Job, job_id)
        assert job is not None
        return job


async def wait_for_status(
    db: Database, job_id: str, statuses: set[str] | None = None, within_s: float = 15
) -> Job:
    wanted = statuses or TERMINAL
    async with asyncio.timeout(within_s):
        while True:
            job = await job_row(db, job_id)
            if job.status in wanted:
                return job
            await asyncio.sleep(0.02)


async def money(db: Database, account_id: str) -> tuple[int, int, dict[str, int]]:
    """(balance, sum of ledger, count of ledger rows per reason) of one account."""
    async with db.read() as session:
        balance = await session.scalar(select(Account.balance).where(Account.id == account_id))
        total = await session.scalar(
            select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
                LedgerEntry.account_id == account_id
            )
        )
        rows = (
            await session.execute(
                select(LedgerEntry.reason, func.count())
                .where(LedgerEntry.account_id == account_id)
                .group_by(LedgerEntry.reason)
            )
        ).all()
    assert balance is not None
    assert total is not None
    return balance, int(total), {reason: count for reason, count in rows}


def body(**payload: Any) -> dict[str, Any]:
    return {"value": "hello", **payload}
