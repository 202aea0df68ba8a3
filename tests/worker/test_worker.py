"""The worker end to end on both backends: outcomes, deadlines, the reaper and graceful stop."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import update

from tests.conftest import Clock
from tests.factories import AccountWithKey, create_account
from tests.jobkit import money, running_worker, wait_for_status
from toolrun.config import Settings
from toolrun.core import jobs
from toolrun.db import queue
from toolrun.db.engine import Database
from toolrun.db.tables import Job, JobStatus

EXECUTE = "/openapi/tools/echo/execute"


@pytest.fixture
async def account(db: Database, settings: Settings) -> AccountWithKey:
    return await create_account(db, settings)


async def submit(client: httpx.AsyncClient, account: AccountWithKey, **payload: object) -> str:
    response = await client.post(EXECUTE, json={"value": "hi", **payload}, headers=account.headers)
    assert response.status_code == 202, response.text
    job_id: str = response.json()["data"]["id"]
    return job_id


async def test_a_job_runs_and_succeeds_with_its_result(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    job_id = await submit(client, account)
    async with running_worker(settings, db, clock=clock):
        job = await wait_for_status(db, job_id)
    assert job.status == JobStatus.SUCCEEDED
    data = (await client.get(f"/openapi/jobs/{job_id}", headers=account.headers)).json()["data"]
    assert data["result"] == {"value": "hi"}
    assert (data["attempts"], data["error"], data["creditsRefunded"]) == (1, None, False)
    assert data["startedAt"] is not None
    assert data["completedAt"] is not None
    assert (await money(db, account.id))[:2] == (9, 9)


@pytest.mark.parametrize(
    ("payload", "code", "message"),
    [
        ({"fail": 400}, 400, "echo failed with 400"),
        ({"fail": 413}, 413, "echo failed with 413"),
        ({"crash": True}, 500, "internal error"),
    ],
)
async def test_a_failing_job_is_failed_with_one_refund(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
    payload: dict[str, object],
    code: int,
    message: str,
) -> None:
    job_id = await submit(client, account, **payload)
    async with running_worker(settings, db, clock=clock):
        await wait_for_status(db, job_id)
    data = (await client.get(f"/openapi/jobs/{job_id}", headers=account.headers)).json()["data"]
    assert data["status"] == "failed"
    assert data["error"] == {"code": code, "message": message}
    assert (data["creditsRefunded"], data["result"]) == (True, None)
    assert "/internal/path" not in str(data)
    balance, total, reasons = await money(db, account.id)
    assert (balance, total, reasons["refund"]) == (10, 10, 1)


async def test_a_tool_exception_does_not_stop_the_worker(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    crashing = await submit(client, account, crash=True)
    fine = await submit(client, account)
    async with running_worker(settings, db, clock=clock, concurrency=1):
        assert (await wait_for_status(db, crashing)).status == JobStatus.FAILED
        assert (await wait_for_status(db, fine)).status == JobStatus.SUCCEEDED


async def test_a_hanging_tool_is_stopped_at_its_deadline_with_a_refund(
    db: Database, settings: Settings, account: AccountWithKey, clock: Clock
) -> None:
    from fastapi import FastAPI

    from tests.jobkit import test_registry
    from toolrun.api.app import create_app

    short = settings.model_copy(update={"job_timeout_s": 0.5})
    app: FastAPI = create_app(short, clock=clock, database=db, registry=test_registry())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        job_id = await submit(client, account, sleep=30)
        async with running_worker(short, db, clock=clock):
            job = await wait_for_status(db, job_id, within_s=10)
    assert (job.status, job.error_code, job.credits_refunded) == (JobStatus.FAILED, 504, True)
    assert "deadline" in (job.error_message or "")
    assert (await money(db, account.id))[:2] == (10, 10)


async def test_reaper_fails_queued_jobs_past_their_deadline(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    job_id = await submit(client, account)
    clock.advance(seconds=61)
    async with db.write() as session:
        reaped = await jobs.reap(session, now=clock(), settings=settings)
    async with db.write() as session:
        again = await jobs.reap(session, now=clock(), settings=settings)
    assert (reaped.timed_out, again.timed_out) == (1, 0)
    data = (await client.get(f"/openapi/jobs/{job_id}", headers=account.headers)).json()["data"]
    assert data["status"] == "failed"
    assert data["error"]["code"] == 504
    assert data["creditsRefunded"] is True
    balance, _, reasons = await money(db, account.id)
    assert (balance, reasons["refund"]) == (10, 1)


async def claim(db: Database, clock: Clock, worker_id: str = "dead-worker") -> Job | None:
    async with db.write() as session:
        return await queue.claim(
            session, worker_id=worker_id, now=clock(), lease=timedelta(seconds=15)
        )


async def test_reaper_requeues_a_job_whose_worker_died_then_gives_up_after_three_starts(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    job_id = await submit(client, account)
    for attempt in (1, 2, 3):
        claimed = await claim(db, clock)
        assert claimed is not None
        assert (claimed.id, claimed.attempts) == (job_id, attempt)
        clock.advance(seconds=16)
        async with db.write() as session:
            reaped = await jobs.reap(session, now=clock(), settings=settings)
        expected = (0, 1) if attempt == 3 else (1, 0)
        assert (reaped.requeued, reaped.given_up) == expected
    data = (await client.get(f"/openapi/jobs/{job_id}", headers=account.headers)).json()["data"]
    assert (data["status"], data["attempts"], data["error"]["code"]) == ("failed", 3, 500)
    assert "interrupted 3 times" in data["error"]["message"]
    assert (await money(db, account.id))[2]["refund"] == 1


async def test_a_late_outcome_from_a_worker_that_lost_its_lease_is_ignored(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    job_id = await submit(client, account)
    assert await claim(db, clock, "first") is not None
    clock.advance(seconds=16)
    async with db.write() as session:
        await jobs.reap(session, now=clock(), settings=settings)
    assert await claim(db, clock, "second") is not None
    async with db.write() as session:
        late = await jobs.fail(
            session, job_id=job_id, worker_id="first", code=400, message="late", now=clock()
        )
        current = await jobs.succeed(
            session, job_id=job_id, worker_id="second", result={"value": "hi"}, now=clock()
        )
    assert (late, current) == (False, True)
    assert (await money(db, account.id))[2].get("refund", 0) == 0


async def test_a_running_job_cannot_be_canceled_and_a_finished_one_neither(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey, clock: Clock
) -> None:
    job_id = await submit(client, account)
    await claim(db, clock)
    running = await client.post(f"/openapi/jobs/{job_id}/cancel", headers=account.headers)
    assert running.status_code == 409
    assert "running" in running.json()["message"]
    async with db.write() as session:
        await jobs.succeed(session, job_id=job_id, worker_id="dead-worker", result={}, now=clock())
    done = await client.post(f"/openapi/jobs/{job_id}/cancel", headers=account.headers)
    assert done.status_code == 409
    assert "succeeded" in done.json()["message"]


async def test_stop_lets_running_jobs_finish_within_the_grace_period(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    job_id = await submit(client, account, sleep=0.5)
    async with running_worker(settings, db, clock=clock, shutdown_grace_s=10):
        await wait_for_status(db, job_id, {JobStatus.RUNNING})
    job = await wait_for_status(db, job_id, within_s=1)
    assert job.status == JobStatus.SUCCEEDED


async def test_stop_requeues_jobs_still_running_after_the_grace_period(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    job_id = await submit(client, account, sleep=30)
    async with running_worker(settings, db, clock=clock, shutdown_grace_s=0.2):
        await wait_for_status(db, job_id, {JobStatus.RUNNING})
    job = await wait_for_status(db, job_id, {JobStatus.QUEUED}, within_s=2)
    assert (job.attempts, job.worker_id, job.credits_refunded) == (1, None, False)
    assert (await money(db, account.id))[0] == 9


async def test_claims_never_hand_one_job_to_two_workers(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey, clock: Clock
) -> None:
    ids = {await submit(client, account) for _ in range(6)}
    claimed = await asyncio.gather(*(claim(db, clock, f"w{n}") for n in range(10)))
    got = [job.id for job in claimed if job is not None]
    assert sorted(got) == sorted(ids)


async def test_jobs_past_their_deadline_are_never_claimed(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey, clock: Clock
) -> None:
    await submit(client, account)
    clock.advance(seconds=60)
    assert await claim(db, clock) is None


async def test_lease_renewal_keeps_only_jobs_the_worker_holds(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey, clock: Clock
) -> None:
    mine = await submit(client, account)
    theirs = await submit(client, account)
    await claim(db, clock, "me")
    await claim(db, clock, "them")
    async with db.write() as session:
        held = await queue.renew_leases(
            session,
            job_ids=[mine, theirs],
            worker_id="me",
            now=clock(),
            lease=timedelta(seconds=15),
        )
        await session.execute(update(Job).where(Job.id == theirs).values(status="running"))
    assert held == {mine}
