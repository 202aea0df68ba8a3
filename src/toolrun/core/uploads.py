"""Upload sessions and assets: create, receive chunks, complete (merge and check), read, expire.

States: ``pending`` -> ``complete`` (after a successful complete) -> ``expired``
(past ``expires_at``; the sweeper deletes its files). A row past its
``expires_at`` reads as not found even before the sweeper has been by.

Storage keys of an asset live under ``uploads/<taskId>/``: the chunks as the
parts of ``chunks`` (:meth:`Storage.write_part`), the merged or generated file
at ``file``.

Receiving a chunk and completing do storage I/O, which must not happen while a
database transaction holds locks (on SQLite a write transaction blocks every
other writer), so these two take the :class:`Database` and open short
transactions around the I/O themselves; every state change is a guarded
UPDATE or an upsert, so concurrent chunks and concurrent completes are safe.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import sqlite3
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from toolrun.config import Settings
from toolrun.core.assets import (
    SNIFF_BYTES,
    FileType,
    clean_file_name,
    extension_of,
    name_for_type,
    sniff_image,
)
from toolrun.core.clock import isoformat
from toolrun.core.errors import Conflict, InvalidInput, NotFound
from toolrun.db.dialect import upsert_insert_for
from toolrun.db.engine import Database, ReadSession, SqliteStatement, WriteSession
from toolrun.db.tables import Asset, AssetKind, AssetStatus, UploadChunk
from toolrun.storage import ObjectChanged, ObjectNotFound, Storage, StorageError

DEFAULT_CHUNK_BYTES = 5 * 1024 * 1024
MAX_CHUNK_BYTES = 8 * 1024 * 1024
MAX_CHUNKS = 10_000  # S3's part limit; smaller chunk sizes are raised to stay within it
COMPLETED_MEANWHILE_WAITS_S = (0, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2)
MISSING_LISTED = 20  # indexes named in a "missing chunks" message


class UploadNotFound(NotFound):
    """Upload task not found."""


class UploadPending(Conflict):
    """The upload is not complete yet: send every chunk, then complete it."""

    def __init__(self, message: str | None = None, *, progress: dict[str, Any] | None = None):
        super().__init__(message)
        self.progress = progress  # for meta: the session and the chunks received (resuming)


class UploadAlreadyComplete(Conflict):
    """The upload is already complete: its chunks can no longer change."""


class ChunkReplaced(Conflict):
    """A chunk was sent again while the upload was being completed: complete it again."""


class UnreadableImage(InvalidInput):
    """The file is not an image toolrun can read (JPEG, PNG, WebP, GIF, TIFF or AVIF)."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.__doc__, field="file")


@dataclass(frozen=True)
class ProbedImage:
    """What an image's header says (decoding no pixels)."""

    format: str  # one of toolrun.core.assets.TYPES
    width: int
    height: int


ImageProbe = Callable[[Path], Awaitable[ProbedImage]]
"""Reads an image file's header; raises :class:`UnreadableImage`. Passed in by the caller,
since core may not import libvips."""


@dataclass(frozen=True)
class ChunkProgress:
    task_id: str
    chunk_index: int
    uploaded_chunks: int
    total_chunks: int


# --- keys and paths -----------------------------------------------------------------------------


def asset_prefix(task_id: str) -> str:
    return f"uploads/{task_id}/"


def parts_key(task_id: str) -> str:
    """Where the chunks are gathered until complete (the storage's parts of this key)."""
    return f"uploads/{task_id}/chunks"


def file_key(task_id: str) -> str:
    """Where an asset's file is stored (uploaded: the merged chunks; generated: the output)."""
    return f"uploads/{task_id}/file"


def new_task_id() -> str:
    return str(uuid.uuid4())


def _parse_id(task_id: str) -> str | None:
    try:
        return str(uuid.UUID(task_id))
    except ValueError:
        return None


# --- creating a session ---------------------------------------------------------------------------


