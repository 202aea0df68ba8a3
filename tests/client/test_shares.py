"""Diagram shares through the client: synchronous, 1 credit."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from PIL import Image

from tests.client.server import Server
from toolrun.client import AsyncClient, BadRequest, Client, NotFound

pytestmark = pytest.mark.slow

CODE = "graph TD; A-->B"


def test_share_stores_the_code_and_image(server: Server, api_key: str, tmp_path: Path) -> None:
    image = tmp_path / "diagram.png"
    Image.new("RGB", (30, 20), "white").save(image)
    with Client(server.base_url, api_key) as client:
        created = client.share(CODE, image)
        read = client.get_share(created.id)
        balance = client.credits().balance
    assert (read.id, read.code, read.image_url) == (created.id, CODE, created.image_url)
    assert httpx.get(created.image_url).content == image.read_bytes()
    assert balance == 9


async def test_share_errors(server: Server, api_key: str, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not an image")
    async with AsyncClient(server.base_url, api_key) as client:
        with pytest.raises(BadRequest):
            await client.share(CODE, text)
        with pytest.raises(NotFound):
            await client.get_share("00000000-0000-4000-8000-000000000000")
        assert (await client.credits()).balance == 10
