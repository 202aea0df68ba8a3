"""What only the S3 backend has: S3's part rules, prefixes, credentials, its failures."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from tests.servers.s3 import S3Server
from tests.storage.streams import MiB, chunked, payload, read_all
from toolrun.storage import ObjectChanged, S3Storage, StorageError
from toolrun.storage.multipart import plan_copy_ranges
from toolrun.storage.s3 import bucket_and_prefix

if TYPE_CHECKING:
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef


@pytest.fixture
async def s3(s3_server: S3Server, s3_bucket: str) -> AsyncIterator[S3Storage]:
    """A backend given its credentials explicitly (none in the environment)."""
    backend = S3Storage(
        s3_bucket,
        "p/",
        endpoint_url=s3_server.endpoint_url,
        region_name=s3_server.region,
        access_key_id=s3_server.access_key_id,
        secret_access_key=s3_server.secret_access_key,
    )
    try:
        yield backend
    finally:
        await backend.aclose()


def test_the_server_refuses_parts_below_5_mib(s3_server: S3Server, s3_bucket: str):
    """The concat tests mean something only if the server enforces S3's part minimum."""
    with s3_server.client() as client:
        upload = client.create_multipart_upload(Bucket=s3_bucket, Key="naive")["UploadId"]
        parts: list[CompletedPartTypeDef] = []
        for number in (1, 2):
            result = client.upload_part(
                Bucket=s3_bucket, Key="naive", UploadId=upload, PartNumber=number, Body=b"x" * MiB
            )
            parts.append({"PartNumber": number, "ETag": result["ETag"]})
        with pytest.raises(client.exceptions.ClientError, match="EntityTooSmall"):
            client.complete_multipart_upload(
                Bucket=s3_bucket, Key="naive", UploadId=upload, MultipartUpload={"Parts": parts}
            )


@pytest.mark.parametrize(
    ("size", "parts"),
    [(0, 0), (MiB, 0), (8 * MiB - 1, 0), (8 * MiB, 1), (21 * MiB, 3)],
)
async def test_write_uses_one_put_below_a_part_and_multipart_above(
    s3: S3Storage, size: int, parts: int
):
    await s3.write("obj", chunked(payload(size), 100_000))

    info = await s3.stat("obj")
    assert info is not None
    assert info.size == size
    # a multipart object's ETag ends in "-<number of parts>"
    assert info.etag.strip('"').partition("-")[2] == (str(parts) if parts else "")


@pytest.mark.parametrize(
    ("sizes", "parts"),
    [
        ([6 * MiB, 6 * MiB], 2),  # both copied server-side
        ([MiB] * 6, 2),  # 5 MiB gathered, then the 1 MiB rest as the last part
        ([MiB, 7 * MiB], 2),  # 1 MiB + 4 MiB streamed, 3 MiB copied
        ([MiB, 5 * MiB], 2),  # 1 + 4 streamed, the 1 MiB rest streamed as the last part
        ([2 * MiB, 2 * MiB], 0),  # below one part: a single PutObject
    ],
)
async def test_concat_part_layout(s3: S3Storage, sizes: list[int], parts: int):
    keys = [f"c/{index}" for index in range(len(sizes))]
    for index, (key, size) in enumerate(zip(keys, sizes, strict=True)):
        await s3.write_bytes(key, payload(size, seed=index))

    await s3.concat("joined", keys)

    info = await s3.stat("joined")
    assert info is not None
    assert info.etag.strip('"').partition("-")[2] == (str(parts) if parts else "")
    expected = b"".join(payload(size, seed=index) for index, size in enumerate(sizes))
    assert await read_all(s3, "joined") == expected


async def test_keys_live_under_the_url_prefix(s3: S3Storage, s3_server: S3Server, s3_bucket: str):
    with s3_server.client() as client:
        client.put_object(Bucket=s3_bucket, Key="outside", Body=b"not ours")
        client.put_object(Bucket=s3_bucket, Key="pp/x", Body=b"not ours either")

    await s3.write_bytes("uploads/a/chunks/000000", b"x", content_type="image/webp")

    with s3_server.client() as client:
        listed = client.list_objects_v2(Bucket=s3_bucket)["Contents"]
    assert sorted(item["Key"] for item in listed) == [
        "outside",
        "p/uploads/a/chunks/000000",
        "pp/x",
    ]
    assert [key async for key in s3.list_keys()] == ["uploads/a/chunks/000000"]
    info = await s3.stat("uploads/a/chunks/000000")
    assert info is not None
    assert info.content_type == "image/webp"


