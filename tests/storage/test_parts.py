"""Parts assembled into one object (the upload chunks), on both backends."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from tests.storage.streams import MiB, payload, read_all
from toolrun.storage import FileStorage, ObjectChanged, ObjectNotFound, Storage

PART = 5 * MiB + 17  # over S3's 5 MiB minimum part, and not a round number


async def _write_parts(storage: Storage, key: str, parts: list[bytes], order: list[int]) -> None:
    total = sum(len(part) for part in parts)
    offsets = [sum(len(part) for part in parts[:index]) for index in range(len(parts))]
    for index in order:
        await storage.write_part(key, index, offsets[index], parts[index], total_size=total)


async def test_parts_in_any_order_assemble_in_index_order(storage: Storage):
    parts = [payload(PART, seed=1), payload(PART, seed=2), payload(1000, seed=3)]
    await _write_parts(storage, "uploads/t/chunks", parts, [2, 0, 1])
    seen: list[bytes] = []

    async def check(key: str) -> str:
        seen.append(await read_all(storage, key))
        async with storage.local_path(key) as path:
            return path.read_bytes()[:4].hex()

    size, checked = await storage.assemble("uploads/t/chunks", 3, "uploads/t/file", check)

    whole = b"".join(parts)
    assert size == len(whole)
    assert seen == [whole]  # the check read the joined bytes before they were published
    assert checked == whole[:4].hex()
    assert await read_all(storage, "uploads/t/file") == whole
    await storage.delete_prefix("uploads/t/chunks")
    assert [key async for key in storage.list_keys("uploads/t/")] == ["uploads/t/file"]


async def test_a_part_sent_again_replaces_the_first_copy(storage: Storage):
    first, second = payload(PART, seed=4), payload(PART, seed=5)
    await _write_parts(storage, "p", [first, b"tail"], [0, 1])
    await storage.write_part("p", 0, 0, memoryview(second), total_size=PART + 4)

    async def check(key: str) -> None:
        return None

    assert await storage.assemble("p", 2, "joined", check) == (PART + 4, None)
    assert await read_all(storage, "joined") == second + b"tail"


async def test_a_failing_check_publishes_nothing_and_keeps_the_parts(storage: Storage):
    parts = [b"head-", b"tail"]
    await _write_parts(storage, "p", parts, [0, 1])

    async def refuse(key: str) -> None:
        raise ValueError("not an image")

    with pytest.raises(ValueError, match="not an image"):
        await storage.assemble("p", 2, "joined", refuse)

    assert await storage.stat("joined") is None

    async def accept(key: str) -> bytes:
        return await read_all(storage, key)

    assert await storage.assemble("p", 2, "joined", accept) == (9, b"head-tail")


async def test_assembling_parts_never_written_is_not_found(storage: Storage):
    async def check(key: str) -> None:
        raise AssertionError("nothing to check")

    with pytest.raises(ObjectNotFound):
        await storage.assemble("none", 1, "joined", check)
    assert await storage.stat("joined") is None


async def test_concurrent_parts_all_land(storage: Storage):
    parts = [payload(64 * 1024, seed=index) for index in range(12)]
    total = 12 * 64 * 1024
    await asyncio.gather(
        *(
            storage.write_part("c", index, index * 64 * 1024, part, total_size=total)
            for index, part in enumerate(parts)
        )
    )

    async def check(key: str) -> None:
        return None

    assert (await storage.assemble("c", 12, "joined", check))[0] == total
    assert await read_all(storage, "joined") == b"".join(parts)


async def test_files_write_parts_into_one_file_at_their_offsets(tmp_path):
    async with FileStorage(tmp_path / "root") as files:
        await files.write_part("u/chunks", 1, 3, b"def", total_size=6)
        await files.write_part("u/chunks", 0, 0, b"abc", total_size=6)

        assert (tmp_path / "root" / "u" / "chunks").read_bytes() == b"abcdef"


async def test_files_a_part_sent_while_assembling_never_reaches_the_published_file(tmp_path):
    """A part write waits for the assembling lock; afterwards it either finds the file renamed
    (ObjectChanged) or starts a new parts file: the published bytes never change."""
    async with FileStorage(tmp_path / "root") as files:
        await files.write_part("u/chunks", 0, 0, b"aaaa", total_size=8)
        await files.write_part("u/chunks", 1, 4, b"bbbb", total_size=8)
        late: list[asyncio.Task[None]] = []

        async def check(key: str) -> bytes:
            late.append(
                asyncio.create_task(files.write_part("u/chunks", 0, 0, b"XXXX", total_size=8))
            )
            for _ in range(20):  # give the late write every chance to open the file and wait
                await asyncio.sleep(0.005)
            assert not late[0].done()
            return await read_all(files, key)

        assert await files.assemble("u/chunks", 2, "u/file", check) == (8, b"aaaabbbb")
        with contextlib.suppress(ObjectChanged):
            await late[0]
        assert await read_all(files, "u/file") == b"aaaabbbb"
