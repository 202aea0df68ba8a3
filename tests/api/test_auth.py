from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.conftest import Clock
from tests.factories import create_account, create_key
from toolrun.config import Settings
from toolrun.core import keys
from toolrun.db.engine import Database


def assert_401(response: httpx.Response, message_part: str) -> None:
    assert response.status_code == 401
    body = response.json()
    assert body["code"] == 401
    assert message_part in body["message"]
    assert body["data"]["path"] == "/openapi/credits"
    assert "timestamp" in body["data"]


async def test_bearer_and_x_api_key_both_authenticate(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    bearer = await client.get(
        "/openapi/credits", headers={"Authorization": f"Bearer {account.key}"}
    )
    header = await client.get("/openapi/credits", headers={"X-API-Key": account.key})
    assert bearer.status_code == header.status_code == 200
    assert bearer.json()["data"]["balance"] == 10


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "API key is required"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "must be `Bearer"),
        ({"Authorization": "Bearer "}, "must be `Bearer"),
        ({"X-API-Key": "not-a-key"}, "malformed"),
        ({"X-API-Key": "trk_" + "A" * 43}, "not valid"),
        ({"Authorization": "Bearer trk_" + "x" * 42 + "!"}, "malformed"),
    ],
)
async def test_missing_malformed_or_unknown_keys_get_401(
    client: httpx.AsyncClient, headers: dict[str, str], message: str
) -> None:
    assert_401(await client.get("/openapi/credits", headers=headers), message)


async def test_cookies_never_authenticate(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    response = await client.get(
        "/openapi/credits", headers={"Cookie": f"session={account.key}; api_key={account.key}"}
    )
    assert_401(response, "API key is required")


async def test_revoked_key_gets_401(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    async with db.write() as session:
        await keys.revoke_key(session, key_id=account.key_id, now=datetime.now(UTC))
    assert_401(await client.get("/openapi/credits", headers=account.headers), "revoked")


async def test_expired_key_gets_401(
    client: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    account = await create_account(db, settings)
    made = await create_key(db, account_id=account.id, now=clock.now, expires_in_days=1)
    headers = {"X-API-Key": made.raw}
    assert (await client.get("/openapi/credits", headers=headers)).status_code == 200
    clock.advance(days=1)
    assert_401(await client.get("/openapi/credits", headers=headers), "expired")


async def test_disabled_account_gets_401(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings, disabled=True)
    assert_401(await client.get("/openapi/credits", headers=account.headers), "disabled")


async def test_keys_of_one_account_share_the_balance(
    client: httpx.AsyncClient, db: Database, settings: Settings, clock: Clock
) -> None:
    account = await create_account(db, settings)
    second = await create_key(db, account_id=account.id, now=clock.now - timedelta(seconds=1))
    await client.post("/openapi/credits/check-in", headers=account.headers)
    response = await client.get("/openapi/credits", headers={"X-API-Key": second.raw})
    assert response.json()["data"]["balance"] == 20


def test_keys_are_high_entropy_hashed_and_recognisable() -> None:
    assert keys.KEY_PATTERN.match("trk_" + "a" * 43)
    assert len(keys.hash_key("trk_x")) == 64