def _declared_size(size: int | None, file_size: int | None) -> int:
    if size is None and file_size is None:
        raise InvalidInput("give the file's byte length as size or fileSize", field="size")
    if size is not None and file_size is not None and size != file_size:
        raise InvalidInput(
            f"size ({size}) and fileSize ({file_size}) differ; give one byte length", field="size"
        )
    declared = size if size is not None else file_size
    assert declared is not None
    return declared


def plan_chunks(size: int, chunk_size: int | None) -> tuple[int, int]:
    """``(chunk_size, total_chunks)`` for a file of ``size`` bytes (at most MAX_CHUNKS chunks)."""
    chunk = min(chunk_size or DEFAULT_CHUNK_BYTES, MAX_CHUNK_BYTES)
    chunk = max(chunk, math.ceil(size / MAX_CHUNKS))
    chunk = min(chunk, size)  # one chunk holds a small file whole
    return chunk, math.ceil(size / chunk)


async def create_session(
    session: WriteSession,
    *,
    account_id: str,
    file_name: str,
    mime_type: str,
    size: int | None,
    file_size: int | None,
    chunk_size: int | None,
    settings: Settings,
    now: datetime,
) -> Asset:
    """Open a pending upload of ``size`` bytes; 400 over TOOLRUN_MAX_UPLOAD_BYTES."""
    name = clean_file_name(file_name)
    declared = _declared_size(size, file_size)
    if declared > settings.max_upload_bytes:
        raise InvalidInput(
            f"the file is {declared} bytes; at most {settings.max_upload_bytes} are accepted",
            field="size",
        )
    chunk, total = plan_chunks(declared, chunk_size)
    task_id = new_task_id()
    asset = Asset(
        id=task_id,
        account_id=account_id,
        kind=AssetKind.UPLOADED,
        status=AssetStatus.PENDING,
        file_name=name,
        mime_type=mime_type.strip()[:127] or "application/octet-stream",
        extension=extension_of(name),
        size=declared,
        file_size=None,
        chunk_size=chunk,
        total_chunks=total,
        storage_key=file_key(task_id),
        created_at=now,
        expires_at=now + timedelta(seconds=settings.upload_ttl_s),
    )
    session.add(asset)
    await session.flush()
    return asset


# --- finding ----------------------------------------------------------------------------------------


async def get_owned(
    session: ReadSession | WriteSession,
    *,
    account_id: str,
    task_id: str,
    now: datetime,
    lock: bool = False,
) -> Asset:
    """The caller's live asset in any state but expired; 404 for unknown, foreign, expired or
    malformed ids alike. ``lock`` takes the row lock (``FOR UPDATE``) in a write session."""
    parsed = _parse_id(task_id)
    asset = (
        await session.get(Asset, parsed, populate_existing=True, with_for_update=lock)
        if parsed
        else None
    )
    return _live_or_404(asset, account_id, task_id, now)


class _Owned(Protocol):
    @property
    def account_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def expires_at(self) -> datetime: ...


Found = TypeVar("Found", bound=_Owned)


def _live_or_404(found: Found | None, account_id: str, task_id: str, now: datetime) -> Found:
    """``found`` (an asset or a row of its columns) if it is the caller's and live, else 404."""
    if (
        found is None
        or found.account_id != account_id
        or found.status == AssetStatus.EXPIRED
        or found.expires_at <= now
    ):
        raise UploadNotFound(f"upload task {task_id} not found")
    return found


async def get_asset(
    session: ReadSession | WriteSession, *, account_id: str, task_id: str, now: datetime
) -> Asset:
    """The caller's complete asset; 404 as :func:`get_owned`, 409 while still pending."""
    asset = await get_owned(session, account_id=account_id, task_id=task_id, now=now)
    if asset.status != AssetStatus.COMPLETE:
        raise UploadPending()
    return asset


