"""The upload sweeper: expired sessions and assets lose their files and are marked expired;
abandoned partial writes are purged; it runs as the worker's maintenance."""

from __future__ import annotations

import os
import time

import httpx
from sqlalchemy import select

from tests.api.uploadkit import (
    TASKS,
    account,
    both_stores,
    files_app,
    files_client,
    open_session,
    png_bytes,
    send_chunk,
    store,
    uploaded,
)
from tests.conftest import Clock
from tests.factories import AccountWithKey
from tests.servers.s3 import s3_bucket, s3_env, s3_server
from toolrun.cli import in_process_worker
from toolrun.core import uploads
from toolrun.db.engine import Database
from toolrun.db.tables import Asset, UploadChunk
from toolrun.storage import FileStorage, Storage
from toolrun.worker.sweeper import sweep

__all__ = ["account", "files_app", "files_client", "s3_bucket", "s3_env", "s3_server", "store"]


async def _keys(store: Storage) -> list[str]:
    return [key async for key in store.list_keys("")]


@both_stores
async def test_sweep_deletes_expired_files_and_marks_rows(
    files_client: httpx.AsyncClient,
    db: Database,
    store: Storage,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    old = await uploaded(files_client, account, png_bytes())
    pending = await open_session(files_client, account, size=30, chunk_size=10)
    await send_chunk(files_client, account, pending["taskId"], 1, b"y" * 10)
    generated_key = "generated/elsewhere.png"
    await store.write_bytes(generated_key, png_bytes())
    async with db.write() as session:
        generated = await uploads.create_generated_asset(
            session,
            account_id=account.id,
            source_task_id=old["taskId"],
            storage_key=generated_key,
            file_name="out.png",
            mime_type="image/png",
            extension="png",
            size=10,
            width=4,
            height=3,
            now=clock(),
        )
    clock.advance(hours=12)
    young = await uploaded(files_client, account, png_bytes(5, 5))
    clock.advance(hours=12)

    result = await sweep(db, store, clock=clock)

    assert result.expired == 3
    assert await _keys(store) == [uploads.file_key(young["taskId"])]
    async with db.read() as session:
        statuses = dict((await session.execute(select(Asset.id, Asset.status))).all())
        chunks = list(await session.scalars(select(UploadChunk)))
    assert statuses == {
        old["taskId"]: "expired",
        pending["taskId"]: "expired",
        generated.id: "expired",
        young["taskId"]: "complete",
    }
    assert chunks == []
    meta = await files_client.get(f"{TASKS}/{old['taskId']}/meta", headers=account.headers)
    assert meta.status_code == 404
    again = await sweep(db, store, clock=clock)
    assert (again.expired, again.objects_deleted) == (0, 0)
    young_meta = await files_client.get(f"{TASKS}/{young['taskId']}/meta", headers=account.headers)
    assert young_meta.status_code == 200


async def test_sweep_purges_abandoned_partial_writes(
    db: Database, store: Storage, clock: Clock
) -> None:
    assert isinstance(store, FileStorage)
    stale = store.root / ".tmp" / "crashed.part"
    fresh = store.root / ".tmp" / "in-flight.part"
    stale.write_bytes(b"half a chunk")
    fresh.write_bytes(b"being written")
    an_hour_ago = time.time() - 3700
    os.utime(stale, (an_hour_ago, an_hour_ago))
    result = await sweep(db, store, clock=clock)
    assert result.incomplete_purged == 1
    assert not stale.exists()
    assert fresh.exists()


@both_stores
async def test_sweeper_is_the_in_process_workers_maintenance(
    files_client: httpx.AsyncClient,
    files_app,
    db: Database,
    store: Storage,
    account: AccountWithKey,
    clock: Clock,
) -> None:
    asset = await uploaded(files_client, account, png_bytes())
    worker = in_process_worker(files_app.state.context)
    assert len(worker.maintenance) == 1
    clock.advance(days=2)
    await worker.maintenance[0]()
    async with db.read() as session:
        row = await session.get(Asset, asset["taskId"])
    assert row is not None
    assert row.status == "expired"
    assert await _keys(store) == []
