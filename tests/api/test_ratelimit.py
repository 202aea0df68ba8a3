from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import Clock
from tests.factories import create_account
from toolrun.api.app import create_app
from toolrun.config import Settings
from toolrun.core import ratelimit
from toolrun.db.engine import Database
from toolrun.db.tables import RateLimitWindow


@pytest.fixture
async def limited(
    settings: Settings, db: Database, clock: Clock
) -> AsyncIterator[httpx.AsyncClient]:
    limited_settings = settings.model_copy(update={"rate_limit_per_minute": 3})
    app: FastAPI = create_app(limited_settings, clock=clock, database=db)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://toolrun.test") as client:
        yield client


async def test_the_fourth_request_in_a_minute_gets_429_with_retry_after(
    limited: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    clock.now = datetime(2026, 3, 2, 4, 0, 15, 500_000, tzinfo=UTC)
    account = await create_account(db, settings)
    responses = [await limited.get("/openapi/credits", headers=account.headers) for _ in range(4)]
    assert [r.status_code for r in responses] == [200, 200, 200, 429]
    assert [r.headers["X-RateLimit-Remaining"] for r in responses] == ["2", "1", "0", "0"]
    refused = responses[-1]
    assert refused.headers["Retry-After"] == "45"
    assert refused.headers["X-RateLimit-Limit"] == "3"
    assert refused.headers["X-RateLimit-Reset"] == str(
        int(datetime(2026, 3, 2, 4, 1, tzinfo=UTC).timestamp())
    )
    assert refused.json()["code"] == 429
    assert "retry after 45 s" in refused.json()["message"]


async def test_retry_after_is_at_least_one_second_at_the_end_of_a_minute(
    limited: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    clock.now = datetime(2026, 3, 2, 4, 0, 59, 999_000, tzinfo=UTC)
    account = await create_account(db, settings)
    for _ in range(3):
        await limited.get("/openapi/credits", headers=account.headers)
    refused = await limited.get("/openapi/credits", headers=account.headers)
    assert refused.headers["Retry-After"] == "1"


async def test_a_new_calendar_minute_opens_a_new_window(
    limited: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    clock.now = datetime(2026, 3, 2, 4, 0, 59, tzinfo=UTC)
    account = await create_account(db, settings)
    for _ in range(4):
        await limited.get("/openapi/credits", headers=account.headers)
    clock.now = datetime(2026, 3, 2, 4, 1, 0, tzinfo=UTC)
    response = await limited.get("/openapi/credits", headers=account.headers)
    assert response.status_code == 200
    assert response.headers["X-RateLimit-Remaining"] == "2"


async def test_invalid_requests_count_and_unauthenticated_ones_do_not(
    limited: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    bad = await limited.get("/openapi/credits/history?page=0", headers=account.headers)
    assert bad.status_code == 400
    assert bad.headers["X-RateLimit-Remaining"] == "2"
    for _ in range(5):
        assert (await limited.get("/openapi/credits")).status_code == 401
    ok = await limited.get("/openapi/credits", headers=account.headers)
    assert ok.headers["X-RateLimit-Remaining"] == "1"


async def test_all_keys_of_an_account_share_one_limit(
    limited: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    from tests.factories import create_key

    account = await create_account(db, settings)
    other = await create_key(db, account_id=account.id)
    await limited.get("/openapi/credits", headers=account.headers)
    await limited.get("/openapi/credits", headers={"X-API-Key": other.raw})
    await limited.get("/openapi/credits", headers=account.headers)
    refused = await limited.get("/openapi/credits", headers={"X-API-Key": other.raw})
    assert refused.status_code == 429


async def test_concurrent_requests_never_exceed_the_limit(
    limited: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    import asyncio

    account = await create_account(db, settings)
    responses = await asyncio.gather(
        *(limited.get("/openapi/credits", headers=account.headers) for _ in range(12))
    )
    assert sorted(r.status_code for r in responses) == [200] * 3 + [429] * 9


async def test_the_key_is_checked_and_counted_before_the_body_is_read(
    limited: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    broken = {"Content-Type": "application/json"}
    path = "/openapi/tools/dns-lookup/execute"
    unkeyed = await limited.post(path, content=b"{not json", headers=broken)
    assert unkeyed.status_code == 401
    keyed = await limited.post(path, content=b"{not json", headers={**account.headers, **broken})
    assert keyed.status_code == 400
    assert keyed.headers["X-RateLimit-Remaining"] == "2"
    for _ in range(2):
        await limited.get("/openapi/credits", headers=account.headers)
    over = await limited.post(path, content=b"{not json", headers={**account.headers, **broken})
    assert over.status_code == 429
    share = await limited.post("/openapi/mermaid/share", content=b"--x\r\n", headers=broken)
    assert share.status_code == 401


async def test_counted_windows_read_back_and_are_purged_when_over(
    limited: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    """SQLite counts through its own compiled statement: its rows must be the ORM's rows."""
    clock.now = datetime(2026, 3, 2, 4, 0, 15, tzinfo=UTC)
    account = await create_account(db, settings)
    await limited.get("/openapi/credits", headers=account.headers)
    async with db.read() as session:
        windows = list(await session.scalars(select(RateLimitWindow)))
    assert [(w.account_id, w.window_start, w.count) for w in windows] == [
        (account.id, datetime(2026, 3, 2, 4, 0, tzinfo=UTC), 1)
    ]
    async with db.write() as session:
        kept = await ratelimit.purge_old_windows(session, now=clock.now + timedelta(seconds=60))
        purged = await ratelimit.purge_old_windows(session, now=clock.now + timedelta(minutes=2))
    assert (kept, purged) == (0, 1)
