"""The upload flow: sessions, chunks (re-sent, out of order, concurrent, wrong sizes), complete
(missing chunks, type from the bytes, pixel limit), meta, ownership and expiry."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from tests.api.uploadkit import (
    TASKS,
    account,
    both_stores,
    complete,
    encoded,
    files_app,
    files_client,
    huge_png,
    open_session,
    other_account,
    png_bytes,
    send_chunk,
    split,
    store,
    upload,
    uploaded,
)
from tests.conftest import Clock
from tests.factories import AccountWithKey
from tests.jobkit import money
from tests.servers.s3 import s3_bucket, s3_env, s3_server
from toolrun.core import uploads
from toolrun.db.engine import Database
from toolrun.db.tables import Asset, UploadChunk
from toolrun.storage import Storage

__all__ = [
    "account", "files_app", "files_client", "other_account", "s3_bucket", "s3_env", "s3_server",
    "store",
]  # fmt: skip

ASSET_FIELDS = {
    "taskId", "kind", "fileName", "mimeType", "extension", "size", "fileSize", "createdAt",
    "expiresAt", "width", "height", "downloadPath", "previewPath",
}  # fmt: skip


async def test_session_answers_201_with_the_chunk_plan(
    files_client: httpx.AsyncClient, account: AccountWithKey, clock: Clock
) -> None:
    response = await files_client.post(
        TASKS,
        json={"fileName": "a.png", "mimeType": "image/png", "size": 10_000, "chunkSize": 4096},
        headers=account.headers,
    )
    assert response.status_code == 201
    data = response.json()["data"]
    assert set(data) == {"taskId", "chunkSize", "totalChunks", "expiresAt"}
    assert (data["chunkSize"], data["totalChunks"]) == (4096, 3)
    assert data["expiresAt"] == "2026-03-03T04:00:30.000Z"
    uuid.UUID(data["taskId"])


@pytest.mark.parametrize(
    ("body", "chunk_size", "total"),
    [
        ({"size": 100}, 100, 1),  # default 5 MiB, capped at the file
        ({"fileSize": 12 * 1024 * 1024}, 5 * 1024 * 1024, 3),
        ({"size": 10, "fileSize": 10, "chunkSize": 3}, 3, 4),
        ({"size": 50_000, "chunkSize": 1}, 5, 10_000),  # at most 10,000 chunks
    ],
)
async def test_chunk_plan(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    body: dict[str, int],
    chunk_size: int,
    total: int,
) -> None:
    response = await files_client.post(
        TASKS, json={"fileName": "a.png", "mimeType": "image/png", **body}, headers=account.headers
    )
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert (data["chunkSize"], data["totalChunks"]) == (chunk_size, total)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"mimeType": "image/png", "size": 10}, "fileName"),
        ({"fileName": "a.png", "size": 10}, "mimeType"),
        ({"fileName": "a.png", "mimeType": "image/png"}, "size"),
        ({"fileName": "a.png", "mimeType": "image/png", "size": 0}, "size"),
        ({"fileName": "a.png", "mimeType": "image/png", "size": 5, "fileSize": 6}, "size"),
        ({"fileName": "a.png", "mimeType": "image/png", "size": 64 * 1024 * 1024 + 1}, "size"),
        ({"fileName": "a.png", "mimeType": "image/png", "size": 9, "chunkSize": 0}, "chunkSize"),
        ({"fileName": "a.png", "mimeType": "x", "size": 9, "chunkSize": 8388609}, "chunkSize"),
        ({"fileName": "../..", "mimeType": "image/png", "size": 9}, "fileName"),
        ({"fileName": "\r\n", "mimeType": "image/png", "size": 9}, "fileName"),
    ],
)
async def test_bad_session_is_400(
    files_client: httpx.AsyncClient, account: AccountWithKey, body: dict[str, Any], field: str
) -> None:
    response = await files_client.post(TASKS, json=body, headers=account.headers)
    assert response.status_code == 400, response.text
    assert field in [error["field"] for error in response.json()["data"]["errors"]]


@both_stores
async def test_whole_flow_gives_the_asset_with_the_real_type(
    files_client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    data = png_bytes(40, 30)
    asset = await uploaded(
        files_client, account, data, file_name="shot.jpeg", mime_type="image/jpeg", chunk_size=100
    )
    assert set(asset) == ASSET_FIELDS
    assert asset["kind"] == "uploaded"
    assert (asset["mimeType"], asset["extension"], asset["fileName"]) == (
        "image/png", "png", "shot.png",
    )  # fmt: skip
    assert (asset["size"], asset["fileSize"]) == (len(data), len(data))
    assert (asset["width"], asset["height"]) == (40, 30)
    assert asset["downloadPath"] == f"{TASKS}/{asset['taskId']}/file?download=1"
    assert asset["previewPath"] == f"{TASKS}/{asset['taskId']}/file?role=preview"
    meta = await files_client.get(f"{TASKS}/{asset['taskId']}/meta", headers=account.headers)
    assert meta.status_code == 200
    assert meta.json()["data"] == asset
    file = await files_client.get(asset["downloadPath"], headers=account.headers)
    assert file.content == data
    assert (await money(db, account.id))[0] == 10  # uploads are free
    async with db.read() as session:  # chunk rows go once merged
        assert list(await session.scalars(select(UploadChunk))) == []


@pytest.mark.parametrize("fmt", ["jpg", "webp", "gif", "tif"])
async def test_other_formats_are_found_from_the_bytes(
    files_client: httpx.AsyncClient, account: AccountWithKey, fmt: str
) -> None:
    asset = await uploaded(files_client, account, encoded(fmt), file_name="x.png")
    expected = {"jpg": "image/jpeg", "webp": "image/webp", "gif": "image/gif", "tif": "image/tiff"}
    assert asset["mimeType"] == expected[fmt]
    assert (asset["width"], asset["height"]) == (8, 6)


@both_stores
async def test_chunks_out_of_order_and_resent(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = png_bytes(30, 30)
    session = await open_session(files_client, account, size=len(data), chunk_size=64)
    pieces = split(data, 64)
    order = list(reversed(range(len(pieces))))
    progress = []
    for index in order:
        response = await send_chunk(files_client, account, session["taskId"], index, pieces[index])
        assert response.status_code == 201, response.text
        progress.append(response.json()["data"])
    assert progress[0] == {
        "taskId": session["taskId"], "chunkIndex": order[0], "uploadedChunks": 1,
        "totalChunks": len(pieces),
    }  # fmt: skip
    assert progress[-1]["uploadedChunks"] == len(pieces)
    # a re-send replaces the chunk and counts once
    await send_chunk(files_client, account, session["taskId"], 0, b"\x00" * 64)
    again = await send_chunk(files_client, account, session["taskId"], 0, pieces[0])
    assert again.json()["data"]["uploadedChunks"] == len(pieces)
    done = await complete(files_client, account, session["taskId"], len(pieces))
    assert done.status_code == 201, done.text
    file = await files_client.get(done.json()["data"]["downloadPath"], headers=account.headers)
    assert file.content == data


@both_stores
async def test_concurrent_chunks_of_one_session(
    files_client: httpx.AsyncClient, db: Database, account: AccountWithKey
) -> None:
    data = png_bytes(64, 64, (1, 2, 3, 4))
    session = await open_session(files_client, account, size=len(data), chunk_size=16)
    pieces = split(data, 16)
    responses = await asyncio.gather(
        *(send_chunk(files_client, account, session["taskId"], i, p) for i, p in enumerate(pieces))
    )
    assert [r.status_code for r in responses] == [201] * len(pieces)
    assert max(r.json()["data"]["uploadedChunks"] for r in responses) == len(pieces)
    async with db.read() as session_:
        rows = list(await session_.scalars(select(UploadChunk.chunk_index)))
    assert sorted(rows) == list(range(len(pieces)))
    done = await complete(files_client, account, session["taskId"], len(pieces))
    assert done.status_code == 201, done.text


@pytest.mark.parametrize(
    ("index", "payload", "message"),
    [
        (1, b"x" * 9, "must have 10"),  # short, not the last
        (0, b"x" * 11, "more than declared"),
        (2, b"x" * 6, "more than declared"),  # the last chunk is 5
        (2, b"x" * 4, "must have 5"),
        (0, b"", "empty"),
        (3, b"x" * 5, "outside 0..2"),
    ],
)
async def test_wrong_chunks_are_400_and_not_stored(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    store: Storage,
    index: int,
    payload: bytes,
    message: str,
) -> None:
    session = await open_session(files_client, account, size=25, chunk_size=10)
    response = await send_chunk(files_client, account, session["taskId"], index, payload)
    assert response.status_code == 400, response.text
    assert message in response.json()["message"]
    assert [key async for key in store.list_keys("uploads/")] == []


@pytest.mark.parametrize("index", ["-1", "x", ""])
async def test_bad_index_is_400(
    files_client: httpx.AsyncClient, account: AccountWithKey, index: str
) -> None:
    session = await open_session(files_client, account, size=25, chunk_size=10)
    response = await files_client.post(
        f"{TASKS}/{session['taskId']}/chunks",
        data={"index": index},
        files={"chunk": ("b", b"x" * 10)},
        headers=account.headers,
    )
    assert response.status_code == 400
    assert "index" in [e["field"] for e in response.json()["data"]["errors"]]


async def test_missing_chunk_field_is_400(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    session = await open_session(files_client, account, size=25, chunk_size=10)
    response = await files_client.post(
        f"{TASKS}/{session['taskId']}/chunks", data={"index": "0"}, headers=account.headers
    )
    assert response.status_code == 400
    assert "chunk" in [e["field"] for e in response.json()["data"]["errors"]]


async def test_body_over_the_chunk_limit_is_refused_before_reading(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    session = await open_session(files_client, account, size=25, chunk_size=10)
    response = await files_client.post(
        f"{TASKS}/{session['taskId']}/chunks",
        content=b"x" * (9 * 1024 * 1024),
        headers={**account.headers, "Content-Type": "multipart/form-data; boundary=zz"},
    )
    assert response.status_code == 400
    assert "over the" in response.json()["message"]


@both_stores
async def test_missing_chunks_are_listed_and_the_session_stays_pending(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = png_bytes(20, 20)
    session = await open_session(files_client, account, size=len(data), chunk_size=10)
    total = session["totalChunks"]
    for index, piece in enumerate(split(data, 10)):
        if index not in {1, 4}:
            await send_chunk(files_client, account, session["taskId"], index, piece)
    response = await complete(files_client, account, session["taskId"], total)
    assert response.status_code == 400
    assert response.json()["message"] == "2 chunks are missing: 1, 4"
    wrong_total = await complete(files_client, account, session["taskId"], total + 1)
    assert wrong_total.status_code == 400
    assert wrong_total.json()["data"]["errors"][0]["field"] == "totalChunks"
    meta = await files_client.get(f"{TASKS}/{session['taskId']}/meta", headers=account.headers)
    assert meta.status_code == 409
    for index in (1, 4):
        await send_chunk(files_client, account, session["taskId"], index, split(data, 10)[index])
    assert (await complete(files_client, account, session["taskId"], total)).status_code == 201


async def test_meta_of_a_pending_session_lists_the_received_chunks(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = png_bytes(20, 20)
    session = await open_session(files_client, account, size=len(data), chunk_size=10)
    task_id, total = session["taskId"], session["totalChunks"]
    pieces = split(data, 10)
    url = f"{TASKS}/{task_id}/meta"
    empty = await files_client.get(url, headers=account.headers)
    assert (empty.status_code, empty.json()["data"]["receivedChunks"]) == (409, [])
    for index in (total - 1, 3, 0, 3):  # out of order, one re-sent
        await send_chunk(files_client, account, task_id, index, pieces[index])
    await send_chunk(files_client, account, task_id, 1, b"short")  # refused: not received
    meta = await files_client.get(url, headers=account.headers)
    assert meta.status_code == 409
    body = meta.json()
    assert body["code"] == 409
    assert body["message"] == (
        f"upload {task_id} is not complete yet: 3 of {total} chunks received; "
        "send the rest, then complete it"
    )
    assert body["data"] == {
        "path": url, "timestamp": body["data"]["timestamp"], "taskId": task_id,
        "status": "pending", "chunkSize": 10, "totalChunks": total, "uploadedChunks": 3,
        "receivedChunks": [0, 3, total - 1], "expiresAt": session["expiresAt"],
    }  # fmt: skip
    missing = [i for i in range(total) if i not in body["data"]["receivedChunks"]]
    for index in missing:  # resume from the answer alone
        await send_chunk(files_client, account, task_id, index, pieces[index])
    assert (await complete(files_client, account, task_id, total)).status_code == 201
    done = await files_client.get(url, headers=account.headers)
    assert done.status_code == 200
    assert done.json()["data"]["taskId"] == task_id


@both_stores
@pytest.mark.parametrize(
    "data",
    [
        b"this is plain text, not a picture at all",
        b"GIF89a/*" + b"\x00" * 8 + b"*/=1;alert(document.domain)//<script>alert(1)</script>",
        b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,  # a PNG signature and garbage
        b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
        b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n",
    ],
    ids=["text", "gif-polyglot", "broken-png", "svg", "pdf"],
)
async def test_non_images_are_400_and_the_session_stays_pending(
    files_client: httpx.AsyncClient, account: AccountWithKey, store: Storage, data: bytes
) -> None:
    session = await open_session(files_client, account, size=len(data))
    await send_chunk(files_client, account, session["taskId"], 0, data)
    response = await complete(files_client, account, session["taskId"], 1)
    assert response.status_code == 400, response.text
    assert (
        "not an image" in response.json()["message"]
        or "does not read" in response.json()["message"]
    )
    meta = await files_client.get(f"{TASKS}/{session['taskId']}/meta", headers=account.headers)
    assert meta.status_code == 409
    keys = [key async for key in store.list_keys(f"uploads/{session['taskId']}/")]
    assert keys
    assert all(key.startswith(uploads.parts_key(session["taskId"])) for key in keys)


async def test_valid_gif_with_a_script_tail_is_served_as_a_gif(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = encoded("gif") + b"<script>alert(1)</script>"
    asset = await uploaded(files_client, account, data, file_name="x.html", mime_type="text/html")
    assert (asset["mimeType"], asset["fileName"]) == ("image/gif", "x.gif")
    file = await files_client.get(asset["previewPath"], headers=account.headers)
    assert file.headers["content-type"] == "image/gif"
    assert file.headers["x-content-type-options"] == "nosniff"


@both_stores
async def test_too_many_pixels_is_refused_without_decoding(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = huge_png()
    assert len(data) < 200_000
    response = await upload(files_client, account, data)
    assert response.status_code == 400, response.text
    assert "20000x20000 (400000000 pixels)" in response.json()["message"]


@both_stores
async def test_second_complete_answers_the_asset_again(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = png_bytes()
    first = await upload(files_client, account, data)
    task_id = first.json()["data"]["taskId"]
    again = await complete(files_client, account, task_id, 1)
    assert again.status_code == 201
    assert again.json()["data"] == first.json()["data"]
    late_chunk = await send_chunk(files_client, account, task_id, 0, data)
    assert late_chunk.status_code == 409


@both_stores
async def test_concurrent_completes_give_one_asset(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = png_bytes(50, 50)
    session = await open_session(files_client, account, size=len(data), chunk_size=50)
    pieces = split(data, 50)
    for index, piece in enumerate(pieces):
        await send_chunk(files_client, account, session["taskId"], index, piece)
    answers = await asyncio.gather(
        *(complete(files_client, account, session["taskId"], len(pieces)) for _ in range(4))
    )
    assert [a.status_code for a in answers] == [201] * 4, [a.text for a in answers]
    assert len({a.json()["data"]["createdAt"] for a in answers}) == 1
    file = await files_client.get(
        answers[0].json()["data"]["downloadPath"], headers=account.headers
    )
    assert file.content == data


@pytest.mark.parametrize(
    "path",
    [
        "{task}/meta",
        "{task}/file",
        "{task}/complete",
        "{task}/chunks",
    ],
)
async def test_foreign_unknown_and_malformed_tasks_are_404(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    other_account: AccountWithKey,
    path: str,
) -> None:
    asset = await uploaded(files_client, account, png_bytes())
    for task in (asset["taskId"], str(uuid.uuid4()), "not-a-uuid", "..%2F..%2Fetc"):
        url = f"{TASKS}/{path.format(task=task)}"
        if path.endswith("complete"):
            response = await files_client.post(
                url, json={"totalChunks": 1}, headers=other_account.headers
            )
        elif path.endswith("chunks"):
            response = await files_client.post(
                url,
                data={"index": "0"},
                files={"chunk": ("b", b"x")},
                headers=other_account.headers,
            )
        else:
            response = await files_client.get(url, headers=other_account.headers)
        assert response.status_code == 404, (task, response.text)
        assert response.json()["code"] == 404


async def test_uploads_need_a_key(files_client: httpx.AsyncClient) -> None:
    response = await files_client.post(
        TASKS, json={"fileName": "a.png", "mimeType": "image/png", "size": 1}
    )
    assert response.status_code == 401


@both_stores
async def test_expired_sessions_and_assets_read_as_404(
    files_client: httpx.AsyncClient, account: AccountWithKey, clock: Clock, db: Database
) -> None:
    asset = await uploaded(files_client, account, png_bytes())
    pending = await open_session(files_client, account, size=20, chunk_size=10)
    clock.advance(seconds=86_399)
    meta = await files_client.get(f"{TASKS}/{asset['taskId']}/meta", headers=account.headers)
    assert meta.status_code == 200
    clock.advance(seconds=1)
    for url in (f"{TASKS}/{asset['taskId']}/meta", f"{TASKS}/{asset['taskId']}/file"):
        assert (await files_client.get(url, headers=account.headers)).status_code == 404
    late = await send_chunk(files_client, account, pending["taskId"], 0, b"x" * 10)
    assert late.status_code == 404
    async with db.read() as session:
        row = await session.get(Asset, asset["taskId"])
    assert row is not None
    assert row.status == "complete"  # the sweeper marks it; reads already refuse it


async def test_oversized_json_body_is_refused(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    body = {"fileName": "a" * 70_000 + ".png", "mimeType": "image/png", "size": 10}
    response = await files_client.post(TASKS, json=body, headers=account.headers)
    assert response.status_code == 400
    assert "over the 65536 bytes" in response.json()["message"]
