from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import create_account
from toolrun.config import Settings
from toolrun.db.engine import Database


async def test_unknown_path_is_404_in_the_envelope(client: httpx.AsyncClient) -> None:
    response = await client.get("/openapi/nothing-here")
    assert response.status_code == 404
    body = response.json()
    assert body["code"] == 404
    assert body["data"]["path"] == "/openapi/nothing-here"
    assert body["data"]["timestamp"].endswith("Z")


async def test_wrong_method_is_405_in_the_envelope(client: httpx.AsyncClient) -> None:
    response = await client.delete("/openapi/credits")
    assert response.status_code == 405
    assert response.json()["message"] == "method DELETE not allowed on /openapi/credits"
    assert "GET" in response.headers["allow"]


async def test_unexpected_exception_is_a_bare_500(app: FastAPI, client: httpx.AsyncClient) -> None:
    @app.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret internal detail /etc/passwd")

    response = await client.get("/boom")
    assert response.status_code == 500
    assert response.json()["message"] == "internal error"
    assert "secret" not in response.text
    assert "Traceback" not in response.text
    assert response.headers["X-Request-Id"]


async def test_every_response_has_a_request_id_and_keeps_a_sane_incoming_one(
    client: httpx.AsyncClient,
) -> None:
    generated = await client.get("/healthz")
    kept = await client.get("/healthz", headers={"X-Request-Id": "abc-123"})
    replaced = await client.get("/healthz", headers={"X-Request-Id": "bad id\twith spaces"})
    assert len(generated.headers["X-Request-Id"]) == 32
    assert kept.headers["X-Request-Id"] == "abc-123"
    assert replaced.headers["X-Request-Id"] != "bad id\twith spaces"


async def test_health_readiness_and_metrics(
    client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    account = await create_account(db, settings)
    credits = await client.get("/openapi/credits", headers=account.headers)
    assert credits.status_code == 200, credits.text
    assert (await client.get("/healthz")).json()["data"]["status"] == "ok"
    ready = (await client.get("/readyz")).json()["data"]
    assert ready["status"] == "ready"
    assert ready["database"] == db.dialect
    metrics = (await client.get("/metrics")).text
    assert (
        'toolrun_http_requests_total{method="GET",route="/openapi/credits",status="200"} 1.0'
        in metrics
    )
    assert "toolrun_http_request_duration_seconds_bucket" in metrics


async def test_openapi_document_has_version_2_and_the_credit_paths(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()
    assert document["info"]["version"] == "2.0.0"
    assert {"/openapi/credits", "/openapi/credits/check-in", "/openapi/credits/history"} <= set(
        document["paths"]
    )
    assert "/healthz" not in document["paths"]
    schemes = document["components"]["securitySchemes"]
    assert {"HTTPBearer", "APIKeyHeader"} <= set(schemes)


@pytest.mark.parametrize("path", ["/openapi/credits", "/openapi/credits/history"])
async def test_keyed_responses_carry_rate_limit_headers(
    client: httpx.AsyncClient, db: Database, settings: Settings, path: str
) -> None:
    account = await create_account(db, settings)
    response = await client.get(path, headers=account.headers)
    assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= set(
        response.headers
    )


async def test_an_oversized_json_body_is_413_before_it_is_read(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/openapi/jobs",
        content=b"{" + b" " * (2 * 1024 * 1024) + b"}",
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert response.json()["code"] == 413
    assert "over the limit" in response.json()["message"]
