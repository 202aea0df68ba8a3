"""Diagram shares: diagram code plus its rendered image, charged 1 credit, refunded on failure.

Creation runs in three steps so no transaction is open during storage I/O:
reserve the credit (committed; 402 if short), store the image, record the
share. If storing or recording fails, the credit is refunded in a new
transaction and the caller gets :class:`ShareFailed` (500). Shares do not
expire; their image is public under an unguessable id.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from toolrun.core import credits
from toolrun.core.assets import SNIFF_BYTES, FileType, sniff_image
from toolrun.core.errors import InvalidInput, NotFound, ServiceError
from toolrun.db.engine import Database, ReadSession
from toolrun.db.tables import Share
from toolrun.storage import Storage, StorageError

MAX_CODE_BYTES = 100 * 1024  # UTF-8 bytes
MAX_IMAGE_BYTES = 5 * 1024 * 1024
OPERATION = "mermaid-share"
ALLOWED_TYPES = ("png", "jpeg", "webp", "svg")
log = logging.getLogger("toolrun.shares")


class ShareNotFound(NotFound):
    """Share not found."""


class ShareFailed(ServiceError):
    """The share could not be stored; the credit was returned. Try again."""

    status = 500


@dataclass(frozen=True)
class CreatedShare:
    share: Share
    balance: int  # after the charge


def share_image_key(share_id: str, extension: str) -> str:
    return f"shares/{share_id}.{extension}"


def check_code(code: str) -> str:
    """The diagram code, refused (400) when empty or over 100 KB of UTF-8."""
    size = len(code.encode("utf-8", "surrogatepass"))
    if not code.strip():
        raise InvalidInput("code is empty", field="code")
    if size > MAX_CODE_BYTES:
        raise InvalidInput(
            f"code is {size} bytes; at most {MAX_CODE_BYTES} are accepted", field="code"
        )
    return code


def check_image(head: bytes, length: int | None) -> FileType:
    """The image's type from its first bytes: PNG, JPEG, WebP or SVG within 5 MiB, else 400."""
    if length is not None and length > MAX_IMAGE_BYTES:
        raise InvalidInput(
            f"image is {length} bytes; at most {MAX_IMAGE_BYTES} are accepted", field="image"
        )
    if not head:
        raise InvalidInput("image is empty", field="image")
    found = sniff_image(head, allow_svg=True)
    if found is None or found.name not in ALLOWED_TYPES:
        raise InvalidInput("image must be a PNG, JPEG, WebP or SVG file", field="image")
    return found


async def _capped(data: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    received = 0
    async for piece in data:
        received += len(piece)
        if received > MAX_IMAGE_BYTES:
            raise InvalidInput(f"image is over {MAX_IMAGE_BYTES} bytes", field="image")
        yield piece


async def create(
    db: Database,
    storage: Storage,
    *,
    account_id: str,
    code: str,
    head: bytes,
    image: AsyncIterable[bytes],
    length: int | None,
    now: datetime,
) -> CreatedShare:
    """Charge 1 credit and store the share; ``head`` is the image's first bytes (at least
    ``SNIFF_BYTES`` of them, or the whole image), ``image`` all of its bytes.

    400 (nothing charged) for bad input, 402 when short of credits, 500 with
    the credit refunded when storing fails.
    """
    check_code(code)
    file_type = check_image(head[:SNIFF_BYTES], length)
    share_id = str(uuid.uuid4())
    async with db.write() as session:
        reservation = await credits.reserve(
            session,
            account_id=account_id,
            reference=f"share:{share_id}",
            operation=OPERATION,
            now=now,
        )
    key = share_image_key(share_id, file_type.extension)
    try:
        size = await storage.write(key, _capped(image), content_type=file_type.mime_type)
        async with db.write() as session:
            share = Share(
                id=share_id,
                account_id=account_id,
                code=code,
                image_key=key,
                mime_type=file_type.mime_type,
                extension=file_type.extension,
                size=size,
                created_at=now,
            )
            session.add(share)
    except BaseException as exc:
        await _undo(db, storage, reservation_id=reservation.id, key=key, now=now)
        if isinstance(exc, InvalidInput):
            raise
        if isinstance(exc, Exception):
            log.exception("storing share %s failed", share_id)
            raise ShareFailed() from None
        raise
    return CreatedShare(share=share, balance=reservation.balance_after)


async def _undo(
    db: Database, storage: Storage, *, reservation_id: str, key: str, now: datetime
) -> None:
    """Refund the reservation and remove a stored image; logged, never raised."""
    try:
        async with db.write() as session:
            await credits.refund(session, reservation_id=reservation_id, now=now)
    except Exception:
        log.exception("refund of reservation %s failed", reservation_id)
    with contextlib.suppress(StorageError, ValueError):
        await storage.delete(key)


def _parse_id(share_id: str) -> str | None:
    try:
        return str(uuid.UUID(share_id))
    except ValueError:
        return None


async def get(session: ReadSession, *, share_id: str) -> Share:
    """Any share by id (shares are public to key holders); 404 when unknown or malformed."""
    parsed = _parse_id(share_id)
    share = await session.get(Share, parsed) if parsed else None
    if share is None:
        raise ShareNotFound(f"share {share_id} not found")
    return share


async def by_image_name(session: ReadSession, *, name: str) -> Share:
    """The share whose image is ``<id>.<ext>``; 404 otherwise."""
    share_id, _, extension = name.partition(".")
    parsed = _parse_id(share_id) if len(share_id) == 36 else None
    share = await session.scalar(select(Share).where(Share.id == parsed)) if parsed else None
    if share is None or share.extension != extension:
        raise ShareNotFound("share image not found")
    return share


def image_url(share: Share, base_url: str) -> str:
    return f"{base_url.rstrip('/')}/share-images/{share.id}.{share.extension}"


def share_data(share: Share, base_url: str, *, with_code: bool) -> dict[str, Any]:
    """The creation (``id``, ``imageUrl``) or read (plus ``code``) response of SPEC."""
    data: dict[str, Any] = {"id": share.id}
    if with_code:
        data["code"] = share.code
    data["imageUrl"] = image_url(share, base_url)
    return data
