"""What only the file backend has: its directory layout, temp files and URL forms."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.storage.streams import chunked, read_all
from toolrun.storage import FileStorage, StorageError
from toolrun.storage.files import root_from_url


@pytest.fixture
async def files(tmp_path: Path) -> AsyncIterator[FileStorage]:
    async with FileStorage(tmp_path / "root") as backend:
        yield backend


def tree(root: Path) -> list[str]:
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*"))


async def test_objects_are_plain_files_under_the_root(files: FileStorage):
    await files.write_bytes("uploads/t/chunks/000001", b"abc")

    assert (files.root / "uploads" / "t" / "chunks" / "000001").read_bytes() == b"abc"
    async with files.local_path("uploads/t/chunks/000001") as path:
        assert path == files.root / "uploads" / "t" / "chunks" / "000001"


async def test_deleting_the_last_object_removes_empty_folders(files: FileStorage):
    await files.write_bytes("uploads/t/chunks/000000", b"a")
    await files.write_bytes("uploads/t/chunks/000001", b"b")
    await files.write_bytes("uploads/u/x", b"c")

    await files.delete("uploads/t/chunks/000000")
    assert "uploads/t/chunks" in tree(files.root)

    await files.delete_prefix("uploads/t/")
    assert tree(files.root) == [".tmp", "uploads", "uploads/u", "uploads/u/x"]

    await files.delete("uploads/u/x")
    assert tree(files.root) == [".tmp"]


async def test_temp_files_never_show_as_keys(files: FileStorage):
    (files.root / ".tmp" / "leftover.part").write_bytes(b"partial")

    assert [key async for key in files.list_keys()] == []


async def test_purge_incomplete_removes_only_old_temp_files(files: FileStorage):
    old = files.root / ".tmp" / "old.part"
    new = files.root / ".tmp" / "new.part"
    old.write_bytes(b"crashed")
    new.write_bytes(b"in flight")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))

    assert await files.purge_incomplete(older_than_s=600) == 1

    assert tree(files.root) == [".tmp", ".tmp/new.part"]


async def test_a_key_cannot_be_both_object_and_folder(files: FileStorage):
    await files.write_bytes("a/b", b"x")

    with pytest.raises(StorageError, match="folder"):
        await files.write_bytes("a", b"y")
    with pytest.raises(StorageError):
        await files.write_bytes("a/b/c", b"z")

    assert await read_all(files, "a/b") == b"x"
    assert tree(files.root) == [".tmp", "a", "a/b"]


async def test_write_recreates_a_removed_temp_folder(files: FileStorage):
    (files.root / ".tmp").rmdir()

    assert await files.write("k", chunked(b"data")) == 4


async def test_durable_off_still_writes(tmp_path: Path):
    async with FileStorage(tmp_path, durable=False) as backend:
        await backend.write_bytes("k", b"v")
        assert await read_all(backend, "k") == b"v"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///var/lib/toolrun/files", Path("/var/lib/toolrun/files")),
        ("file://localhost/srv/files", Path("/srv/files")),
        ("file:///with%20space", Path("/with space")),
        ("file://relative/dir", Path("relative/dir")),
    ],
)
def test_root_from_url(url: str, expected: Path):
    assert root_from_url(url) == expected


@pytest.mark.parametrize("url", ["file://", "s3://bucket"])
def test_root_from_url_refuses(url: str):
    with pytest.raises(ValueError, match="file://"):
        root_from_url(url)
