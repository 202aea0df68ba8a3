"""Streaming 64 MiB through a backend must not hold it in memory."""

from __future__ import annotations

import hashlib
import tracemalloc
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.storage.streams import MiB
from toolrun.storage import Storage

TOTAL = 64 * MiB
CHUNK = 256 * 1024
# Measured: file backend <= 3.3 MiB (1 MiB write buffer); S3 <= 16.4 MiB (an 8 MiB part being
# joined while the previous one is released by its thread), small-part concat 13.7 MiB.
PEAK_LIMIT = {"file": 6 * MiB, "s3": 24 * MiB}


@pytest.fixture
def traced() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def peak_since_reset() -> int:
    return tracemalloc.get_traced_memory()[1]


async def generated(block: bytes, count: int) -> AsyncIterator[bytes]:
    for _ in range(count):
        yield block


async def test_64_mib_write_and_read_stay_small(
    storage: Storage, request: pytest.FixtureRequest, traced: None
):
    backend = request.node.callspec.params["storage"]
    block = bytes(range(256)) * (CHUNK // 256)
    expected = hashlib.sha256()
    for _ in range(TOTAL // CHUNK):
        expected.update(block)

    tracemalloc.reset_peak()
    assert await storage.write("memory/big", generated(block, TOTAL // CHUNK)) == TOTAL
    write_peak = peak_since_reset()

    tracemalloc.reset_peak()
    digest = hashlib.sha256()
    async for piece in storage.read("memory/big"):
        digest.update(piece)
    read_peak = peak_since_reset()

    tracemalloc.reset_peak()
    await storage.concat("memory/joined", ["memory/big", "memory/big"])
    concat_peak = peak_since_reset()

    small_parts = [f"memory/part-{index:02d}" for index in range(16)]
    for key in small_parts:
        await storage.write(key, generated(block, 4 * MiB // CHUNK))
    tracemalloc.reset_peak()
    assert await storage.concat("memory/from-small", small_parts) == TOTAL  # streamed on S3
    small_concat_peak = peak_since_reset()

    tracemalloc.reset_peak()
    async with storage.local_path("memory/joined") as path:
        assert path.stat().st_size == 2 * TOTAL
    local_peak = peak_since_reset()

    assert digest.digest() == expected.digest()
    limit = PEAK_LIMIT[backend]
    peaks = {
        "write": write_peak,
        "read": read_peak,
        "concat": concat_peak,
        "concat_small": small_concat_peak,
        "local": local_peak,
    }
    assert all(peak < limit for peak in peaks.values()), peaks