async def get_meta(
    session: ReadSession | WriteSession, *, account_id: str, task_id: str, now: datetime
) -> Asset:
    """The caller's complete asset, as :func:`get_asset`; for a pending session the 409 carries
    ``progress`` (:func:`pending_data`), so a client that lost track can send only what is
    missing (tus' offset, S3's ListParts)."""
    asset = await get_owned(session, account_id=account_id, task_id=task_id, now=now)
    if asset.status == AssetStatus.COMPLETE:
        return asset
    received = await received_indexes(session, asset.id)
    raise UploadPending(
        f"upload {asset.id} is not complete yet: {len(received)} of {asset.total_chunks} "
        "chunks received; send the rest, then complete it",
        progress=pending_data(asset, received),
    )


async def get_complete_asset(
    session: ReadSession | WriteSession, account_id: str, task_id: str, now: datetime
) -> Asset:
    """For image jobs: the caller's complete, unexpired asset, else 400 naming ``taskId``."""
    try:
        return await get_asset(session, account_id=account_id, task_id=task_id, now=now)
    except UploadNotFound:
        message = f"taskId {task_id} names no upload of this account, or it has expired"
    except UploadPending:
        message = f"upload {task_id} is not complete yet"
    raise InvalidInput(message, field="taskId")


# --- chunks -------------------------------------------------------------------------------------------


def expected_chunk_bytes(asset: Asset | ChunkPlan, index: int) -> int:
    """The exact length chunk ``index`` must have; 400 for an index outside the file."""
    if index < 0 or index >= asset.total_chunks:
        raise InvalidInput(
            f"chunk index {index} is outside 0..{asset.total_chunks - 1}", field="index"
        )
    if index < asset.total_chunks - 1:
        return asset.chunk_size
    return asset.size - asset.chunk_size * (asset.total_chunks - 1)


def _wrong_length(index: int, got: int, expected: int) -> InvalidInput:
    if got == 0:
        return InvalidInput(f"chunk {index} is empty", field="chunk")
    return InvalidInput(
        f"chunk {index} has {got} bytes; it must have {expected}"
        + (" (more than declared)" if got > expected else ""),
        field="chunk",
    )


async def receive_chunk(
    db: Database,
    storage: Storage,
    *,
    account_id: str,
    task_id: str,
    index: int,
    data: bytes | memoryview,
    now: datetime,
) -> ChunkProgress:
    """Store chunk ``index`` (replacing an earlier copy) and record it; its length is checked
    before any byte is stored.

    Core statements rather than the ORM: this runs once per chunk, and the ORM's
    unit of work cost more CPU than the rest of the database work together. The
    plan is read once per session and process (:func:`_cached_plan`); the state
    is checked where the chunk is recorded.
    """
    plan = await _cached_plan(db, account_id, task_id, now)
    expected = expected_chunk_bytes(plan, index)
    if len(data) != expected:
        raise _wrong_length(index, len(data), expected)
    try:
        await storage.write_part(
            parts_key(plan.id), index, index * plan.chunk_size, data, total_size=plan.size
        )
    except ObjectChanged:
        raise UploadAlreadyComplete() from None
    recorded = {"asset_id": plan.id, "chunk_index": index, "size": expected, "received_at": now}
    try:
        if db.is_sqlite:
            uploaded = await db.sqlite_unit(
                lambda connection: _record_chunk_on_sqlite(
                    connection, account_id, task_id, now, recorded
                ),
                write=True,
            )
        else:
            async with db.transaction() as connection:
                # The row lock orders the short recording transactions of one session, so each
                # count sees every chunk recorded before it (the storage writes stay parallel).
                await _chunk_plan(connection, account_id, task_id, now, lock=True)
                await connection.execute(_record_chunk_statement(db.dialect), recorded)
                uploaded = (await connection.execute(_COUNT_CHUNKS, {"id": plan.id})).scalar_one()
    except UploadAlreadyComplete:
        # completed between the check above and the write: the part is a leftover
        with contextlib.suppress(StorageError):
            await storage.delete_prefix(parts_key(plan.id))
        raise
    return ChunkProgress(
        task_id=plan.id, chunk_index=index, uploaded_chunks=uploaded, total_chunks=plan.total_chunks
    )


