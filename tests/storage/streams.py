"""Byte sources and sinks shared by the storage tests."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

from toolrun.storage import Storage

MiB = 1024 * 1024


def payload(size: int, seed: int = 0) -> bytes:
    """``size`` reproducible pseudo-random bytes."""
    return random.Random(seed).randbytes(size)


async def chunked(data: bytes, chunk_size: int = 64 * 1024) -> AsyncIterator[bytes]:
    """Yield ``data`` in pieces, as a request body arrives."""
    for offset in range(0, len(data), chunk_size):
        yield data[offset : offset + chunk_size]


async def read_all(storage: Storage, key: str, *, start: int = 0, end: int | None = None) -> bytes:
    """The object's bytes, checking that no chunk is larger than 256 KiB."""
    pieces = []
    async for piece in storage.read(key, start=start, end=end):
        assert 0 < len(piece) <= 256 * 1024
        pieces.append(piece)
    return b"".join(pieces)
