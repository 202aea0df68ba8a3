"""Image jobs end to end: upload, create the job, run it, read the generated asset and its file."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from tests.api.uploadkit import (  # noqa: F401  (fixtures)
    account,
    files_app,
    files_client,
    huge_png,
    other_account,
    png_bytes,
    store,
    uploaded,
)
from tests.conftest import Clock
from tests.factories import AccountWithKey
from tests.jobkit import money, running_worker, wait_for_status
from tests.servers.s3 import s3_bucket, s3_env, s3_server  # noqa: F401  (fixtures)
from toolrun.config import Settings
from toolrun.db.engine import Database
from toolrun.db.tables import Job
from toolrun.storage import Storage
from toolrun.tools.image.vips import pyvips
from toolrun.worker.assets import worker_services


async def run_image_job(
    client: httpx.AsyncClient,
    account: AccountWithKey,
    db: Database,
    store: Storage,
    settings: Settings,
    clock: Clock,
    action: str,
    body: dict[str, Any],
) -> dict[str, Any]:
    created = await client.post(
        f"/openapi/image-tools/{action}", json=body, headers=account.headers
    )
    assert created.status_code == 202, created.text
    job_id = created.json()["data"]["id"]
    async with running_worker(
        settings,
        db,
        clock=clock,
        services=worker_services(db=db, storage=store, settings=settings, clock=clock),
    ):
        await wait_for_status(db, job_id, within_s=30)
    response = await client.get(f"/openapi/jobs/{job_id}", headers=account.headers)
    data: dict[str, Any] = response.json()["data"]
    return data


@pytest.mark.parametrize("store", ["file", "s3"], indirect=True)
async def test_convert_makes_a_generated_asset_with_its_file(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    db: Database,
    store: Storage,
    settings: Settings,
    clock: Clock,
) -> None:
    source = await uploaded(files_client, account, png_bytes(40, 30))
    job = await run_image_job(
        files_client, account, db, store, settings, clock,
        "convert", {"taskId": source["taskId"], "format": "webp", "quality": 70},
    )  # fmt: skip
    assert job["status"] == "succeeded", job["error"]
    result = job["result"]
    assert result["kind"] == "generated"
    assert result["sourceTaskId"] == source["taskId"]
    assert result["taskId"] != source["taskId"]
    assert (result["mimeType"], result["extension"]) == ("image/webp", "webp")
    assert (result["width"], result["height"]) == (40, 30)
    assert result["options"]["format"] == "webp"
    output = await files_client.get(
        f"/openapi/uploads/tasks/{result['taskId']}/file", headers=account.headers
    )
    assert output.status_code == 200
    decoded = pyvips.Image.new_from_buffer(output.content, "")
    assert (decoded.width, decoded.height) == (40, 30)
    assert decoded.get("vips-loader").startswith("webp")
    original = await files_client.get(
        f"/openapi/uploads/tasks/{result['taskId']}/file?role=input", headers=account.headers
    )
    assert original.content == png_bytes(40, 30)
    meta = await files_client.get(
        f"/openapi/uploads/tasks/{result['taskId']}/meta", headers=account.headers
    )
    assert meta.json()["data"]["kind"] == "generated"
    assert (await money(db, account.id))[0] == 9


async def test_generic_jobs_route_runs_image_actions(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    db: Database,
    store: Storage,
    settings: Settings,
    clock: Clock,
) -> None:
    source = await uploaded(files_client, account, png_bytes(64, 32))
    created = await files_client.post(
        "/openapi/jobs",
        json={
            "kind": "image",
            "action": "resize",
            "payload": {"taskId": source["taskId"], "width": 16},
        },
        headers=account.headers,
    )
    assert created.status_code == 202, created.text
    job_id = created.json()["data"]["id"]
    async with running_worker(
        settings,
        db,
        clock=clock,
        services=worker_services(db=db, storage=store, settings=settings, clock=clock),
    ):
        job = await wait_for_status(db, job_id, within_s=30)
    assert job.result is not None
    assert (job.result["width"], job.result["height"]) == (16, 8)


async def test_a_crop_outside_the_image_fails_with_400_and_a_refund(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    db: Database,
    store: Storage,
    settings: Settings,
    clock: Clock,
) -> None:
    source = await uploaded(files_client, account, png_bytes(10, 10))
    job = await run_image_job(
        files_client, account, db, store, settings, clock,
        "crop", {"taskId": source["taskId"], "left": 5, "top": 5, "width": 10, "height": 10},
    )  # fmt: skip
    assert (job["status"], job["error"]["code"], job["creditsRefunded"]) == ("failed", 400, True)
    assert (await money(db, account.id))[0] == 10


@pytest.mark.parametrize(
    "task_id",
    ["2f1c3b7e-8a5d-4c1e-9b2a-6d7e8f901234", "not-an-id"],
)
async def test_an_unknown_source_is_400_with_no_job_and_no_charge(
    files_client: httpx.AsyncClient, account: AccountWithKey, db: Database, task_id: str
) -> None:
    response = await files_client.post(
        "/openapi/image-tools/convert",
        json={"taskId": task_id, "format": "png"},
        headers=account.headers,
    )
    assert response.status_code == 400
    assert response.json()["data"]["errors"][0]["field"] == "taskId"
    assert (await money(db, account.id))[0] == 10


async def test_another_accounts_upload_is_400(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    other_account: AccountWithKey,
    db: Database,
) -> None:
    theirs = await uploaded(files_client, other_account, png_bytes())
    response = await files_client.post(
        "/openapi/image-tools/ico", json={"taskId": theirs["taskId"]}, headers=account.headers
    )
    assert response.status_code == 400
    assert (await money(db, account.id))[0] == 10


@pytest.mark.parametrize(
    ("action", "body", "field"),
    [
        ("convert", {"format": "gif"}, "format"),
        ("convert", {"format": "png", "quality": 101}, "quality"),
        ("convert", {"format": "png", "background": "red"}, "background"),
        ("compress", {}, "quality"),
        ("resize", {"width": 0}, "width"),
        ("resize", {"width": 100000, "height": 100000}, "width"),
        ("crop", {"left": 0, "top": 0, "width": 1}, "height"),
        ("ico", {"sizes": [8]}, "sizes.0"),
        ("ico", {"sizes": []}, "sizes"),
    ],
)
async def test_invalid_image_options_are_400(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    action: str,
    body: dict[str, Any],
    field: str,
) -> None:
    source = await uploaded(files_client, account, png_bytes())
    response = await files_client.post(
        f"/openapi/image-tools/{action}",
        json={"taskId": source["taskId"], **body},
        headers=account.headers,
    )
    assert response.status_code == 400, response.text
    assert field in [error["field"] for error in response.json()["data"]["errors"]]


async def _job_count(db: Database) -> int:
    async with db.read() as session:
        return int(await session.scalar(select(func.count()).select_from(Job)) or 0)


async def _assert_refused_free(
    response: httpx.Response, db: Database, account: AccountWithKey, field: str, message: str
) -> None:
    """A 400 naming ``field`` with ``message``: no job, and the 10 signup credits untouched."""
    assert response.status_code == 400, response.text
    assert response.json()["data"]["errors"][0]["field"] == field
    assert message in response.json()["message"]
    assert (await money(db, account.id))[0] == 10
    assert await _job_count(db) == 0


@pytest.mark.parametrize(
    ("action", "body", "field", "message"),
    [
        ("resize", {"width": 20000, "format": "webp"}, "width", "WEBP image may be at most 16383"),
        ("resize", {"height": 16384, "width": 10, "fit": "fill", "format": "webp"}, "height", ""),
        (
            "resize",
            {"width": 17000, "height": 17000, "fit": "inside", "format": "webp"},
            "width",
            "",
        ),
        ("resize", {"width": 60000, "height": 60000}, "width", "3600000000 pixels"),
        ("crop", {"left": 0, "top": 0, "width": 20000, "height": 5, "format": "webp"}, "width", ""),
        ("crop", {"left": 0, "top": 0, "width": 5, "height": 70000}, "height", "at most 65535"),
    ],
)
async def test_an_output_over_the_limits_by_the_request_alone_is_400_with_no_job(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    db: Database,
    action: str,
    body: dict[str, Any],
    field: str,
    message: str,
) -> None:
    source = await uploaded(files_client, account, png_bytes())
    response = await files_client.post(
        f"/openapi/image-tools/{action}",
        json={"taskId": source["taskId"], **body},
        headers=account.headers,
    )
    await _assert_refused_free(response, db, account, field, message)


@pytest.mark.parametrize(
    ("action", "body", "field", "message"),
    [
        ("convert", {"format": "webp"}, "format", "the result would be 20000x40"),
        ("compress", {"quality": 50, "format": "webp"}, "format", "give a maxWidth"),
        ("resize", {"height": 80, "format": "webp"}, "height", "the result would be 40000x80"),
        ("resize", {"width": 16000, "height": 6000}, "width", "scaled to cover the box"),
    ],
)
async def test_an_output_over_the_limits_for_this_source_is_400_with_no_job(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    db: Database,
    action: str,
    body: dict[str, Any],
    field: str,
    message: str,
) -> None:
    """The upload's recorded size (20000x40) decides at creation, as the worker would."""
    source = await uploaded(files_client, account, huge_png(20000, 40))
    response = await files_client.post(
        "/openapi/jobs",
        json={"kind": "image", "action": action, "payload": {"taskId": source["taskId"], **body}},
        headers=account.headers,
    )
    await _assert_refused_free(response, db, account, field, message)