@dataclass(frozen=True)
class ChunkPlan:
    """What receiving a chunk needs to know of its pending session (none of it ever changes)."""

    id: str
    account_id: str
    expires_at: datetime
    chunk_size: int
    total_chunks: int
    size: int


_PLAN = select(
    Asset.id,
    Asset.account_id,
    Asset.status,
    Asset.chunk_size,
    Asset.total_chunks,
    Asset.size,
    Asset.expires_at,
).where(Asset.id == bindparam("id"))
_LOCKED_PLAN = _PLAN.with_for_update()
_COUNT_CHUNKS = (
    select(func.count()).select_from(UploadChunk).where(UploadChunk.asset_id == bindparam("id"))
)


async def _chunk_plan(
    connection: AsyncConnection, account_id: str, task_id: str, now: datetime, *, lock: bool
) -> ChunkPlan:
    """The pending session's plan; 404 as :func:`get_owned`, 409 once complete."""
    parsed = _parse_id(task_id)
    found: Any = (
        (await connection.execute(_LOCKED_PLAN if lock else _PLAN, {"id": parsed})).first()
        if parsed
        else None
    )
    return _plan_of(found, account_id, task_id, now)


def _record_chunk_on_sqlite(
    connection: sqlite3.Connection,
    account_id: str,
    task_id: str,
    now: datetime,
    recorded: dict[str, Any],
) -> int:
    """:func:`receive_chunk`'s recording transaction as one SQLite unit (BEGIN IMMEDIATE
    orders the units of one session as the row lock does on PostgreSQL)."""
    parsed = _parse_id(task_id)
    found = _SQLITE_PLAN.first(connection, {"id": parsed}) if parsed else None
    _plan_of(found, account_id, task_id, now)
    _SQLITE_RECORD_CHUNK.run(connection, recorded)
    uploaded: int = _SQLITE_COUNT_CHUNKS.scalar(connection, {"id": recorded["asset_id"]})
    return uploaded


def _plan_of(found: Any, account_id: str, task_id: str, now: datetime) -> ChunkPlan:
    row = _live_or_404(found, account_id, task_id, now)
    if row.status != AssetStatus.PENDING:
        raise UploadAlreadyComplete()
    return ChunkPlan(
        id=row.id,
        account_id=row.account_id,
        expires_at=row.expires_at,
        chunk_size=row.chunk_size,
        total_chunks=row.total_chunks,
        size=row.size,
    )


_PLANS: OrderedDict[str, ChunkPlan] = OrderedDict()
PLANS_CACHED = 1024


async def _cached_plan(db: Database, account_id: str, task_id: str, now: datetime) -> ChunkPlan:
    """The session's plan, read from the database the first time only: a plan never changes,
    nor do its owner and expiry, which are checked on every call all the same."""
    plan = _PLANS.get(task_id)
    if plan is None:
        async with db.statement(write=False) as connection:
            plan = await _chunk_plan(connection, account_id, task_id, now, lock=False)
        _PLANS[task_id] = plan
        while len(_PLANS) > PLANS_CACHED:
            _PLANS.popitem(last=False)
    if plan.account_id != account_id or plan.expires_at <= now:
        raise UploadNotFound(f"upload task {task_id} not found")
    return plan


@functools.cache
def _record_chunk_statement(dialect: str) -> Any:
    insert = upsert_insert_for(dialect, UploadChunk)
    return insert.on_conflict_do_update(
        index_elements=["asset_id", "chunk_index"],
        set_={"size": insert.excluded.size, "received_at": insert.excluded.received_at},
    )


