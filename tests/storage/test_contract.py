"""The Storage contract, run on both backends (see conftest.storage)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator
from datetime import UTC
from pathlib import Path

import pytest

from tests.storage.streams import MiB, chunked, payload, read_all
from toolrun.storage import ObjectNotFound, Storage


class Boom(Exception):
    pass


async def test_write_then_read_returns_the_bytes(storage: Storage):
    data = payload(700 * 1024)

    written = await storage.write("assets/a1/original.png", chunked(data, 10_000))

    assert written == len(data)
    assert await read_all(storage, "assets/a1/original.png") == data


@pytest.mark.parametrize("size", [0, 1, 256 * 1024, 9 * MiB + 3])
async def test_write_bytes_round_trips(storage: Storage, size: int):
    data = payload(size, seed=size)

    assert await storage.write_bytes("k/blob", data) == size

    assert await read_all(storage, "k/blob") == data
    info = await storage.stat("k/blob")
    assert info is not None
    assert info.size == size


@pytest.mark.parametrize("size", [0, 3 * MiB, 8 * MiB, 8 * MiB + 1, 21 * MiB])
async def test_streamed_write_of_any_size_round_trips(storage: Storage, size: int):
    data = payload(size, seed=7)

    assert await storage.write("big/object", chunked(data, 300_001)) == size

    assert hashlib.sha256(await read_all(storage, "big/object")).digest() == (
        hashlib.sha256(data).digest()
    )


async def test_write_replaces_an_existing_object(storage: Storage):
    await storage.write_bytes("k", b"first version, longer")
    before = await storage.stat("k")

    await storage.write_bytes("k", b"second")

    after = await storage.stat("k")
    assert await read_all(storage, "k") == b"second"
    assert before is not None
    assert after is not None
    assert after.size == 6
    assert after.etag != before.etag


SIZE = 600 * 1024
RANGES = [
    (0, None, slice(0, None)),
    (0, 1, slice(0, 1)),
    (10, 20, slice(10, 20)),
    (300 * 1024, 300 * 1024 + 5, slice(300 * 1024, 300 * 1024 + 5)),
    (SIZE - 1, None, slice(SIZE - 1, None)),
    (100, SIZE + 1000, slice(100, None)),
    (5, 5, slice(5, 5)),
    (SIZE, None, slice(SIZE, None)),
    (SIZE + 10, None, slice(SIZE, None)),
    (SIZE + 10, SIZE + 20, slice(SIZE, None)),
]


@pytest.mark.parametrize(("start", "end", "expected"), RANGES)
async def test_read_range_is_start_inclusive_end_exclusive(
    storage: Storage, start: int, end: int | None, expected: slice
):
    data = payload(SIZE, seed=3)
    await storage.write_bytes("ranged", data)

    assert await read_all(storage, "ranged", start=start, end=end) == data[expected]


@pytest.mark.parametrize(("start", "end"), [(-1, None), (10, 9)])
def test_read_refuses_a_bad_range_at_once(storage: Storage, start: int, end: int | None):
    with pytest.raises(ValueError, match="read"):
        storage.read("ranged", start=start, end=end)


@pytest.mark.parametrize(("start", "end"), [(0, None), (5, None), (3, 3)])
async def test_read_of_a_missing_key_raises_not_found(
    storage: Storage, start: int, end: int | None
):
    with pytest.raises(ObjectNotFound) as caught:
        await read_all(storage, "no/such/key", start=start, end=end)
    assert caught.value.key == "no/such/key"


async def test_read_stopped_early_releases_its_resources(storage: Storage):
    await storage.write_bytes("long", payload(2 * MiB))

    async with contextlib.aclosing(storage.read("long")) as pieces:
        async for _ in pieces:
            break

    assert await storage.stat("long") is not None


async def test_read_continues_the_old_object_when_replaced_midway(storage: Storage):
    old = payload(MiB, seed=1)
    await storage.write_bytes("swap", old)

    received: list[bytes] = []
    async with contextlib.aclosing(storage.read("swap")) as pieces:
        async for piece in pieces:
            if not received:
                await storage.write_bytes("swap", b"new")
            received.append(piece)

    assert b"".join(received) == old
    assert await read_all(storage, "swap") == b"new"


async def test_stat_describes_the_object(storage: Storage):
    assert await storage.stat("s/one") is None

    await storage.write_bytes("s/one", b"12345", content_type="image/png")

    info = await storage.stat("s/one")
    assert info is not None
    assert info.key == "s/one"
    assert info.size == 5
    assert info.etag.startswith('"')
    assert info.modified.tzinfo is not None
    assert info.modified.utcoffset() == UTC.utcoffset(None)
    assert info.content_type in {None, "image/png"}


async def test_stat_of_a_folder_is_none(storage: Storage):
    await storage.write_bytes("folder/inner", b"x")

    assert await storage.stat("folder") is None


async def test_delete_removes_and_is_idempotent(storage: Storage):
    await storage.write_bytes("d/x", b"x")

    await storage.delete("d/x")
    await storage.delete("d/x")
    await storage.delete("never/was")

    assert await storage.stat("d/x") is None
    assert [key async for key in storage.list_keys()] == []


async def test_delete_prefix_is_a_string_prefix(storage: Storage):
    keys = ["uploads/ab/chunks/000000", "uploads/ab/chunks/000001", "uploads/abc/x", "uploads/b/y"]
    for key in keys:
        await storage.write_bytes(key, b"-")

    assert await storage.delete_prefix("uploads/ab/") == 2
    assert [key async for key in storage.list_keys()] == ["uploads/abc/x", "uploads/b/y"]
    assert await storage.delete_prefix("uploads/a") == 1
    assert await storage.delete_prefix("uploads/a") == 0
    assert [key async for key in storage.list_keys()] == ["uploads/b/y"]


async def test_delete_prefix_refuses_an_empty_prefix(storage: Storage):
    await storage.write_bytes("keep", b"x")

    with pytest.raises(ValueError, match="non-empty"):
        await storage.delete_prefix("")

    assert await storage.stat("keep") is not None


async def test_delete_prefix_handles_more_than_one_batch(storage: Storage):
    await asyncio.gather(*(storage.write_bytes(f"many/{i:05d}", b"") for i in range(1100)))

    assert await storage.delete_prefix("many/") == 1100
    assert [key async for key in storage.list_keys("many/")] == []


LISTED = ["a-c", "a/b/c", "a/b1", "a0", "b/z", "share-images/x.png", "é/1"]  # UTF-8 byte order


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("", LISTED),
        ("a", ["a-c", "a/b/c", "a/b1", "a0"]),
        ("a/", ["a/b/c", "a/b1"]),
        ("a/b", ["a/b/c", "a/b1"]),
        ("a/b/", ["a/b/c"]),
        ("share-images/", ["share-images/x.png"]),
        ("é", ["é/1"]),
        ("zzz", []),
        ("nothing/here/", []),
    ],
)
async def test_list_keys_in_byte_order_by_prefix(
    storage: Storage, prefix: str, expected: list[str]
):
    for key in reversed(LISTED):
        await storage.write_bytes(key, b"")

    assert [key async for key in storage.list_keys(prefix)] == expected


CONCAT_SIZES = [
    pytest.param([], id="none"),
    pytest.param([0, 0], id="empty-parts"),
    pytest.param([10, 20, 30], id="small"),
    pytest.param([5 * MiB, 5 * MiB, 1], id="exact-minimum"),
    pytest.param([6 * MiB, 6 * MiB, MiB], id="large-then-small"),
    pytest.param([MiB, 6 * MiB, 100 * 1024, 5 * MiB, 3 * MiB], id="mixed"),
    pytest.param([300 * 1024] * 40, id="many-small"),
    pytest.param([2 * MiB, 0, 7 * MiB, 4 * MiB + 1, 4 * MiB, 6 * MiB], id="mixed-with-empty"),
]


@pytest.mark.parametrize("sizes", CONCAT_SIZES)
async def test_concat_joins_parts_in_order(storage: Storage, sizes: list[int]):
    parts = [payload(size, seed=index) for index, size in enumerate(sizes)]
    keys = [f"uploads/t1/chunks/{index:06d}" for index in range(len(parts))]
    for key, part in zip(keys, parts, strict=True):
        await storage.write_bytes(key, part)

    size = await storage.concat("assets/t1/original", keys, content_type="image/png")

    whole = b"".join(parts)
    assert size == len(whole)
    stored = await read_all(storage, "assets/t1/original")
    assert hashlib.sha256(stored).digest() == hashlib.sha256(whole).digest()
    assert [key async for key in storage.list_keys("uploads/t1/")] == keys


async def test_concat_with_a_missing_part_stores_nothing(storage: Storage):
    await storage.write_bytes("p/0", payload(6 * MiB))
    await storage.write_bytes("p/2", b"tail")

    with pytest.raises(ObjectNotFound) as caught:
        await storage.concat("joined", ["p/0", "p/1", "p/2"])

    assert caught.value.key == "p/1"
    assert await storage.stat("joined") is None


async def test_concat_may_overwrite_one_of_its_parts(storage: Storage):
    await storage.write_bytes("c/a", b"head-")
    await storage.write_bytes("c/b", b"tail")

    assert await storage.concat("c/a", ["c/a", "c/b"]) == 9

    assert await read_all(storage, "c/a") == b"head-tail"


async def failing_after(data: bytes, when: int):
    sent = 0
    async for piece in chunked(data, 256 * 1024):
        if sent >= when:
            raise Boom
        sent += len(piece)
        yield piece


@pytest.mark.parametrize("fail_at", [0, MiB, 10 * MiB])
async def test_failed_write_stores_nothing(storage: Storage, fail_at: int):
    with pytest.raises(Boom):
        await storage.write("atomic/new", failing_after(payload(12 * MiB), fail_at))

    assert await storage.stat("atomic/new") is None
    assert [key async for key in storage.list_keys()] == []
    assert await storage.purge_incomplete(older_than_s=0) == 0


@pytest.mark.parametrize("fail_at", [0, 10 * MiB])
async def test_failed_write_keeps_the_previous_object(storage: Storage, fail_at: int):
    await storage.write_bytes("atomic/old", b"previous")

    with pytest.raises(Boom):
        await storage.write("atomic/old", failing_after(payload(12 * MiB), fail_at))

    assert await read_all(storage, "atomic/old") == b"previous"


async def test_object_appears_only_when_the_write_ends(storage: Storage):
    release = asyncio.Event()
    halfway = asyncio.Event()

    async def slow_body() -> AsyncIterator[bytes]:
        yield payload(9 * MiB)  # past the S3 part size: a multipart upload is under way
        halfway.set()
        await release.wait()
        yield b"end"

    writer = asyncio.create_task(storage.write("slow/object", slow_body()))
    await halfway.wait()
    await asyncio.sleep(0.05)

    assert await storage.stat("slow/object") is None
    assert [key async for key in storage.list_keys()] == []
    with pytest.raises(ObjectNotFound):
        await read_all(storage, "slow/object")

    release.set()
    assert await writer == 9 * MiB + 3
    info = await storage.stat("slow/object")
    assert info is not None
    assert info.size == 9 * MiB + 3


async def test_cancelled_write_stores_nothing(storage: Storage):
    started = asyncio.Event()

    async def endless() -> AsyncIterator[bytes]:
        while True:
            yield payload(MiB)
            started.set()

    writer = asyncio.create_task(storage.write("cancelled", endless()))
    await started.wait()
    await asyncio.sleep(0.05)
    writer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await writer

    assert await storage.stat("cancelled") is None
    assert await storage.purge_incomplete(older_than_s=0) == 0


async def test_concurrent_writes_of_one_key_leave_one_whole_version(storage: Storage):
    versions = [payload(2 * MiB + i, seed=i) for i in range(6)]

    await asyncio.gather(*(storage.write("race", chunked(v)) for v in versions))

    assert await read_all(storage, "race") in versions


async def test_local_path_gives_a_readable_file(storage: Storage):
    data = payload(3 * MiB + 5)
    await storage.write_bytes("assets/x/original.jpg", data)

    async with storage.local_path("assets/x/original.jpg") as path:
        assert isinstance(path, Path)
        assert path.name == "original.jpg"
        assert await asyncio.to_thread(path.read_bytes) == data

    assert await read_all(storage, "assets/x/original.jpg") == data


async def test_local_path_of_a_missing_key_raises_not_found(storage: Storage):
    with pytest.raises(ObjectNotFound):
        async with storage.local_path("nope/original.png"):
            pass


async def test_purge_incomplete_keeps_recent_leftovers(storage: Storage):
    assert await storage.purge_incomplete(older_than_s=3600) == 0
