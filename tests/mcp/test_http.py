"""The ``/mcp`` endpoint of a running ``toolrun serve``, driven by the ``mcp`` SDK's client."""

from __future__ import annotations

import asyncio
import base64
from datetime import datetime

import httpx
import pytest
from mcp import MCPError

from tests.client.server import Server, closed_udp_port
from tests.mcp.kit import (
    CATALOG,
    EXAMPLE_A,
    ProgressLog,
    bearer,
    over_http,
    png,
    structured,
    texts,
)
from toolrun.client import AsyncClient
from toolrun.mcp.uploads import MAX_INLINE_BYTES
from toolrun.tools.registry import default_definitions

pytestmark = pytest.mark.slow

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize(("mode", "header"), [("auto", "Authorization"), ("legacy", "X-API-Key")])
async def test_lists_every_catalog_action_and_calls_with_the_request_key(
    server: Server, shared_key: str, mode: str, header: str
) -> None:
    value = f"Bearer {shared_key}" if header == "Authorization" else shared_key
    async with over_http(server, {header: value}, mode) as client:
        listed = await client.list_tools()
        credits = await client.call_tool("credits", {})
    assert not credits.is_error, texts(credits)
    assert structured(credits)["balance"] >= 0
    assert [tool.name for tool in listed.tools] == [
        *CATALOG,
        "upload-image",
        "credits",
        "credits-check-in",
    ]
    schemas = {tool.name: tool.input_schema for tool in listed.tools}
    for definition in default_definitions():
        assert schemas[definition.slug] == definition.input_model.model_json_schema(by_alias=True)


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "A valid API key is required"),
        ({"Authorization": "Basic dXNlcjpwYXNz"}, "Authorization header must be `Bearer"),
        ({"Authorization": "Bearer not-a-key"}, "API key is malformed"),
        ({"X-API-Key": "trk_" + "B" * 43}, "API key is not valid"),
    ],
)
async def test_a_request_without_a_valid_key_gets_401_in_the_error_envelope(
    server: Server, headers: dict[str, str], message: str
) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        response = await http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert body["code"] == 401
    assert body["message"].startswith(message)
    assert body["data"]["path"] == "/mcp"
    assert datetime.fromisoformat(body["data"]["timestamp"].replace("Z", "+00:00"))


async def test_the_sdk_client_cannot_connect_without_a_key(server: Server) -> None:
    with pytest.raises(ExceptionGroup) as caught:
        async with over_http(server, {}) as client:
            await client.list_tools()
    assert caught.group_contains(MCPError, depth=None)


async def test_a_keyed_request_counts_toward_the_rate_limit(server: Server, api_key: str) -> None:
    async with httpx.AsyncClient(base_url=server.base_url) as http:
        first = await http.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(api_key)})
        second = await http.post(
            "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(api_key)}
        )
    assert first.status_code == second.status_code == 200
    remaining = [int(r.headers["x-ratelimit-remaining"]) for r in (first, second)]
    if first.headers["x-ratelimit-reset"] == second.headers["x-ratelimit-reset"]:
        assert remaining[1] == remaining[0] - 1
    else:  # a new minute began in between: the second request is its first
        assert remaining[1] == int(second.headers["x-ratelimit-limit"]) - 1


async def test_a_lookup_charges_one_credit_and_a_failed_one_is_refunded(
    server: Server, api_key: str
) -> None:
    silent = f"127.0.0.1:{closed_udp_port()}"
    progress = ProgressLog()
    async with over_http(server, bearer(api_key)) as client:
        succeeded, failed = await asyncio.gather(
            client.call_tool(
                "dns-lookup",
                {"domain": "example.test", "types": ["A"]},
                progress_callback=progress,
            ),
            client.call_tool(
                "dns-lookup", {"domain": "example.test", "types": ["A"], "nameservers": [silent]}
            ),
        )
    assert not succeeded.is_error, texts(succeeded)
    done = structured(succeeded)
    assert done["result"]["records"] == [EXAMPLE_A]
    assert progress.seen, "no progress notification while the job was polled"
    assert "checking again in 6 s" in (progress.seen[0][2] or "")

    assert failed.is_error
    refused = structured(failed)
    assert refused["error"]["code"] == 400
    assert refused["job"]["creditsRefunded"] is True
    assert "credit was refunded" in texts(failed)

    async with AsyncClient(server.base_url, api_key) as api:
        summary = await api.credits()
        history = await api.history()
        jobs = {job.id: job for job in await api.jobs()}
    assert summary.balance == 9
    assert jobs[done["job"]["id"]].status == "succeeded"
    assert jobs[refused["job"]["id"]].credits_refunded
    reasons = [entry.reason for entry in history.items]
    assert (reasons.count("tool_use"), reasons.count("refund")) == (2, 1)


