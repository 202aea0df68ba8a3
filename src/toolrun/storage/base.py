"""The storage interface every backend implements, its errors and key rules.

Exception tree::

    StorageError            the backend failed (I/O error, S3 error, bad configuration)
    ├── ObjectNotFound      the key names no object
    └── ObjectChanged       an object was replaced while it was being read (S3's concat)

Keys are relative, "/"-separated paths such as ``uploads/<taskId>/chunks/000003``.
:func:`validate_key` refuses anything that could leave the storage root; both
backends call it on every key, so a key means the same object on either backend.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol, TypeVar

READ_CHUNK_BYTES = 256 * 1024
MAX_KEY_BYTES = 1024  # S3's limit, applied to both backends
TEMP_SEGMENT = ".tmp"  # first key segment reserved for in-flight writes of the file backend
Checked = TypeVar("Checked")


class StorageError(Exception):
    """The storage backend failed."""


class ObjectNotFound(StorageError):
    """The key names no object."""

    def __init__(self, key: str) -> None:
        super().__init__(f"object not found: {key}")
        self.key = key


class ObjectChanged(StorageError):
    """The object was replaced while it was being read: the operation stored nothing."""

    def __init__(self, key: str) -> None:
        super().__init__(f"object changed while being read: {key}")
        self.key = key


@dataclass(frozen=True)
class ObjectInfo:
    """What :meth:`Storage.stat` knows about a stored object."""

    key: str
    size: int
    etag: str  # opaque, changes when the object is replaced; quoted like an HTTP ETag
    modified: datetime  # timezone-aware UTC
    content_type: str | None  # S3: the stored Content-Type; the file backend keeps none (None)


def validate_key(key: str) -> str:
    """Return ``key`` unchanged or raise ValueError if it is not a safe relative key.

    Refused: empty keys, keys over 1024 UTF-8 bytes, absolute paths, backslashes,
    NUL and other control characters, empty, ``.`` or ``..`` segments (so also
    a leading or trailing ``/``), and the reserved first segment ``.tmp``.
    """
    if not isinstance(key, str) or not key:
        raise ValueError("storage key must be a non-empty string")
    if len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise ValueError("storage key is longer than 1024 bytes")
    if "\\" in key or any(ord(char) < 0x20 or ord(char) == 0x7F for char in key):
        raise ValueError(f"storage key has a forbidden character: {key!r}")
    segments = key.split("/")
    if any(segment in {"", ".", ".."} for segment in segments):
        raise ValueError(f"storage key must be a relative path without . or .. parts: {key!r}")
    if segments[0] == TEMP_SEGMENT:
        raise ValueError(f"storage key uses the reserved prefix {TEMP_SEGMENT}/: {key!r}")
    return key


def check_range(start: int, end: int | None) -> None:
    """Raise ValueError unless ``0 <= start`` and ``start <= end`` (when ``end`` is given)."""
    if start < 0:
        raise ValueError(f"read start must be >= 0, not {start}")
    if end is not None and end < start:
        raise ValueError(f"read end ({end}) is before start ({start})")


def validate_prefix(prefix: str) -> str:
    """Return ``prefix`` unchanged or raise ValueError; ``""`` and a trailing ``/`` are allowed.

    A prefix matches keys by plain string comparison, as S3 does: ``uploads/ab``
    matches ``uploads/abc/x``. Pass ``uploads/ab/`` to mean one folder.
    """
    if prefix:
        validate_key(prefix.removesuffix("/"))
    return prefix


class Storage(Protocol):
    """Blob storage for upload chunks, assets and share images.

    Every method is safe to call concurrently. Writes are atomic: an object
    either appears whole, with all its bytes, or not at all, and a reader never
    sees part of one. No method holds a whole object in memory.
    """

    async def write(
        self, key: str, chunks: AsyncIterable[bytes], *, content_type: str | None = None
    ) -> int:
        """Store the concatenated ``chunks`` under ``key`` and return the byte count.

        Replaces an existing object atomically. If ``chunks`` raises, the
        exception propagates unchanged and nothing is stored (an existing object
        under ``key`` is kept): callers enforce size limits by raising from
        their iterator.
        """
        ...

    async def write_bytes(self, key: str, data: bytes, *, content_type: str | None = None) -> int:
        """Store ``data`` under ``key`` (for small objects); return ``len(data)``."""
        ...

    def read(
        self, key: str, *, start: int = 0, end: int | None = None
    ) -> AsyncGenerator[bytes, None]:
        """Yield the bytes ``start`` (inclusive) to ``end`` (exclusive) in chunks of up to 256 KiB.

        ``end=None`` or an ``end`` beyond the object means "to the last byte"; a
        ``start`` at or past the end yields nothing. ValueError for a negative
        ``start`` or ``end < start``; ObjectNotFound is raised on the first
        iteration. A consumer that stops early should wrap the iterator in
        ``contextlib.aclosing`` so the file or connection is released at once.
        """
        ...

    async def stat(self, key: str) -> ObjectInfo | None:
        """Return the object's size, etag and modification time, or None if there is none."""
        ...

    async def delete(self, key: str) -> None:
        """Delete the object; deleting a missing key is not an error."""
        ...

    async def delete_prefix(self, prefix: str) -> int:
        """Delete every object whose key starts with ``prefix``; return how many.

        ValueError for an empty prefix (deleting everything is never meant).
        """
        ...

    def list_keys(self, prefix: str = "") -> AsyncGenerator[str, None]:
        """Yield the keys starting with ``prefix`` in ascending (UTF-8 byte) order."""
        ...

    async def concat(
        self, target_key: str, part_keys: Sequence[str], *, content_type: str | None = None
    ) -> int:
        """Store the parts, in order, as one object under ``target_key``; return its size.

        Atomic like :meth:`write`; the parts are left in place (the caller
        deletes them). ObjectNotFound if a part is missing, ObjectChanged if
        one is replaced meanwhile and the backend notices (S3), and then no
        target appears. No parts gives an empty object.
        """
        ...

    async def write_part(
        self, key: str, index: int, offset: int, data: bytes | memoryview, *, total_size: int
    ) -> None:
        """Store ``data`` as part ``index`` of the object being assembled under ``key``.

        The part holds the object's bytes ``offset`` to ``offset + len(data)``;
        ``total_size`` is the whole object's. Sending a part again replaces it.
        Parts may come in any order and concurrently. A part survives a crash
        of the process once this returns; the file backend makes parts durable
        against a crash of the host only when they are assembled (S3: at once).
        :class:`ObjectChanged` when the parts were assembled
        meanwhile (the part was not added). S3 stores each part as an object
        ``<key>/<index:06d>``; the file backend writes it at its offset in one
        file ``<key>``, so that assembling needs no copy.
        """
        ...

    async def assemble(
        self,
        key: str,
        part_count: int,
        target_key: str,
        check: Callable[[str], Awaitable[Checked]],
    ) -> tuple[int, Checked]:
        """Join parts ``0..part_count-1`` of ``key`` into ``target_key``; return its size and what
        ``check`` returned.

        ``check`` gets a key from which the joined bytes can be read (with
        :meth:`read` and :meth:`local_path`) before they are published; if it
        raises, the exception propagates, no target appears and the parts are
        kept. On success the parts are gone or unreadable as parts; call
        :meth:`delete_prefix` with ``key`` to remove what is left.
        ObjectNotFound if no part was written (or the parts were assembled
        meanwhile) and, on S3, if any part is missing: the file backend cannot
        tell a missing part from zeros, so callers count their parts first.
        ObjectChanged if a part was replaced while being joined (S3).
        """
        ...

    def local_path(self, key: str) -> AbstractAsyncContextManager[Path]:
        """``async with storage.local_path(key) as path``: the object as a local file.

        For libraries that need a file name (libvips). The file is read-only
        to the caller and valid only inside the block: the file backend yields
        the stored file itself, S3 a temporary download deleted on exit.
        ObjectNotFound if the key names no object.
        """
        ...

    async def purge_incomplete(self, older_than_s: float) -> int:
        """Remove leftovers of writes that crashed more than ``older_than_s`` seconds ago.

        File backend: temporary files; S3: multipart uploads never completed.
        Returns how many were removed. For the sweeper.
        """
        ...

    async def aclose(self) -> None:
        """Release threads and connections; the storage is unusable afterwards."""
        ...
