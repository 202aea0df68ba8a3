"""Keys that could leave the storage root are refused before any I/O."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from tests.storage.streams import chunked
from toolrun.storage import Storage, validate_key, validate_prefix

GOOD_KEYS = [
    "a",
    "uploads/0f3c/chunks/000003",
    "share-images/AbC_-x.png",
    "assets/é/ü.webp",
    "a..b/c.d",
    "..a/b",
    ".hidden/x",
    "x" * 1024,
]

BAD_KEYS = [
    "",
    "/etc/passwd",
    "../outside",
    "a/../../b",
    "a/..",
    "..",
    ".",
    "./a",
    "a/./b",
    "a//b",
    "a/",
    "a\\b",
    "..\\..\\x",
    "a\x00b",
    "a\nb",
    "a\x7fb",
    ".tmp/x",
    ".tmp",
    "x" * 1025,
    "é" * 513,
]


@pytest.mark.parametrize("key", GOOD_KEYS)
def test_validate_key_accepts_relative_paths(key: str):
    assert validate_key(key) == key


@pytest.mark.parametrize("key", BAD_KEYS)
def test_validate_key_refuses_escapes_and_garbage(key: str):
    with pytest.raises(ValueError, match="storage key"):
        validate_key(key)


@pytest.mark.parametrize("prefix", ["", "uploads/", "uploads/ab", "a/b/"])
def test_validate_prefix_allows_empty_and_trailing_slash(prefix: str):
    assert validate_prefix(prefix) == prefix


@pytest.mark.parametrize("prefix", ["/", "../", "a//", "/abs/", "a\\", ".tmp/"])
def test_validate_prefix_refuses_escapes(prefix: str):
    with pytest.raises(ValueError, match="storage key"):
        validate_prefix(prefix)


def operations(key: str) -> list[Callable[[Storage], Awaitable[object]]]:
    async def read(storage: Storage) -> object:
        return [piece async for piece in storage.read(key)]

    async def local_path(storage: Storage) -> object:
        async with storage.local_path(key):
            return None

    async def list_keys(storage: Storage) -> object:
        return [item async for item in storage.list_keys(key + "/")]

    return [
        lambda storage: storage.write(key, chunked(b"x")),
        lambda storage: storage.write_bytes(key, b"x"),
        read,
        lambda storage: storage.stat(key),
        lambda storage: storage.delete(key),
        lambda storage: storage.delete_prefix(key + "/"),
        list_keys,
        lambda storage: storage.concat(key, []),
        lambda storage: storage.concat("fine", ["ok", key]),
        local_path,
    ]


OPERATION_NAMES = [
    "write",
    "write_bytes",
    "read",
    "stat",
    "delete",
    "delete_prefix",
    "list_keys",
    "concat-target",
    "concat-part",
    "local_path",
]


@pytest.mark.parametrize("key", ["../escape", "a\x00b"])
@pytest.mark.parametrize("operation", range(len(OPERATION_NAMES)), ids=OPERATION_NAMES)
async def test_every_operation_refuses_a_bad_key(storage: Storage, key: str, operation: int):
    await storage.write_bytes("ok", b"1")

    with pytest.raises(ValueError, match="storage key"):
        await operations(key)[operation](storage)

    assert [item async for item in storage.list_keys()] == ["ok"]