async def test_purge_incomplete_aborts_old_multipart_uploads(
    s3: S3Storage, s3_server: S3Server, s3_bucket: str
):
    with s3_server.client() as client:
        client.create_multipart_upload(Bucket=s3_bucket, Key="p/crashed")
        client.create_multipart_upload(Bucket=s3_bucket, Key="elsewhere")

    # moto reports every upload as initiated in 2010, so "keeps recent ones" cannot be shown here
    assert await s3.purge_incomplete(older_than_s=0) == 1

    with s3_server.client() as client:
        left = client.list_multipart_uploads(Bucket=s3_bucket).get("Uploads", [])
    assert [upload["Key"] for upload in left] == ["elsewhere"]


async def test_concat_fails_when_a_part_changes_midway(s3: S3Storage):
    await s3.write_bytes("m/0", payload(MiB))
    await s3.write_bytes("m/1", payload(6 * MiB))
    original = s3._head

    async def head_then_replace(key: str, name: str) -> tuple[int, str]:
        result = await original(key, name)
        if key == "m/1":
            await s3.write_bytes("m/1", payload(6 * MiB, seed=9))
        return result

    s3._head = head_then_replace  # type: ignore[method-assign]  # a race no server can stage

    with pytest.raises(ObjectChanged, match="m/1"):  # a StorageError: UploadPartCopy's pin
        await s3.concat("joined", ["m/0", "m/1"])

    assert await s3.stat("joined") is None
    assert await s3.purge_incomplete(older_than_s=0) == 0


async def test_concat_fails_when_a_small_part_changes_midway(s3: S3Storage):
    await s3.write_bytes("m/0", payload(100))
    await s3.write_bytes("m/1", payload(100, seed=3))
    original = s3._head

    async def head_then_replace(key: str, name: str) -> tuple[int, str]:
        result = await original(key, name)
        if key == "m/1":
            await s3.write_bytes("m/0", payload(100, seed=9))
        return result

    s3._head = head_then_replace  # type: ignore[method-assign]  # a race no server can stage

    with pytest.raises(ObjectChanged, match="m/0"):  # the pinned GET of a buffered part
        await s3.concat("joined", ["m/0", "m/1"])
    assert await s3.stat("joined") is None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_an_unreachable_endpoint_raises_storage_error():
    backend = S3Storage(
        "bucket",
        endpoint_url=f"http://127.0.0.1:{free_port()}",
        region_name="us-east-1",
        access_key_id="a",
        secret_access_key="b",
    )
    try:
        with pytest.raises(StorageError, match="S3 request failed"):
            await backend.stat("k")
        with pytest.raises(StorageError):
            await backend.write_bytes("k", b"x")
    finally:
        await backend.aclose()


async def test_a_missing_bucket_raises_storage_error(s3_server: S3Server):
    backend = S3Storage(
        "no-such-bucket",
        endpoint_url=s3_server.endpoint_url,
        region_name="us-east-1",
        access_key_id="a",
        secret_access_key="b",
    )
    try:
        with pytest.raises(StorageError, match="NoSuchBucket"):
            await backend.write_bytes("k", b"x")
    finally:
        await backend.aclose()


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("s3://bucket", ("bucket", "")),
        ("s3://bucket/", ("bucket", "")),
        ("s3://bucket/toolrun", ("bucket", "toolrun/")),
        ("s3://bucket/a/b/", ("bucket", "a/b/")),
        ("s3://my.bucket-1/a%20b", ("my.bucket-1", "a b/")),
    ],
)
def test_bucket_and_prefix(url: str, expected: tuple[str, str]):
    assert bucket_and_prefix(url) == expected


@pytest.mark.parametrize("url", ["s3://", "s3:///prefix", "s3://b/../x", "file:///x"])
def test_bucket_and_prefix_refuses(url: str):
    with pytest.raises(ValueError, match=r"s3://|storage key"):
        bucket_and_prefix(url)


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (0, 5 * MiB, [(0, 5 * MiB)]),
        (3, 5 * 1024 * MiB + 3, [(3, 5 * 1024 * MiB + 3)]),
        (0, 5 * 1024 * MiB + 1, [(0, 2560 * MiB), (2560 * MiB, 5 * 1024 * MiB + 1)]),
        (
            0,
            12 * 1024 * MiB,
            [(0, 4096 * MiB), (4096 * MiB, 8192 * MiB), (8192 * MiB, 12288 * MiB)],
        ),
    ],
)
def test_plan_copy_ranges_keeps_pieces_within_s3_limits(
    start: int, end: int, expected: list[tuple[int, int]]
):
    assert plan_copy_ranges(start, end) == expected
