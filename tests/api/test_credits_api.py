from __future__ import annotations

from datetime import UTC, datetime

import httpx

from tests.conftest import Clock
from tests.factories import create_account
from toolrun.config import Settings
from toolrun.core import credits
from toolrun.db.engine import Database


async def test_summary_of_a_registered_account(
    client: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    clock.now = datetime(2026, 5, 1, 15, 59, 59, tzinfo=UTC)
    account = await create_account(db, settings)
    response = await client.get("/openapi/credits", headers=account.headers)
    assert response.status_code == 200
    body = response.json()
    assert (body["code"], body["message"]) == (0, "ok")
    assert body["data"] == {
        "balance": 10,
        "isAnonymous": False,
        "anonymousSpent": 0,
        "anonymousSpendLimit": 0,
        "anonymousRemaining": None,
        "registrationRequired": False,
        "checkedInToday": False,
        "dailyReward": 10,
        "signupReward": 10,
        "toolCost": 1,
        "nextCheckInAt": "2026-05-01T16:00:00.000Z",
        "timeZone": "Asia/Shanghai",
    }


async def test_check_in_once_per_beijing_day(
    client: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    account = await create_account(db, settings)
    clock.now = datetime(2026, 5, 1, 15, 59, 58, tzinfo=UTC)
    first = (await client.post("/openapi/credits/check-in", headers=account.headers)).json()
    clock.now = datetime(2026, 5, 1, 15, 59, 59, tzinfo=UTC)
    again = (await client.post("/openapi/credits/check-in", headers=account.headers)).json()
    clock.now = datetime(2026, 5, 1, 16, 0, 0, tzinfo=UTC)
    next_day = (await client.post("/openapi/credits/check-in", headers=account.headers)).json()
    assert (first["data"]["granted"], first["data"]["balance"]) == (True, 20)
    assert first["data"]["checkedInToday"] is True
    assert (again["data"]["granted"], again["data"]["balance"]) == (False, 20)
    assert (next_day["data"]["granted"], next_day["data"]["balance"]) == (True, 30)
    assert next_day["data"]["nextCheckInAt"] == "2026-05-02T16:00:00.000Z"


async def test_anonymous_account_summary_and_check_in(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings, anonymous=True)
    summary = (await client.get("/openapi/credits", headers=account.headers)).json()["data"]
    assert summary["isAnonymous"] is True
    assert (summary["balance"], summary["anonymousSpendLimit"], summary["anonymousRemaining"]) == (
        3,
        3,
        3,
    )
    checked = (await client.post("/openapi/credits/check-in", headers=account.headers)).json()
    assert (checked["data"]["granted"], checked["data"]["balance"]) == (False, 3)


async def test_anonymous_account_at_its_limit_requires_registration(
    client: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    account = await create_account(db, settings, anonymous=True)
    async with db.write() as session:
        for n in range(3):
            await credits.reserve(
                session, account_id=account.id, reference=f"job:{n}", operation="x", now=clock.now
            )
    summary = (await client.get("/openapi/credits", headers=account.headers)).json()["data"]
    assert summary["registrationRequired"] is True
    assert (summary["anonymousSpent"], summary["anonymousRemaining"]) == (3, 0)


async def test_history_pages_newest_first(
    client: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    account = await create_account(db, settings)
    async with db.write() as session:
        for n in range(10):
            await credits.reserve(
                session, account_id=account.id, reference=f"job:{n}", operation="x", now=clock.now
            )
    for day in range(1, 15):
        clock.now = datetime(2026, 6, day, 1, tzinfo=UTC)
        await client.post("/openapi/credits/check-in", headers=account.headers)
    first = (await client.get("/openapi/credits/history", headers=account.headers)).json()["data"]
    second = (await client.get("/openapi/credits/history?page=2", headers=account.headers)).json()[
        "data"
    ]
    assert (len(first["items"]), first["hasMore"], first["page"]) == (20, True, 1)
    assert (len(second["items"]), second["hasMore"], second["page"]) == (5, False, 2)
    newest = first["items"][0]
    assert newest["reason"] == "daily_checkin"
    assert newest["balanceAfter"] == 140
    assert newest["userId"] == account.id
    assert set(newest) == {
        "id",
        "userId",
        "reason",
        "amount",
        "balanceAfter",
        "reference",
        "operation",
        "createdAt",
    }
    oldest = second["items"][-1]
    assert (oldest["reason"], oldest["amount"], oldest["balanceAfter"]) == ("signup", 10, 10)
    reservation = second["items"][-2]
    assert (reservation["reason"], reservation["reference"]) == ("tool_use", "job:0")


async def test_history_page_must_be_a_positive_integer(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    for page in ("0", "-1", "abc"):
        response = await client.get(
            f"/openapi/credits/history?page={page}", headers=account.headers
        )
        assert response.status_code == 400
        assert response.json()["data"]["errors"][0]["field"] == "page"
