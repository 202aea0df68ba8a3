"""Diagram share: charge, refund on a storage failure, 400/402/429 without a charge, reading,
and the public image served safely."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update

from tests import jobkit
from tests.api.uploadkit import account, encoded, other_account, png_bytes
from tests.conftest import Clock
from tests.factories import AccountWithKey
from tests.jobkit import money
from tests.servers.s3 import S3Server, s3_bucket, s3_env, s3_server
from toolrun.api.app import create_app
from toolrun.config import Settings
from toolrun.db.engine import Database
from toolrun.db.tables import Account, LedgerEntry, Share
from toolrun.storage import FileStorage, Storage, StorageError, open_storage

__all__ = ["account", "other_account", "s3_bucket", "s3_env", "s3_server"]

SHARE = "/openapi/mermaid/share"
CODE = "graph TD\n  A[Start] --> B{Is it?}\n  B -->|Yes| C[OK]\n"
SVG = (
    b'<?xml version="1.0"?>\n<!-- drawn -->\n<svg xmlns="http://www.w3.org/2000/svg" width="10" '
    b'height="10"><script>alert(document.cookie)</script><rect width="10" height="10"/></svg>'
)


class FailingWrites(FileStorage):
    """A store whose writes fail: a fault no real backend shows on demand."""

    async def write(
        self, key: str, chunks: AsyncIterable[bytes], *, content_type: str | None = None
    ) -> int:
        async for _ in chunks:
            break
        raise StorageError("disk on fire")


def _s3_store(server: S3Server, bucket: str) -> Storage:
    settings = Settings(
        storage_url=f"s3://{bucket}/toolrun", s3_endpoint_url=server.endpoint_url, _env_file=None
    )
    return open_storage(settings)


@pytest.fixture(params=["file"])
async def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    """The share store; parametrize indirectly with ``["file", "s3"]`` to add S3."""
    if request.param == "file":
        storage: Storage = FileStorage(tmp_path / "share-blobs")
    else:
        storage = _s3_store(request.getfixturevalue("s3_env"), request.getfixturevalue("s3_bucket"))
    try:
        yield storage
    finally:
        await storage.aclose()


both_stores = pytest.mark.parametrize("blobs", ["file", "s3"], indirect=True)


def _app(settings: Settings, db: Database, clock: Clock, storage: Storage) -> FastAPI:
    return create_app(
        settings, clock=clock, database=db, registry=jobkit.test_registry(), storage=storage
    )


@pytest.fixture
async def share_client(
    settings: Settings, db: Database, clock: Clock, blobs: Storage
) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=_app(settings, db, clock, blobs))
    async with httpx.AsyncClient(transport=transport, base_url="http://toolrun.test") as client:
        yield client


async def _share(
    client: httpx.AsyncClient,
    account: AccountWithKey,
    image: bytes | None,
    *,
    code: str = CODE,
    name: str = "diagram.png",
) -> httpx.Response:
    files: dict[str, Any] = {"image": (name, image, "application/octet-stream")} if image else {}
    return await client.post(
        SHARE, data={"code": code}, files=files or None, headers=account.headers
    )


@both_stores
async def test_share_charges_one_credit_and_is_readable_by_any_key(
    share_client: httpx.AsyncClient,
    db: Database,
    account: AccountWithKey,
    other_account: AccountWithKey,
) -> None:
    image = png_bytes(10, 8)
    response = await _share(share_client, account, image)
    assert response.status_code == 201, response.text
    assert response.headers["X-Credits-Balance"] == "9"
    assert response.headers["X-Credits-Cost"] == "1"
    data = response.json()["data"]
    assert set(data) == {"id", "imageUrl"}
    assert data["imageUrl"] == f"http://toolrun.test/share-images/{data['id']}.png"
    balance, total, reasons = await money(db, account.id)
    assert (balance, total, reasons) == (9, 9, {"signup": 1, "tool_use": 1})
    async with db.read() as session:
        entry = await session.scalar(
            select(LedgerEntry).where(LedgerEntry.reference == f"share:{data['id']}")
        )
    assert entry is not None
    assert (entry.amount, entry.operation) == (-1, "mermaid-share")
    read = await share_client.get(f"{SHARE}/{data['id']}", headers=other_account.headers)
    assert read.status_code == 200
    assert read.json()["data"] == {"id": data["id"], "code": CODE, "imageUrl": data["imageUrl"]}
    public = await share_client.get(f"/share-images/{data['id']}.png")  # no key
    assert public.status_code == 200
    assert public.content == image
    assert public.headers["content-type"] == "image/png"
    assert public.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert public.headers["x-content-type-options"] == "nosniff"
    assert (await money(db, other_account.id))[0] == 10


@both_stores
async def test_svg_is_served_sandboxed(
    share_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    response = await _share(share_client, account, SVG, name="d.png")
    assert response.status_code == 201, response.text
    url = response.json()["data"]["imageUrl"]
    assert url.endswith(".svg")
    public = await share_client.get(url.removeprefix("http://toolrun.test"))
    assert public.status_code == 200
    assert public.headers["content-type"].startswith("image/svg+xml")
    csp = public.headers["content-security-policy"]
    assert "sandbox" in csp
    assert "default-src 'none'" in csp
    assert public.headers["x-content-type-options"] == "nosniff"
    assert public.headers["content-disposition"].startswith("inline")


@pytest.mark.parametrize("fmt", ["jpg", "webp"])
async def test_jpeg_and_webp_are_accepted(
    share_client: httpx.AsyncClient, account: AccountWithKey, fmt: str
) -> None:
    response = await _share(share_client, account, encoded(fmt))
    assert response.status_code == 201, response.text
    assert response.json()["data"]["imageUrl"].endswith(".jpg" if fmt == "jpg" else ".webp")


async def test_public_base_url_prefixes_the_image_url(
    settings: Settings, db: Database, clock: Clock, blobs: Storage, account: AccountWithKey
) -> None:
    configured = settings.model_copy(update={"public_base_url": "https://diagrams.example/"})
    transport = httpx.ASGITransport(app=_app(configured, db, clock, blobs))
    async with httpx.AsyncClient(transport=transport, base_url="http://internal") as client:
        response = await _share(client, account, png_bytes())
    url = response.json()["data"]["imageUrl"]
    assert url.startswith("https://diagrams.example/share-images/")


@pytest.mark.parametrize(
    ("code", "image", "field"),
    [
        ("", png_bytes(), "code"),
        ("   \n", png_bytes(), "code"),
        ("x" * (100 * 1024 + 1), png_bytes(), "code"),
        ("é" * (50 * 1024 + 1), png_bytes(), "code"),
        (CODE, None, "image"),
        (CODE, b"plain text", "image"),
        (CODE, encoded("gif"), "image"),
        (CODE, b"<html><svg></svg></html>", "image"),
        (CODE, b"\x89PNG\r\n\x1a\n" + b"\x00" * (5 * 1024 * 1024), "image"),
    ],
    ids=["empty", "blank", "long", "long-utf8", "no-image", "text", "gif", "html", "too-big"],
)
async def test_bad_input_is_400_and_charges_nothing(
    share_client: httpx.AsyncClient,
    db: Database,
    blobs: Storage,
    account: AccountWithKey,
    code: str,
    image: bytes | None,
    field: str,
) -> None:
    response = await _share(share_client, account, image, code=code)
    assert response.status_code == 400, response.text
    assert field in [e["field"] for e in response.json()["data"]["errors"]]
    assert await money(db, account.id) == (10, 10, {"signup": 1})
    assert [key async for key in blobs.list_keys()] == []


async def test_short_of_credits_is_402(
    share_client: httpx.AsyncClient, db: Database, blobs: Storage, account: AccountWithKey
) -> None:
    async with db.write() as session:
        await session.execute(update(Account).where(Account.id == account.id).values(balance=0))
    response = await _share(share_client, account, png_bytes())
    assert response.status_code == 402
    assert [key async for key in blobs.list_keys()] == []
    async with db.read() as session:
        assert list(await session.scalars(select(Share))) == []


async def test_rate_limited_request_charges_nothing(
    settings: Settings, db: Database, clock: Clock, blobs: Storage, account: AccountWithKey
) -> None:
    limited = settings.model_copy(update={"rate_limit_per_minute": 1})
    transport = httpx.ASGITransport(app=_app(limited, db, clock, blobs))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert (await _share(client, account, png_bytes())).status_code == 201
        refused = await _share(client, account, png_bytes())
    assert refused.status_code == 429
    assert "Retry-After" in refused.headers
    assert (await money(db, account.id))[0] == 9


async def test_storage_failure_is_500_and_refunds(
    settings: Settings, db: Database, clock: Clock, tmp_path: Path, account: AccountWithKey
) -> None:
    async with FailingWrites(tmp_path / "failing") as failing:
        transport = httpx.ASGITransport(app=_app(settings, db, clock, failing))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await _share(client, account, png_bytes())
        assert [key async for key in failing.list_keys()] == []
    assert response.status_code == 500
    body = response.json()
    assert body["code"] == 500
    assert "credit was returned" in body["message"]
    assert "disk on fire" not in response.text
    balance, total, reasons = await money(db, account.id)
    assert (balance, total, reasons) == (10, 10, {"signup": 1, "tool_use": 1, "refund": 1})
    async with db.read() as session:
        assert list(await session.scalars(select(Share))) == []


async def test_an_s3_failure_is_500_and_refunds(
    settings: Settings, db: Database, clock: Clock, s3_env: S3Server, account: AccountWithKey
) -> None:
    """A real fault of a real S3 endpoint: the bucket does not exist."""
    missing = _s3_store(s3_env, "no-such-bucket-for-toolrun")
    try:
        transport = httpx.ASGITransport(app=_app(settings, db, clock, missing))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await _share(client, account, png_bytes())
    finally:
        await missing.aclose()
    assert response.status_code == 500
    assert "credit was returned" in response.json()["message"]
    assert "NoSuchBucket" not in response.text
    assert (await money(db, account.id))[:2] == (10, 10)
    async with db.read() as session:
        assert list(await session.scalars(select(Share))) == []


@pytest.mark.parametrize(
    "share_id", ["00000000-0000-4000-8000-000000000000", "nope", "../../etc/passwd"]
)
async def test_unknown_share_is_404(
    share_client: httpx.AsyncClient, account: AccountWithKey, share_id: str
) -> None:
    response = await share_client.get(f"{SHARE}/{share_id}", headers=account.headers)
    assert response.status_code == 404
    assert response.json()["code"] == 404


async def test_share_read_needs_a_key(share_client: httpx.AsyncClient) -> None:
    assert (await share_client.get(f"{SHARE}/x")).status_code == 401


async def test_public_image_names_must_match(
    share_client: httpx.AsyncClient, account: AccountWithKey
) -> None:
    share_id = (await _share(share_client, account, png_bytes())).json()["data"]["id"]
    for name in (f"{share_id}.svg", share_id, f"{share_id}.png.png", "x.png", "..%2Fx.png"):
        response = await share_client.get(f"/share-images/{name}")
        assert response.status_code == 404, name


async def test_share_routes_in_openapi(share_client: httpx.AsyncClient) -> None:
    paths = (await share_client.get("/openapi.json")).json()["paths"]
    assert "/openapi/mermaid/share" in paths
    assert "/openapi/mermaid/share/{share_id}" in paths
    assert not any(path.startswith("/share-images") for path in paths)
    assert "/openapi/uploads/tasks/{task_id}/chunks" in paths
