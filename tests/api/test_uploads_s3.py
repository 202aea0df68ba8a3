"""A representative subset of the upload flow on the S3 backend (moto's server on loopback)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.api.uploadkit import (
    account,
    complete,
    files_app,
    files_client,
    open_session,
    png_bytes,
    send_chunk,
    split,
    store,
)
from tests.conftest import Clock
from tests.factories import AccountWithKey
from tests.servers.s3 import s3_bucket, s3_env, s3_server
from toolrun.core import uploads
from toolrun.storage import S3Storage, Storage
from toolrun.storage.s3 import part_key
from toolrun.tools.image.vips import pyvips
from toolrun.worker.sweeper import sweep

__all__ = ["account", "files_app", "files_client", "s3_bucket", "s3_env", "s3_server", "store"]

pytestmark = pytest.mark.parametrize("store", ["s3"], indirect=True)
MIB = 1024 * 1024


def noisy_png(width: int, height: int) -> bytes:
    noise = pyvips.Image.gaussnoise(width, height, mean=128, sigma=80).cast("uchar")
    image = noise.bandjoin([noise.rot180(), noise.flip("horizontal")]).copy(interpretation="srgb")
    data: bytes = image.pngsave_buffer(compression=1)
    return data


async def test_large_upload_in_parallel_chunks_then_ranged_download(
    files_client: httpx.AsyncClient, account: AccountWithKey, store: Storage
) -> None:
    data = noisy_png(1400, 1400)
    assert len(data) > 5 * MIB
    session = await open_session(files_client, account, size=len(data), chunk_size=5 * MIB)
    pieces = split(data, 5 * MIB)
    assert len(pieces) == 2
    sent = await asyncio.gather(
        *(send_chunk(files_client, account, session["taskId"], i, p) for i, p in enumerate(pieces))
    )
    assert [r.status_code for r in sent] == [201, 201]
    done = await complete(files_client, account, session["taskId"], 2)
    assert done.status_code == 201, done.text
    asset = done.json()["data"]
    assert (asset["width"], asset["height"], asset["fileSize"]) == (1400, 1400, len(data))
    whole = await files_client.get(asset["downloadPath"], headers=account.headers)
    assert whole.content == data
    part = await files_client.get(
        asset["downloadPath"],
        headers={**account.headers, "Range": f"bytes={5 * MIB - 3}-{5 * MIB + 2}"},
    )
    assert (part.status_code, part.content) == (206, data[5 * MIB - 3 : 5 * MIB + 3])
    keys = [key async for key in store.list_keys(f"uploads/{asset['taskId']}/")]
    assert keys == [f"uploads/{asset['taskId']}/file"]  # chunks removed once merged


async def test_resent_chunk_and_non_image_stay_pending(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = b"GIF89a" + b"<script>alert(1)</script>" * 4
    session = await open_session(files_client, account, size=len(data), chunk_size=40)
    for index, piece in enumerate(split(data, 40)):
        await send_chunk(files_client, account, session["taskId"], index, piece)
        assert (
            await send_chunk(files_client, account, session["taskId"], index, piece)
        ).status_code == 201
    refused = await complete(files_client, account, session["taskId"], session["totalChunks"])
    assert refused.status_code == 400


async def test_sweeper_deletes_expired_files_on_s3(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    store: Storage,
    clock: Clock,
    files_app,
) -> None:
    data = png_bytes(12, 12)
    pending = await open_session(files_client, account, size=len(data), chunk_size=50)
    await send_chunk(files_client, account, pending["taskId"], 0, data[:50])
    assert [key async for key in store.list_keys("uploads/")]
    clock.advance(days=1, seconds=1)
    result = await sweep(files_app.state.context.db, store, clock=clock)
    assert result.expired == 1
    assert [key async for key in store.list_keys("uploads/")] == []


async def test_a_chunk_replaced_during_complete_is_409_and_the_session_stays_pending(
    files_client: httpx.AsyncClient, account: AccountWithKey, store: Storage
) -> None:
    """S3 pins each chunk's ETag while merging: a re-send meanwhile is a conflict, not a 500."""
    assert isinstance(store, S3Storage)
    data = png_bytes(12, 12)
    session = await open_session(files_client, account, size=len(data), chunk_size=40)
    task_id, pieces = session["taskId"], split(data, 40)
    for index, piece in enumerate(pieces):
        await send_chunk(files_client, account, task_id, index, piece)
    original, parts = store._head, uploads.parts_key(task_id)

    async def head_then_resend(key: str, name: str) -> tuple[int, str]:
        result = await original(key, name)
        if key == part_key(parts, len(pieces) - 1):  # every chunk pinned: re-send 0
            store._head = original  # type: ignore[method-assign]
            await store.write_bytes(part_key(parts, 0), b"\x00" * 40)
        return result

    store._head = head_then_resend  # type: ignore[method-assign]  # a race no server can stage
    refused = await complete(files_client, account, task_id, len(pieces))
    assert refused.status_code == 409, refused.text
    assert refused.json()["message"] == (
        "A chunk was sent again while the upload was being completed: complete it again."
    )
    meta = await files_client.get(f"/openapi/uploads/tasks/{task_id}/meta", headers=account.headers)
    assert meta.json()["data"]["receivedChunks"] == list(range(len(pieces)))
    assert await store.stat(uploads.file_key(task_id)) is None
    await send_chunk(files_client, account, task_id, 0, pieces[0])
    done = await complete(files_client, account, task_id, len(pieces))
    assert done.status_code == 201, done.text
    whole = await files_client.get(done.json()["data"]["downloadPath"], headers=account.headers)
    assert whole.content == data
