"""Serving an asset's file: roles, Content-Disposition, ETag, Range, safe headers; generated assets."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from tests.api.uploadkit import (
    TASKS,
    account,
    both_stores,
    files_app,
    files_client,
    other_account,
    png_bytes,
    store,
    uploaded,
)
from tests.conftest import Clock
from tests.factories import AccountWithKey
from tests.servers.s3 import s3_bucket, s3_env, s3_server
from toolrun.api.files import content_disposition
from toolrun.core import uploads
from toolrun.core.errors import InvalidInput
from toolrun.db.engine import Database
from toolrun.storage import Storage

__all__ = [
    "account", "files_app", "files_client", "other_account", "s3_bucket", "s3_env", "s3_server",
    "store",
]  # fmt: skip

DISPOSITION = re.compile(
    r"^(inline|attachment); filename=\"([ !#-\[\]-~]*)\"(?:; filename\*=UTF-8''([A-Za-z0-9%._~-]*))?$"
)


@pytest.mark.parametrize(
    ("name", "fallback", "exact"),
    [
        ("photo.png", "photo.png", None),
        ("my photo (1).png", "my photo (1).png", None),
        ('say "cheese".png', "say _cheese_.png", 'say "cheese".png'),
        ("back\\slash.png", "back_slash.png", "back_slash.png"),
        ("a/b.png", "a_b.png", "a_b.png"),
        ("bad\r\nSet-Cookie: x=1.png", "badSet-Cookie_ x=1.png", "badSet-Cookie: x=1.png"),
        ("résumé.png", "resume.png", "résumé.png"),
        ("文件.png", "__.png", "文件.png"),
        ("\x00\x1f", "file", "file"),
        ("it's;50%.png", "it_s;50_.png", "it's;50%.png"),
    ],
)
def test_content_disposition_is_well_formed(name: str, fallback: str, exact: str | None) -> None:
    for disposition in ("inline", "attachment"):
        header = content_disposition(disposition, name)
        match = DISPOSITION.match(header)
        assert match is not None, header
        assert match.group(1) == disposition
        assert match.group(2) == fallback
        assert (unquote(match.group(3)) if match.group(3) else None) == (
            exact if exact != fallback else None
        )


@both_stores
async def test_download_and_preview_headers(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = png_bytes(10, 10)
    name = "dir/sub\\q\"uo'te\r\n ünï 文件.png"
    asset = await uploaded(files_client, account, data, file_name=name)
    assert asset["fileName"] == "q\"uo'te ünï 文件.png"
    download = await files_client.get(asset["downloadPath"], headers=account.headers)
    preview = await files_client.get(asset["previewPath"], headers=account.headers)
    default = await files_client.get(f"{TASKS}/{asset['taskId']}/file", headers=account.headers)
    for response in (download, preview, default):
        assert response.status_code == 200
        assert response.content == data
        assert response.headers["content-type"] == "image/png"
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "sandbox" in response.headers["content-security-policy"]
        assert response.headers["content-length"] == str(len(data))
        assert response.headers["accept-ranges"] == "bytes"
        assert response.headers["etag"].startswith('"')
    match = DISPOSITION.match(download.headers["content-disposition"])
    assert match is not None
    assert match.group(1) == "attachment"
    assert unquote(match.group(3)) == asset["fileName"]
    assert preview.headers["content-disposition"].startswith("inline; ")
    assert default.headers["content-disposition"].startswith("inline; ")


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("role=uploaded_source", 200),
        ("role=input", 200),
        ("role=preview&download=1", 200),
        ("role=output", 400),
        ("role=thumbnail", 400),
        ("download=2", 400),
        ("download=yes", 400),
    ],
)
async def test_roles_of_an_uploaded_asset(
    files_client: httpx.AsyncClient, account: AccountWithKey, query: str, status: int
) -> None:
    asset = await uploaded(files_client, account, png_bytes())
    response = await files_client.get(
        f"{TASKS}/{asset['taskId']}/file?{query}", headers=account.headers
    )
    assert response.status_code == status, response.text
    if status == 400:
        assert response.json()["data"]["errors"]


@both_stores
async def test_etag_and_conditional_get(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    asset = await uploaded(files_client, account, png_bytes())
    first = await files_client.get(asset["previewPath"], headers=account.headers)
    etag = first.headers["etag"]
    again = await files_client.get(
        asset["previewPath"], headers={**account.headers, "If-None-Match": etag}
    )
    assert again.status_code == 304
    assert again.content == b""
    other = await files_client.get(
        asset["previewPath"], headers={**account.headers, "If-None-Match": '"nope"'}
    )
    assert other.status_code == 200


@both_stores
@pytest.mark.parametrize(
    ("range_header", "status", "part"),
    [
        ("bytes=0-9", 206, (0, 10)),
        ("bytes=5-", 206, (5, None)),
        ("bytes=-7", 206, (-7, None)),
        ("bytes=3-100000", 206, (3, None)),
        ("bytes=0-0", 206, (0, 1)),
        ("bytes=100000-", 416, None),
        ("bytes=-0", 416, None),
        ("bytes=0-1,4-5", 200, (0, None)),  # several ranges: the whole file
        ("items=0-1", 200, (0, None)),
        ("bytes=9-3", 200, (0, None)),
    ],
)
async def test_range_requests(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    range_header: str,
    status: int,
    part: tuple[int, int | None] | None,
) -> None:
    data = png_bytes(30, 30)
    asset = await uploaded(files_client, account, data)
    response = await files_client.get(
        asset["downloadPath"], headers={**account.headers, "Range": range_header}
    )
    assert response.status_code == status, response.text
    if status == 416:
        assert response.headers["content-range"] == f"bytes */{len(data)}"
        assert response.json()["code"] == 416
        return
    assert part is not None
    expected = data[part[0] : part[1]]
    assert response.content == expected
    assert response.headers["content-length"] == str(len(expected))
    if status == 206:
        start = part[0] % len(data)
        assert response.headers["content-range"] == (
            f"bytes {start}-{start + len(expected) - 1}/{len(data)}"
        )


@both_stores
async def test_if_range_with_an_old_etag_gets_the_whole_file(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    data = png_bytes(30, 30)
    asset = await uploaded(files_client, account, data)
    headers = {**account.headers, "Range": "bytes=0-3", "If-Range": '"old"'}
    response = await files_client.get(asset["downloadPath"], headers=headers)
    assert (response.status_code, response.content) == (200, data)


async def _generated(
    db: Database, store: Storage, account: AccountWithKey, source: dict[str, Any], now: datetime
) -> dict[str, Any]:
    task_id = uploads.new_task_id()
    output = png_bytes(5, 5, (0, 0, 255))
    await store.write_bytes(uploads.file_key(task_id), output)
    async with db.write() as session:
        asset = await uploads.create_generated_asset(
            session,
            account_id=account.id,
            source_task_id=source["taskId"],
            storage_key=uploads.file_key(task_id),
            file_name="picture-resized.png",
            mime_type="image/png",
            extension="png",
            size=len(output),
            width=5,
            height=5,
            now=now,
            task_id=task_id,
        )
        return uploads.asset_data(asset)


@both_stores
async def test_generated_asset_roles(
    files_client: httpx.AsyncClient,
    db: Database,
    store: Storage,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    source_bytes = png_bytes(9, 9)
    source = await uploaded(files_client, account, source_bytes)
    generated = await _generated(db, store, account, source, clock())
    assert generated["kind"] == "generated"
    assert (generated["width"], generated["height"]) == (5, 5)
    meta = await files_client.get(f"{TASKS}/{generated['taskId']}/meta", headers=account.headers)
    assert meta.json()["data"] == generated
    base = f"{TASKS}/{generated['taskId']}/file"
    output = await files_client.get(base, headers=account.headers)
    assert (output.status_code, output.content) == (200, png_bytes(5, 5, (0, 0, 255)))
    for role in ("output", "preview"):
        response = await files_client.get(f"{base}?role={role}", headers=account.headers)
        assert response.content == output.content
    source_file = await files_client.get(f"{base}?role=input", headers=account.headers)
    assert source_file.content == source_bytes
    refused = await files_client.get(f"{base}?role=uploaded_source", headers=account.headers)
    assert refused.status_code == 400


async def test_get_complete_asset_for_image_jobs(
    files_client: httpx.AsyncClient,
    db: Database,
    account: AccountWithKey,
    other_account: AccountWithKey,
    clock: Clock,
) -> None:
    asset = await uploaded(files_client, account, png_bytes())
    pending = await files_client.post(
        TASKS,
        json={"fileName": "a.png", "mimeType": "image/png", "size": 3},
        headers=account.headers,
    )
    async with db.read() as session:
        found = await uploads.get_complete_asset(session, account.id, asset["taskId"], clock())
        assert found.id == asset["taskId"]
        for owner, task_id in [
            (other_account.id, asset["taskId"]),
            (account.id, pending.json()["data"]["taskId"]),
            (account.id, "nope"),
        ]:
            with pytest.raises(InvalidInput) as raised:
                await uploads.get_complete_asset(session, owner, task_id, clock())
            assert raised.value.errors[0]["field"] == "taskId"