_SQLITE_PLAN = SqliteStatement(_PLAN)
_SQLITE_RECORD_CHUNK = SqliteStatement(_record_chunk_statement("sqlite"))
_SQLITE_COUNT_CHUNKS = SqliteStatement(_COUNT_CHUNKS)


async def received_indexes(session: ReadSession | WriteSession, asset_id: str) -> set[int]:
    rows = await session.scalars(
        select(UploadChunk.chunk_index).where(UploadChunk.asset_id == asset_id)
    )
    return set(rows)


def _missing_message(missing: list[int]) -> str:
    listed = ", ".join(str(index) for index in missing[:MISSING_LISTED])
    more = f" and {len(missing) - MISSING_LISTED} more" if len(missing) > MISSING_LISTED else ""
    noun = "chunk is" if len(missing) == 1 else "chunks are"
    return f"{len(missing)} {noun} missing: {listed}{more}"


# --- completing ---------------------------------------------------------------------------------------


async def complete(
    db: Database,
    storage: Storage,
    *,
    account_id: str,
    task_id: str,
    total_chunks: int,
    probe: ImageProbe,
    settings: Settings,
    now: datetime,
) -> Asset:
    """Merge the chunks, check the result is an image within the limits, and mark it complete.

    A second complete answers the same asset. On a 400 (missing chunks, not an
    image, too many pixels) the session stays pending and its chunks are kept;
    so it does on a 409 when a chunk was replaced during the merge (S3 pins
    each chunk's ETag; the file backend locks out chunk writes while it checks
    and publishes the file).
    """
    async with db.read() as session:
        asset = await get_owned(session, account_id=account_id, task_id=task_id, now=now)
        if asset.status == AssetStatus.COMPLETE:
            return asset
        present = await received_indexes(session, asset.id)
    if total_chunks != asset.total_chunks:
        raise InvalidInput(
            f"totalChunks is {total_chunks}; this upload has {asset.total_chunks} chunks",
            field="totalChunks",
        )
    missing = [index for index in range(asset.total_chunks) if index not in present]
    if missing:
        raise InvalidInput(_missing_message(missing), field="totalChunks")
    try:
        stored, (file_type, probed) = await storage.assemble(
            parts_key(asset.id),
            asset.total_chunks,
            file_key(asset.id),
            _image_check(storage, probe, settings),
        )
    except ObjectNotFound:
        return await _completed_meanwhile(db, account_id, task_id, now)
    except ObjectChanged:
        raise ChunkReplaced() from None
    async with db.write() as session:
        finished = (
            await session.execute(
                update(Asset)
                .where(Asset.id == asset.id, Asset.status == AssetStatus.PENDING)
                .values(
                    status=AssetStatus.COMPLETE,
                    file_name=name_for_type(asset.file_name, file_type),
                    mime_type=file_type.mime_type,
                    extension=file_type.extension,
                    file_size=stored,
                    width=probed.width,
                    height=probed.height,
                    completed_at=now,
                )
                .returning(Asset.id)
            )
        ).first()
        if finished is not None:
            await session.execute(delete(UploadChunk).where(UploadChunk.asset_id == asset.id))
        result = await get_asset(session, account_id=account_id, task_id=task_id, now=now)
    with contextlib.suppress(StorageError):
        await storage.delete_prefix(parts_key(asset.id))
    return result


async def _completed_meanwhile(db: Database, account_id: str, task_id: str, now: datetime) -> Asset:
    """The chunks vanished during the merge: a concurrent complete published them and is about
    to record the asset (or has). Wait briefly for that record; if none comes, that complete
    died between the two steps and the chunks must be sent again."""
    for delay in COMPLETED_MEANWHILE_WAITS_S:
        await asyncio.sleep(delay)
        async with db.read() as session:
            asset = await get_owned(session, account_id=account_id, task_id=task_id, now=now)
        if asset.status == AssetStatus.COMPLETE:
            return asset
    raise InvalidInput("a chunk was lost; send the chunks again", field="totalChunks")