@pytest.mark.parametrize(
    ("action", "body"),
    [
        ("convert", {"format": "png"}),
        ("compress", {"quality": 50, "format": "webp", "maxWidth": 16000}),
        ("resize", {"width": 16000, "format": "webp"}),
        ("crop", {"left": 0, "top": 0, "width": 16383, "height": 40, "format": "webp"}),
    ],
)
async def test_the_same_source_within_the_limits_is_accepted(
    files_client: httpx.AsyncClient,
    account: AccountWithKey,
    db: Database,
    action: str,
    body: dict[str, Any],
) -> None:
    source = await uploaded(files_client, account, huge_png(20000, 40))
    response = await files_client.post(
        f"/openapi/image-tools/{action}",
        json={"taskId": source["taskId"], **body},
        headers=account.headers,
    )
    assert response.status_code == 202, response.text
    assert await _job_count(db) == 1


async def test_catalog_lists_the_image_actions(
    files_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    items = (await files_client.get("/openapi/tools", headers=account.headers)).json()["data"][
        "items"
    ]
    paths = {item["slug"]: item["path"] for item in items if item["category"] == "image"}
    assert paths == {
        "image-convert": "/openapi/image-tools/convert",
        "image-compress": "/openapi/image-tools/compress",
        "image-resize": "/openapi/image-tools/resize",
        "image-crop": "/openapi/image-tools/crop",
        "image-ico": "/openapi/image-tools/ico",
    }