async def test_input_the_api_refuses_is_a_tool_error_and_costs_nothing(
    server: Server, api_key: str
) -> None:
    async with over_http(server, bearer(api_key)) as client:
        result = await client.call_tool("dns-lookup", {"domain": "example.test", "types": []})
        balance = structured(await client.call_tool("credits", {}))["balance"]
    assert result.is_error
    error = structured(result)["error"]
    assert error["code"] == 400
    assert [item["field"] for item in error["errors"]] == ["types"]
    assert "Nothing was charged" in texts(result)
    assert balance == 10


async def test_upload_image_answers_the_asset_with_links_to_its_file(
    server: Server, shared_key: str
) -> None:
    content = png()
    async with over_http(server, bearer(shared_key)) as client:
        uploaded = await client.call_tool(
            "upload-image",
            {"fileName": "noise.png", "contentBase64": base64.b64encode(content).decode()},
        )
    assert not uploaded.is_error, texts(uploaded)
    asset = structured(uploaded)
    assert (asset["kind"], asset["fileName"], asset["width"]) == ("uploaded", "noise.png", 48)
    assert asset["downloadUrl"] == server.base_url + asset["downloadPath"]
    assert asset["previewUrl"] == server.base_url + asset["previewPath"]
    async with httpx.AsyncClient(headers=bearer(shared_key)) as http:
        downloaded = await http.get(asset["downloadUrl"])
    assert downloaded.content == content


async def test_an_image_action_answers_the_generated_asset_with_its_download_url(
    server: Server, shared_key: str
) -> None:
    async with over_http(server, bearer(shared_key)) as client:
        source = structured(
            await client.call_tool(
                "upload-image",
                {"fileName": "noise.png", "contentBase64": base64.b64encode(png()).decode()},
            )
        )
        converted = await client.call_tool(
            "image-convert", {"taskId": source["taskId"], "format": "webp"}
        )
    assert not converted.is_error, texts(converted)
    generated = structured(converted)["result"]
    assert (generated["kind"], generated["mimeType"]) == ("generated", "image/webp")
    assert generated["sourceTaskId"] == source["taskId"]
    assert generated["downloadUrl"] == server.base_url + generated["downloadPath"]
    assert generated["downloadUrl"] in texts(converted)
    async with httpx.AsyncClient(headers=bearer(shared_key)) as http:
        webp = await http.get(generated["downloadUrl"])
    assert (webp.content[:4], webp.content[8:12]) == (b"RIFF", b"WEBP")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not base64!", "not valid base64"),
        (base64.b64encode(b"\0" * (MAX_INLINE_BYTES + 3)).decode(), "String should have at most"),
        (base64.b64encode(b"\0" * (MAX_INLINE_BYTES + 1)).decode(), "at most 524288 bytes"),
    ],
)
async def test_upload_image_refuses_content_that_is_not_base64_or_too_large(
    server: Server, shared_key: str, content: str, message: str
) -> None:
    async with over_http(server, bearer(shared_key)) as client:
        result = await client.call_tool(
            "upload-image", {"fileName": "x.png", "contentBase64": content}
        )
    assert result.is_error
    [error] = structured(result)["error"]["errors"]
    assert error["field"] == "contentBase64"
    assert message in error["message"]


async def test_credits_and_the_daily_check_in(server: Server, api_key: str) -> None:
    async with over_http(server, bearer(api_key)) as client:
        before = await client.call_tool("credits", {})
        first = await client.call_tool("credits-check-in", {})
        again = await client.call_tool("credits-check-in", {})
        extra = await client.call_tool("credits", {"page": 2})
    summary = structured(before)
    assert (summary["balance"], summary["checkedInToday"]) == (10, False)
    assert "Balance: 10 credits" in texts(before)
    granted = structured(first)
    assert (granted["granted"], granted["balance"], granted["checkedInToday"]) == (True, 20, True)
    assert "Granted 10 credits" in texts(first)
    assert (structured(again)["granted"], structured(again)["balance"]) == (False, 20)
    assert extra.is_error
    assert structured(extra)["error"]["errors"][0]["field"] == "page"