def _image_check(
    storage: Storage, probe: ImageProbe, settings: Settings
) -> Callable[[str], Awaitable[tuple[FileType, ProbedImage]]]:
    """The check :meth:`Storage.assemble` runs on the merged bytes before publishing them."""

    async def check(key: str) -> tuple[FileType, ProbedImage]:
        file_type, probed = await _identify(storage, key, probe)
        _check_pixels(probed, settings)
        return file_type, probed

    return check


async def _identify(storage: Storage, key: str, probe: ImageProbe) -> tuple[FileType, ProbedImage]:
    """The type from the first bytes, confirmed and measured by the header probe."""
    head = b""
    async with contextlib.aclosing(storage.read(key, end=SNIFF_BYTES)) as pieces:
        async for piece in pieces:
            head += piece
    sniffed = sniff_image(head)
    if sniffed is None:
        raise UnreadableImage()
    async with storage.local_path(key) as path:
        probed = await probe(path)
    if probed.format != sniffed.name:
        raise UnreadableImage(
            f"the file starts like {sniffed.name.upper()} but does not read as one"
        )
    return sniffed, probed


def _check_pixels(probed: ProbedImage, settings: Settings) -> None:
    pixels = probed.width * probed.height
    if pixels > settings.max_image_pixels:
        raise InvalidInput(
            f"the image is {probed.width}x{probed.height} ({pixels} pixels); "
            f"at most {settings.max_image_pixels} pixels are accepted",
            field="file",
        )


# --- generated assets ---------------------------------------------------------------------------------


async def create_generated_asset(
    session: WriteSession,
    *,
    account_id: str,
    source_task_id: str,
    storage_key: str,
    file_name: str,
    mime_type: str,
    extension: str,
    size: int,
    width: int | None,
    height: int | None,
    now: datetime,
    settings: Settings | None = None,
    task_id: str | None = None,
) -> Asset:
    """Record an image job's output, already stored at ``storage_key``, as a complete asset.

    Store it at ``file_key(task_id)`` with ``task_id = new_task_id()`` so the
    sweeper removes it with the asset; it expires TOOLRUN_UPLOAD_TTL_S after
    ``now`` (default 86400 s when ``settings`` is not given).
    """
    ttl = settings.upload_ttl_s if settings is not None else 86400
    asset = Asset(
        id=task_id or new_task_id(),
        account_id=account_id,
        kind=AssetKind.GENERATED,
        status=AssetStatus.COMPLETE,
        file_name=clean_file_name(file_name),
        mime_type=mime_type,
        extension=extension,
        size=size,
        file_size=size,
        chunk_size=size,
        total_chunks=1,
        width=width,
        height=height,
        storage_key=storage_key,
        source_id=source_task_id,
        created_at=now,
        completed_at=now,
        expires_at=now + timedelta(seconds=ttl),
    )
    session.add(asset)
    await session.flush()
    return asset


# --- serving ----------------------------------------------------------------------------------------


ROLES = ("output", "preview", "uploaded_source", "input")


@dataclass(frozen=True)
class ServedFile:
    """Which stored object a file request gets, and how to describe it."""

    key: str
    mime_type: str
    file_name: str
    size: int


def _served(asset: Asset) -> ServedFile:
    return ServedFile(
        key=asset.storage_key,
        mime_type=asset.mime_type,
        file_name=asset.file_name,
        size=asset.file_size or 0,
    )


