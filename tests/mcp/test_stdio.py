"""``toolrun mcp`` as a subprocess, driven by the ``mcp`` SDK's client, against a real ``toolrun serve``."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.client.server import Server, closed_udp_port
from tests.mcp.kit import (
    CATALOG,
    EXAMPLE_A,
    ProgressLog,
    over_stdio,
    png,
    structured,
    texts,
)
from toolrun.client import AsyncClient
from toolrun.tools.registry import default_definitions

pytestmark = pytest.mark.slow

OWN_TOOLS = ["upload-file", "upload-image", "credits", "credits-check-in"]


async def test_lists_every_catalog_action_with_its_schema_and_the_own_tools(
    server: Server, shared_key: str, tmp_path: Path
) -> None:
    async with over_stdio(server, shared_key, tmp_path / "mcp.log") as client:
        listed = await client.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert [tool.name for tool in listed.tools] == [*CATALOG, *OWN_TOOLS]
    for definition in default_definitions():
        tool = tools[definition.slug]
        assert tool.input_schema == definition.input_model.model_json_schema(by_alias=True)
        assert tool.description is not None
        assert tool.description.startswith(definition.description)
        assert "1 credit" in tool.description
        assert tool.title == definition.name
    assert tools["upload-file"].input_schema["required"] == ["path"]


async def test_a_lookup_charges_one_credit_and_a_failed_one_is_refunded(
    server: Server, api_key: str, tmp_path: Path
) -> None:
    silent = f"127.0.0.1:{closed_udp_port()}"
    progress = ProgressLog()
    async with over_stdio(server, api_key, tmp_path / "mcp.log") as client:
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
        balance = structured(await client.call_tool("credits", {}))["balance"]

    assert not succeeded.is_error, texts(succeeded)
    done = structured(succeeded)
    assert done["result"]["records"] == [EXAMPLE_A]
    assert done["job"]["status"] == "succeeded"
    assert progress.seen, "no progress notification while the job was polled"
    assert [step for step, _, _ in progress.seen] == list(range(1, len(progress.seen) + 1))
    assert f"job {done['job']['id']} is queued" in (progress.seen[0][2] or "")

    assert failed.is_error
    refused = structured(failed)
    assert refused["error"]["code"] == 400
    assert refused["job"]["creditsRefunded"] is True
    assert "credit was refunded" in texts(failed)

    assert balance == 9
    async with AsyncClient(server.base_url, api_key) as api:
        history = await api.history()
    references = [entry.reference for entry in history.items if entry.reason == "tool_use"]
    assert sorted(references) == sorted(f"job:{r['job']['id']}" for r in (done, refused))
    assert [entry.reason for entry in history.items].count("refund") == 1


async def test_upload_file_sends_a_local_image_and_answers_its_asset(
    server: Server, shared_key: str, tmp_path: Path
) -> None:
    image = tmp_path / "noise.png"
    image.write_bytes(png())
    async with over_stdio(server, shared_key, tmp_path / "mcp.log") as client:
        uploaded = await client.call_tool("upload-file", {"path": str(image)})
        missing = await client.call_tool("upload-file", {"path": str(tmp_path / "nope.png")})

    assert not uploaded.is_error, texts(uploaded)
    asset = structured(uploaded)
    assert (asset["kind"], asset["mimeType"], asset["width"]) == ("uploaded", "image/png", 48)
    assert asset["downloadUrl"] == server.base_url + asset["downloadPath"]
    assert asset["taskId"] in texts(uploaded)
    assert not (tmp_path / "noise.png.toolrun-upload.json").exists()

    assert missing.is_error
    assert structured(missing)["error"]["errors"][0]["field"] == "path"


async def test_a_key_the_api_refuses_makes_tool_errors(server: Server, tmp_path: Path) -> None:
    unknown_key = "trk_" + "A" * 43
    async with over_stdio(server, unknown_key, tmp_path / "mcp.log") as client:
        result = await client.call_tool("credits", {})
    assert result.is_error
    assert structured(result)["error"] == {"code": 401, "message": "API key is not valid"}
    assert "refused" in texts(result)


def test_without_a_key_the_command_exits_with_a_message(server: Server) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolrun", "mcp"],
        env={"PATH": os.environ.get("PATH", ""), "TOOLRUN_BASE_URL": server.base_url},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "TOOLRUN_API_KEY" in done.stderr
    assert done.stdout == ""
