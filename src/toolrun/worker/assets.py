"""The asset gateway of image jobs: sources read from storage, outputs stored as generated assets."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from toolrun.config import Settings
from toolrun.core import uploads
from toolrun.core.clock import Clock
from toolrun.core.errors import InvalidInput
from toolrun.db.engine import Database
from toolrun.storage import Storage
from toolrun.tools.base import ToolFailure
from toolrun.tools.image.assets import ImageAssets, SourceImage

READ_CHUNK_BYTES = 1024 * 1024


async def _file_chunks(path: Path) -> AsyncIterator[bytes]:
    handle = await asyncio.to_thread(path.open, "rb")
    try:
        while chunk := await asyncio.to_thread(handle.read, READ_CHUNK_BYTES):
            yield chunk
    finally:
        await asyncio.to_thread(handle.close)


class StoredImageAssets:
    """The assets of one account, as one image job sees them."""

    def __init__(
        self,
        *,
        account_id: str,
        db: Database,
        storage: Storage,
        settings: Settings,
        clock: Clock,
    ) -> None:
        self.account_id = account_id
        self.db = db
        self.storage = storage
        self.settings = settings
        self.clock = clock

    @asynccontextmanager
    async def source(self, task_id: str) -> AsyncIterator[SourceImage]:
        async with self.db.read() as session:
            try:
                asset = await uploads.get_complete_asset(
                    session, self.account_id, task_id, self.clock()
                )
            except InvalidInput as exc:
                raise ToolFailure(400, exc.message) from None
        async with self.storage.local_path(asset.storage_key) as path:
            yield SourceImage(path=path, file_name=asset.file_name, mime_type=asset.mime_type)

    async def save_generated(
        self,
        *,
        source_task_id: str,
        path: Path,
        file_name: str,
        mime_type: str,
        extension: str,
        width: int,
        height: int,
    ) -> dict[str, Any]:
        task_id = uploads.new_task_id()
        key = uploads.file_key(task_id)
        size = await self.storage.write(key, _file_chunks(path), content_type=mime_type)
        try:
            async with self.db.write() as session:
                asset = await uploads.create_generated_asset(
                    session,
                    account_id=self.account_id,
                    source_task_id=source_task_id,
                    storage_key=key,
                    file_name=file_name,
                    mime_type=mime_type,
                    extension=extension,
                    size=size,
                    width=width,
                    height=height,
                    now=self.clock(),
                    settings=self.settings,
                    task_id=task_id,
                )
        except BaseException:
            await self.storage.delete(key)
            raise
        return uploads.asset_data(asset)


def assets_factory(
    *, db: Database, storage: Storage, settings: Settings, clock: Clock
) -> Callable[[str], ImageAssets]:
    """Builds the gateway of each job's account (``ToolContext.services["assets"]``)."""

    def for_account(account_id: str) -> ImageAssets:
        return StoredImageAssets(
            account_id=account_id, db=db, storage=storage, settings=settings, clock=clock
        )

    return for_account


def worker_services(
    *, db: Database, storage: Storage, settings: Settings, clock: Clock
) -> dict[str, Any]:
    """What a worker hands its tools: the store, and each job's image asset gateway."""
    return {
        "storage": storage,
        "assets_factory": assets_factory(db=db, storage=storage, settings=settings, clock=clock),
    }