async def file_for_role(
    session: ReadSession | WriteSession, *, asset: Asset, role: str | None, now: datetime
) -> ServedFile:
    """The file of ``role`` for a complete asset (DESIGN §5 "Upload sessions").

    Uploaded: ``uploaded_source`` = ``input`` = ``preview`` = the file (the default).
    Generated: ``output`` = ``preview`` = the result (the default), ``input`` = its source
    (404 once the source is gone). Any other role for the kind: 400 naming the allowed ones.
    """
    generated = asset.kind == AssetKind.GENERATED
    allowed = (
        ("output", "input", "preview") if generated else ("uploaded_source", "input", "preview")
    )
    role = role or ("output" if generated else "uploaded_source")
    if role not in allowed:
        raise InvalidInput(
            f"role {role!r} is not available for a {asset.kind} asset; use one of "
            + ", ".join(allowed),
            field="role",
        )
    if generated and role == "input":
        if asset.source_id is None:
            raise UploadNotFound("this asset has no source file")
        try:
            source = await get_asset(
                session, account_id=asset.account_id, task_id=asset.source_id, now=now
            )
        except (UploadNotFound, UploadPending):
            raise UploadNotFound("the source of this asset has expired") from None
        return _served(source)
    return _served(asset)


def asset_paths(task_id: str) -> tuple[str, str]:
    """``(downloadPath, previewPath)`` of an asset."""
    base = f"/openapi/uploads/tasks/{task_id}/file"
    return f"{base}?download=1", f"{base}?role=preview"


def asset_data(asset: Asset) -> dict[str, Any]:
    """An asset in SPEC's "Upload asset" shape."""
    download_path, preview_path = asset_paths(asset.id)
    return {
        "taskId": asset.id,
        "kind": asset.kind,
        "fileName": asset.file_name,
        "mimeType": asset.mime_type,
        "extension": asset.extension,
        "size": asset.size,
        "fileSize": asset.file_size if asset.file_size is not None else asset.size,
        "createdAt": isoformat(asset.created_at),
        "expiresAt": isoformat(asset.expires_at),
        "width": asset.width,
        "height": asset.height,
        "downloadPath": download_path,
        "previewPath": preview_path,
    }


def session_data(asset: Asset) -> dict[str, Any]:
    """An upload session in SPEC's "Upload session" shape."""
    return {
        "taskId": asset.id,
        "chunkSize": asset.chunk_size,
        "totalChunks": asset.total_chunks,
        "expiresAt": isoformat(asset.expires_at),
    }


def pending_data(asset: Asset, received: set[int]) -> dict[str, Any]:
    """A pending session and the chunk indexes recorded so far (each was answered 201)."""
    indexes = sorted(received)
    return {
        "taskId": asset.id,
        "status": "pending",
        "chunkSize": asset.chunk_size,
        "totalChunks": asset.total_chunks,
        "uploadedChunks": len(indexes),
        "receivedChunks": indexes,
        "expiresAt": isoformat(asset.expires_at),
    }


def progress_data(progress: ChunkProgress) -> dict[str, Any]:
    return {
        "taskId": progress.task_id,
        "chunkIndex": progress.chunk_index,
        "uploadedChunks": progress.uploaded_chunks,
        "totalChunks": progress.total_chunks,
    }


# --- expiry -------------------------------------------------------------------------------------------


async def expired_assets(
    session: ReadSession | WriteSession, *, now: datetime, limit: int
) -> list[Asset]:
    """Pending or complete assets past their ``expires_at``, oldest first."""
    rows = await session.scalars(
        select(Asset)
        .where(
            Asset.status.in_((AssetStatus.PENDING, AssetStatus.COMPLETE)),
            Asset.expires_at <= now,
        )
        .order_by(Asset.expires_at)
        .limit(limit)
    )
    return list(rows)


async def mark_expired(session: WriteSession, *, asset_ids: list[str], now: datetime) -> int:
    """Mark these assets expired (their files are gone) and drop their chunk rows."""
    if not asset_ids:
        return 0
    await session.execute(delete(UploadChunk).where(UploadChunk.asset_id.in_(asset_ids)))
    result = await session.execute(
        update(Asset)
        .where(Asset.id.in_(asset_ids), Asset.expires_at <= now)
        .values(status=AssetStatus.EXPIRED)
        .returning(Asset.id)
    )
    return len(result.all())
