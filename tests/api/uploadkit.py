"""Fixtures and helpers of the upload and share API tests: a storage per backend, an app on it,
generated image bytes and a whole-upload helper.

Import the fixtures into a test module::

    from tests.api.uploadkit import account, files_app, store  # noqa: F401

and mark the tests that exercise storage with ``@both_stores`` to run them on S3 too.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import AsyncIterator
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import Clock
from tests.factories import AccountWithKey, create_account
from tests.servers.s3 import S3Server
from toolrun.api.app import create_app
from toolrun.config import Settings
from toolrun.db.engine import Database
from toolrun.storage import Storage, open_storage
from toolrun.tools.image.vips import pyvips

TASKS = "/openapi/uploads/tasks"


def png_bytes(width: int = 4, height: int = 3, colour: tuple[int, ...] = (200, 30, 30)) -> bytes:
    image = pyvips.Image.black(width, height, bands=len(colour)).new_from_image(list(colour))
    data: bytes = image.copy(interpretation="srgb").pngsave_buffer()
    return data


def encoded(fmt: str, width: int = 8, height: int = 6) -> bytes:
    image = pyvips.Image.black(width, height, bands=3).new_from_image([10, 120, 240])
    data: bytes = image.copy(interpretation="srgb").write_to_buffer(f".{fmt}")
    return data


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


@cache
def huge_png(width: int = 20_000, height: int = 20_000) -> bytes:
    """A valid one-colour 1-bit grey PNG of ``width`` x ``height``: a few KiB, 400 MP decoded."""
    row = b"\x00" + b"\x00" * ((width + 7) // 8)
    compressor = zlib.compressobj(9)
    pieces = [compressor.compress(row) for _ in range(height)]
    pieces.append(compressor.flush())
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", b"".join(pieces))
        + _png_chunk(b"IEND", b"")
    )


def split(data: bytes, chunk_size: int) -> list[bytes]:
    return [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]


async def open_session(
    client: httpx.AsyncClient,
    account: AccountWithKey,
    *,
    size: int,
    file_name: str = "picture.png",
    mime_type: str = "image/png",
    chunk_size: int | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"fileName": file_name, "mimeType": mime_type, "size": size}
    if chunk_size is not None:
        body["chunkSize"] = chunk_size
    response = await client.post(TASKS, json=body, headers=account.headers)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


async def send_chunk(
    client: httpx.AsyncClient, account: AccountWithKey, task_id: str, index: int, data: bytes
) -> httpx.Response:
    return await client.post(
        f"{TASKS}/{task_id}/chunks",
        data={"index": str(index)},
        files={"chunk": ("blob", data, "application/octet-stream")},
        headers=account.headers,
    )


async def complete(
    client: httpx.AsyncClient, account: AccountWithKey, task_id: str, total: int
) -> httpx.Response:
    return await client.post(
        f"{TASKS}/{task_id}/complete", json={"totalChunks": total}, headers=account.headers
    )


async def upload(
    client: httpx.AsyncClient,
    account: AccountWithKey,
    data: bytes,
    *,
    file_name: str = "picture.png",
    mime_type: str = "image/png",
    chunk_size: int | None = None,
) -> httpx.Response:
    """Create, send every chunk in order, complete; the complete response."""
    session = await open_session(
        client, account, size=len(data), file_name=file_name, mime_type=mime_type,
        chunk_size=chunk_size,
    )  # fmt: skip
    pieces = split(data, session["chunkSize"])
    for index, piece in enumerate(pieces):
        sent = await send_chunk(client, account, session["taskId"], index, piece)
        assert sent.status_code == 201, sent.text
    return await complete(client, account, session["taskId"], len(pieces))


async def uploaded(client: httpx.AsyncClient, account: AccountWithKey, data: bytes, **kw: Any):
    response = await upload(client, account, data, **kw)
    assert response.status_code == 201, response.text
    return response.json()["data"]


# --- fixtures -----------------------------------------------------------------------------------

both_stores = pytest.mark.parametrize("store", ["file", "s3"], indirect=True)
"""Run a test on the file backend and on S3 (moto's server); the module must import the
S3 fixtures: ``from tests.servers.s3 import s3_bucket, s3_env, s3_server``."""


@pytest.fixture(params=["file"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    """A fresh store; parametrize indirectly with ``["file", "s3"]`` to add S3."""
    if request.param == "file":
        settings = Settings(storage_url=f"file://{tmp_path / 'blobs'}", _env_file=None)
    else:
        server: S3Server = request.getfixturevalue("s3_env")
        bucket: str = request.getfixturevalue("s3_bucket")
        settings = Settings(
            storage_url=f"s3://{bucket}/toolrun", s3_endpoint_url=server.endpoint_url,
            _env_file=None,
        )  # fmt: skip
    backend = open_storage(settings)
    try:
        yield backend
    finally:
        await backend.aclose()


@pytest.fixture
def files_app(settings: Settings, db: Database, clock: Clock, store: Storage) -> FastAPI:
    from tests.jobkit import test_registry

    return create_app(settings, clock=clock, database=db, registry=test_registry(), storage=store)


@pytest.fixture
async def files_client(files_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=files_app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://toolrun.test") as client:
        yield client


@pytest.fixture
async def account(db: Database, settings: Settings) -> AccountWithKey:
    return await create_account(db, settings)


@pytest.fixture
async def other_account(db: Database, settings: Settings) -> AccountWithKey:
    return await create_account(db, settings)
