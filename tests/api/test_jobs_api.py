"""The jobs API: creation, reading, listing, cancel, idempotency, and their credit effects."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import httpx
import pytest

from tests.conftest import Clock
from tests.factories import AccountWithKey, create_account
from tests.jobkit import job_row, money
from toolrun.config import Settings
from toolrun.db.engine import Database

EXECUTE = "/openapi/tools/echo/execute"
JOB_FIELDS = {
    "id", "kind", "action", "status", "result", "error", "creditCost", "creditsRefunded",
    "attempts", "createdAt", "startedAt", "completedAt", "deadlineAt", "pollAfterMs", "statusUrl",
}  # fmt: skip


@pytest.fixture
async def account(db: Database, settings: Settings) -> AccountWithKey:
    return await create_account(db, settings)


async def test_create_answers_202_with_the_job_and_credit_headers(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey, clock: Clock
) -> None:
    response = await client.post(EXECUTE, json={"value": "hi"}, headers=account.headers)
    assert response.status_code == 202
    assert response.headers["X-Credits-Balance"] == "9"
    assert response.headers["X-Credits-Cost"] == "1"
    job = response.json()["data"]
    assert set(job) == JOB_FIELDS
    assert (job["kind"], job["action"], job["status"]) == ("tool", "echo", "queued")
    assert (job["result"], job["error"], job["attempts"]) == (None, None, 0)
    assert (job["creditCost"], job["creditsRefunded"]) == (1, False)
    assert job["startedAt"] is None
    assert job["completedAt"] is None
    assert job["createdAt"] == "2026-03-02T04:00:30.000Z"
    assert job["deadlineAt"] == "2026-03-02T04:01:30.000Z"
    assert job["pollAfterMs"] == 6000
    assert job["statusUrl"] == f"/openapi/jobs/{job['id']}"
    uuid.UUID(job["id"])
    balance, total, reasons = await money(db, account.id)
    assert (balance, total, reasons) == (9, 9, {"signup": 1, "tool_use": 1})


async def test_generic_create_is_the_same_operation(
    client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    response = await client.post(
        "/openapi/jobs",
        json={"kind": "tool", "action": "echo", "payload": {"value": "x"}},
        headers=account.headers,
    )
    assert response.status_code == 202
    assert response.json()["data"]["action"] == "echo"


@pytest.mark.parametrize(
    ("path", "payload", "field"),
    [
        (EXECUTE, {}, "value"),
        (EXECUTE, {"value": ""}, "value"),
        (EXECUTE, {"value": "x", "sleep": -1}, "sleep"),
        ("/openapi/jobs", {"kind": "tool", "action": "nope", "payload": {}}, "action"),
        ("/openapi/jobs", {"kind": "video", "action": "echo", "payload": {}}, "kind"),
        ("/openapi/jobs", {"kind": "tool", "action": "", "payload": {}}, "action"),
        ("/openapi/jobs", {"kind": "tool", "action": "echo", "payload": {}}, "payload.value"),
        ("/openapi/jobs", {"kind": "tool", "action": "echo"}, "payload"),
        ("/openapi/jobs", {"kind": "tool", "action": "echo", "payload": []}, "payload"),
        ("/openapi/tools/dns-lookup/execute", {"domain": "x..y", "types": ["A"]}, "domain"),
        ("/openapi/tools/dns-lookup/execute", {"domain": "a.test", "types": []}, "types"),
    ],
)
async def test_invalid_input_is_400_with_no_job_and_no_charge(
    client: httpx.AsyncClient,
    db: Database,
    account: AccountWithKey,
    path: str,
    payload: dict[str, object],
    field: str,
) -> None:
    response = await client.post(path, json=payload, headers=account.headers)
    assert response.status_code == 400, response.text
    errors = response.json()["data"]["errors"]
    assert field in [error["field"] for error in errors], errors
    listed = await client.get("/openapi/jobs", headers=account.headers)
    assert listed.json()["data"]["items"] == []
    assert (await money(db, account.id))[0] == 10


async def test_body_that_is_not_json_is_400(
    client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    response = await client.post(
        EXECUTE,
        content=b"{not json",
        headers={**account.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert "not valid JSON" in response.json()["message"]
    assert response.json()["data"]["errors"][0]["field"] == "body"


async def test_no_credits_is_402_and_no_job(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    for _ in range(10):
        assert (
            await client.post(EXECUTE, json={"value": "x"}, headers=account.headers)
        ).status_code == 202
    refused = await client.post(EXECUTE, json={"value": "x"}, headers=account.headers)
    assert refused.status_code == 402
    assert "not enough credits" in refused.json()["message"]
    listed = (await client.get("/openapi/jobs", headers=account.headers)).json()["data"]["items"]
    assert len(listed) == 10
    assert (await money(db, account.id))[:2] == (0, 0)


async def test_anonymous_account_past_its_allowance_gets_402_registration_required(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    anonymous = await create_account(db, settings, anonymous=True)
    for _ in range(3):
        await client.post(EXECUTE, json={"value": "x"}, headers=anonymous.headers)
    refused = await client.post(EXECUTE, json={"value": "x"}, headers=anonymous.headers)
    assert refused.status_code == 402
    assert "register" in refused.json()["message"]


async def test_jobs_are_visible_only_to_their_account(
    client: httpx.AsyncClient, db: Database, settings: Settings, account: AccountWithKey
) -> None:
    other = await create_account(db, settings)
    job = (await client.post(EXECUTE, json={"value": "x"}, headers=account.headers)).json()["data"]
    mine = await client.get(f"/openapi/jobs/{job['id']}", headers=account.headers)
    theirs = await client.get(f"/openapi/jobs/{job['id']}", headers=other.headers)
    cancel = await client.post(f"/openapi/jobs/{job['id']}/cancel", headers=other.headers)
    assert mine.status_code == 200
    assert theirs.status_code == cancel.status_code == 404
    assert (await client.get("/openapi/jobs", headers=other.headers)).json()["data"]["items"] == []


@pytest.mark.parametrize(
    "job_id", ["2f1c3b7e-8a5d-4c1e-9b2a-6d7e8f901234", "not-a-uuid", "1' OR '1'='1", "%00"]
)
async def test_unknown_or_malformed_job_ids_are_404(
    client: httpx.AsyncClient, account: AccountWithKey, job_id: str
) -> None:
    response = await client.get(f"/openapi/jobs/{job_id}", headers=account.headers)
    assert response.status_code == 404
    assert response.json()["code"] == 404


async def test_list_is_the_latest_50_newest_first(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey, clock: Clock
) -> None:
    from toolrun.core import credits

    async with db.write() as session:
        await credits.grant(
            session,
            account_id=account.id,
            amount=60,
            reason=credits.Reason.DAILY_CHECKIN,
            reference="test-grant",
            now=clock.now,
        )
    ids = []
    for _ in range(55):
        clock.advance(seconds=1)
        response = await client.post(EXECUTE, json={"value": "x"}, headers=account.headers)
        ids.append(response.json()["data"]["id"])
    items = (await client.get("/openapi/jobs", headers=account.headers)).json()["data"]["items"]
    assert [item["id"] for item in items] == list(reversed(ids))[:50]


async def test_cancel_a_queued_job_refunds_exactly_once(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    job = (await client.post(EXECUTE, json={"value": "x"}, headers=account.headers)).json()["data"]
    canceled = await client.post(f"/openapi/jobs/{job['id']}/cancel", headers=account.headers)
    assert canceled.status_code == 200
    data = canceled.json()["data"]
    assert data["status"] == "canceled"
    assert data["error"] == {"code": 409, "message": "job canceled; credit refunded"}
    assert data["creditsRefunded"] is True
    assert data["completedAt"] is not None
    again = await client.post(f"/openapi/jobs/{job['id']}/cancel", headers=account.headers)
    assert again.status_code == 409
    assert "canceled" in again.json()["message"]
    balance, total, reasons = await money(db, account.id)
    assert (balance, total, reasons["refund"]) == (10, 10, 1)
    row = await job_row(db, job["id"])
    async with db.read() as session:
        from sqlalchemy import select

        from toolrun.db.tables import LedgerEntry

        refund = await session.scalar(
            select(LedgerEntry).where(LedgerEntry.reference == f"refund:{row.reservation_id}")
        )
    assert refund is not None
    assert refund.amount == 1


async def test_concurrent_cancels_refund_once(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    job = (await client.post(EXECUTE, json={"value": "x"}, headers=account.headers)).json()["data"]
    responses = await asyncio.gather(
        *(
            client.post(f"/openapi/jobs/{job['id']}/cancel", headers=account.headers)
            for _ in range(6)
        )
    )
    assert sorted(r.status_code for r in responses) == [200] + [409] * 5
    assert (await money(db, account.id))[2]["refund"] == 1


async def test_idempotent_replay_returns_the_job_without_a_second_charge(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    headers = {**account.headers, "Idempotency-Key": "order-42"}
    first = await client.post(EXECUTE, json={"value": "x"}, headers=headers)
    replay = await client.post(EXECUTE, json={"value": "x"}, headers=headers)
    generic = await client.post(
        "/openapi/jobs",
        json={"kind": "tool", "action": "echo", "payload": {"value": "x"}},
        headers=headers,
    )
    assert first.status_code == replay.status_code == generic.status_code == 202
    assert first.json()["data"]["id"] == replay.json()["data"]["id"] == generic.json()["data"]["id"]
    assert "Idempotent-Replayed" not in first.headers
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["X-Credits-Balance"] == "9"
    assert (await money(db, account.id))[0] == 9


async def test_replay_shows_the_current_state_of_the_job(
    client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    headers = {**account.headers, "Idempotency-Key": "k"}
    job = (await client.post(EXECUTE, json={"value": "x"}, headers=headers)).json()["data"]
    await client.post(f"/openapi/jobs/{job['id']}/cancel", headers=account.headers)
    replay = await client.post(EXECUTE, json={"value": "x"}, headers=headers)
    assert replay.json()["data"]["status"] == "canceled"


async def test_same_key_with_another_request_is_409(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    headers = {**account.headers, "Idempotency-Key": "k"}
    await client.post(EXECUTE, json={"value": "x"}, headers=headers)
    other = await client.post(EXECUTE, json={"value": "y"}, headers=headers)
    assert other.status_code == 409
    assert "different request" in other.json()["message"]
    assert (await money(db, account.id))[0] == 9


async def test_keys_are_per_account_and_expire_after_24_hours(
    client: httpx.AsyncClient,
    db: Database,
    settings: Settings,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    other = await create_account(db, settings)
    first = await client.post(
        EXECUTE, json={"value": "x"}, headers={**account.headers, "Idempotency-Key": "k"}
    )
    theirs = await client.post(
        EXECUTE, json={"value": "x"}, headers={**other.headers, "Idempotency-Key": "k"}
    )
    assert first.json()["data"]["id"] != theirs.json()["data"]["id"]
    clock.advance(hours=24)
    later = await client.post(
        EXECUTE, json={"value": "x"}, headers={**account.headers, "Idempotency-Key": "k"}
    )
    assert later.status_code == 202
    assert later.json()["data"]["id"] != first.json()["data"]["id"]


@pytest.mark.parametrize("key", ["k" * 129, ""])
async def test_bad_idempotency_keys_are_400(
    client: httpx.AsyncClient, account: AccountWithKey, key: str
) -> None:
    response = await client.post(
        EXECUTE, json={"value": "x"}, headers={**account.headers, "Idempotency-Key": key}
    )
    assert response.status_code == 400
    assert response.json()["data"]["errors"][0]["field"] == "Idempotency-Key"


async def test_concurrent_first_uses_of_a_key_create_one_job(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    headers = {**account.headers, "Idempotency-Key": "race"}
    responses = await asyncio.gather(
        *(client.post(EXECUTE, json={"value": "x"}, headers=headers) for _ in range(8))
    )
    assert {r.status_code for r in responses} == {202}
    assert len({r.json()["data"]["id"] for r in responses}) == 1
    assert (await money(db, account.id))[0] == 9


async def test_3n_concurrent_creations_on_a_balance_of_n_make_n_jobs(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    responses = await asyncio.gather(
        *(client.post(EXECUTE, json={"value": "x"}, headers=account.headers) for _ in range(30))
    )
    assert sorted(r.status_code for r in responses) == [202] * 10 + [402] * 20
    balance, total, reasons = await money(db, account.id)
    assert (balance, total, reasons["tool_use"]) == (0, 0, 10)


async def test_catalog_lists_every_tool_with_schemas(
    client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    items = (await client.get("/openapi/tools", headers=account.headers)).json()["data"]["items"]
    dns = next(item for item in items if item["slug"] == "dns-lookup")
    assert dns["path"] == "/openapi/tools/dns-lookup/execute"
    assert (dns["method"], dns["category"], dns["creditCost"]) == ("POST", "domain", 1)
    assert "types" in dns["inputSchema"]["properties"]
    assert "records" in dns["outputSchema"]["properties"]
    detail = (await client.get("/openapi/tools/dns-lookup", headers=account.headers)).json()
    assert detail["data"]["example"]["domain"] == "example.com"
    missing = await client.get("/openapi/tools/nope", headers=account.headers)
    assert missing.status_code == 404


async def test_openapi_documents_each_execute_route_with_its_body(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()
    route = document["paths"]["/openapi/tools/dns-lookup/execute"]["post"]
    schema_ref = route["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert schema_ref.endswith("DnsLookupInput")
    assert "202" in route["responses"]
    assert {"/openapi/jobs", "/openapi/jobs/{job_id}", "/openapi/jobs/{job_id}/cancel"} <= set(
        document["paths"]
    )
    assert not any(path.startswith("/openapi/v1") for path in document["paths"])


async def test_v1_aliases_create_and_read_jobs(
    client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    created = await client.post(
        "/openapi/v1/tools/toolrun/echo-v1/execute", json={"value": "x"}, headers=account.headers
    )
    assert created.status_code == 202
    job = created.json()["data"]
    assert job["statusUrl"] == f"/openapi/jobs/{job['id']}"
    read = await client.get(f"/openapi/v1/jobs/{job['id']}", headers=account.headers)
    assert read.json()["data"]["id"] == job["id"]
    dns = await client.post(
        "/openapi/v1/tools/toolrun/dns/execute",
        json={"domain": "example.test", "type": "ALL"},
        headers=account.headers,
    )
    assert dns.status_code == 202
    assert dns.json()["data"]["action"] == "dns-lookup"


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/openapi/v1/tools/acme/dns/execute", 404),
        ("/openapi/v1/tools/toolrun/nope/execute", 404),
    ],
)
async def test_v1_unknown_vendor_or_tool_is_404(
    client: httpx.AsyncClient, account: AccountWithKey, path: str, status: int
) -> None:
    response = await client.post(
        path, json={"domain": "a.test", "type": "A"}, headers=account.headers
    )
    assert response.status_code == status


async def test_v1_dns_validates_its_own_body(
    client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    response = await client.post(
        "/openapi/v1/tools/toolrun/dns/execute",
        json={"domain": "example.test", "type": "BOGUS"},
        headers=account.headers,
    )
    assert response.status_code == 400
    assert response.json()["data"]["errors"][0]["field"] == "type"


def test_clock_fixture_is_fixed() -> None:
    assert Clock(datetime(2026, 1, 1, tzinfo=UTC))().year == 2026


async def test_a_secret_is_part_of_the_idempotency_fingerprint_but_never_stored(
    client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    from pathlib import Path

    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    test_key = (Path(__file__).parents[1] / "data/domain/domainconnect-test-key.pem").read_text()
    other_key = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )
    body = {
        "domain": "example.com",
        "host": "www",
        "providerId": "exampleservice.domainconnect.org",
        "serviceId": "template1",
        "syncUxUrl": "https://domainconnect.provider.example/sync",
        "keyName": "_dck1",
        "privateKey": test_key,
        "redirectUri": "https://app.example.net/connected",
        "params": [{"key": "IP", "value": "192.0.2.10"}],
    }
    headers = {**account.headers, "Idempotency-Key": "connect-1"}
    path = "/openapi/tools/domain-connect-link/execute"
    first = await client.post(path, json=body, headers=headers)
    assert first.status_code == 202, first.text
    other = await client.post(path, json={**body, "privateKey": other_key}, headers=headers)
    assert other.status_code == 409
    row = await job_row(db, first.json()["data"]["id"])
    assert "PRIVATE KEY" not in str(row.payload)
