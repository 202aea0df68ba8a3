"""Chunked uploads against the real endpoints: whole, resumed after an interruption, downloaded."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import httpx
import pytest
from PIL import Image

from tests.client.server import Server
from toolrun.client import AsyncClient, Client

pytestmark = pytest.mark.slow

CHUNK = 4096


class Interrupted(Exception):
    """Stands for a crash or Ctrl-C in the middle of an upload."""


class RecordingTransport(httpx.HTTPTransport):
    """The real transport, noting each request's method and path."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, str]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, request.url.path))
        return super().handle_request(request)


def _noise_png(path: Path, side: int = 96) -> bytes:
    buffer = io.BytesIO()
    Image.effect_noise((side, side), 80).convert("RGB").save(buffer, format="PNG")
    path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


def _chunk_posts(transport: RecordingTransport) -> int:
    return sum(1 for method, path in transport.requests if path.endswith("/chunks"))


def test_upload_sends_every_chunk_and_returns_the_asset(
    server: Server, api_key: str, tmp_path: Path
) -> None:
    content = _noise_png(tmp_path / "noise.png")
    reported: list[tuple[int, int]] = []
    with Client(server.base_url, api_key) as client:
        asset = client.upload(
            tmp_path / "noise.png", CHUNK, progress=lambda s, t: reported.append((s, t))
        )
        meta = client.upload_meta(asset.task_id)
        saved = client.download(asset.task_id, "uploaded_source", tmp_path / "copy.png")
        into_dir = client.download(asset.task_id, dest=tmp_path)
        balance = client.credits().balance
    assert (asset.kind, asset.mime_type, asset.width, asset.height) == (
        "uploaded",
        "image/png",
        96,
        96,
    )
    assert asset.file_size == len(content)
    assert meta.task_id == asset.task_id
    assert saved.read_bytes() == content
    assert into_dir == tmp_path / "noise.png"
    assert reported[0] == (0, len(content))
    assert reported[-1] == (len(content), len(content))
    assert len(reported) == -(-len(content) // CHUNK) + 1
    assert not (tmp_path / "noise.png.toolrun-upload.json").exists()
    assert balance == 10  # uploads are free


def test_an_interrupted_upload_resumes_with_the_missing_chunks_only(
    server: Server, api_key: str, tmp_path: Path
) -> None:
    source = tmp_path / "noise.png"
    content = _noise_png(source)
    total = -(-len(content) // CHUNK)
    state_path = tmp_path / "noise.png.toolrun-upload.json"

    def crash_after_two(sent: int, size: int) -> None:
        if sent >= 2 * CHUNK:
            raise Interrupted

    first = RecordingTransport()
    with Client(server.base_url, api_key, transport=first) as client, pytest.raises(Interrupted):
        client.upload(source, CHUNK, progress=crash_after_two)
    [entry] = json.loads(state_path.read_text())["uploads"].values()
    assert entry["done"] == [0, 1]
    assert _chunk_posts(first) == 2

    second = RecordingTransport()
    reported: list[int] = []
    with Client(server.base_url, api_key, transport=second) as client:
        asset = client.upload(source, CHUNK, progress=lambda s, t: reported.append(s))
        saved = client.download(asset.task_id, "uploaded_source", tmp_path / "copy.png")
    assert asset.task_id == entry["taskId"]
    assert ("POST", "/openapi/uploads/tasks") not in second.requests
    assert _chunk_posts(second) == total - 2
    assert reported[0] == 2 * CHUNK
    assert saved.read_bytes() == content
    assert not state_path.exists()


def test_a_changed_file_starts_a_new_session(server: Server, api_key: str, tmp_path: Path) -> None:
    source = tmp_path / "noise.png"
    _noise_png(source)
    state_path = tmp_path / "uploads.json"

    def crash(sent: int, size: int) -> None:
        if sent:
            raise Interrupted

    with Client(server.base_url, api_key) as client:
        with pytest.raises(Interrupted):
            client.upload(source, CHUNK, progress=crash, state_path=state_path)
        [old] = json.loads(state_path.read_text())["uploads"].values()
        content = _noise_png(source, side=64)
        os.utime(source, ns=(1, 1))
        asset = client.upload(source, CHUNK, state_path=state_path)
    assert asset.task_id != old["taskId"]
    assert asset.file_size == len(content)
    assert (asset.width, asset.height) == (64, 64)
    [left] = json.loads(state_path.read_text())["uploads"].values()
    assert left["taskId"] == old["taskId"]  # the abandoned version's entry stays until it expires


async def test_async_upload_and_download(server: Server, api_key: str, tmp_path: Path) -> None:
    content = _noise_png(tmp_path / "noise.png", side=48)
    async with AsyncClient(server.base_url, api_key) as client:
        asset = await client.upload(tmp_path / "noise.png")
        session = await client.create_upload("manual.png", "image/png", len(content))
        progress = await client.upload_chunk(session.task_id, 0, content)
        manual = await client.complete_upload(session.task_id, session.total_chunks)
        saved = await client.download(manual.task_id, "uploaded_source", tmp_path / "m.png")
    assert asset.file_size == len(content)
    assert (session.total_chunks, progress.uploaded_chunks) == (1, 1)
    assert saved.read_bytes() == content
