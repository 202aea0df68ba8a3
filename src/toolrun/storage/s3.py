"""The s3:// backend: objects under ``s3://bucket/prefix`` on S3 or an S3-compatible store.

boto3 runs in the backend's own thread pool (boto3 clients are thread-safe).
Why not aioboto3: it pins aiobotocore, which pins one exact botocore release,
so it would fight the boto3 the project already depends on; every call here is
one request or one streamed body, which a thread pool serves as well.

Objects appear atomically: small writes are one PutObject, larger ones a
multipart upload that becomes visible only on CompleteMultipartUpload and is
aborted on any failure. Memory stays bounded by about two part sizes.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterator,
    Sequence,
)
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from toolrun.storage.base import (
    READ_CHUNK_BYTES,
    Checked,
    ObjectChanged,
    ObjectInfo,
    ObjectNotFound,
    StorageError,
    check_range,
    validate_key,
    validate_prefix,
)
from toolrun.storage.multipart import MIN_PART_BYTES, ObjectUpload, plan_copy_ranges
from toolrun.storage.s3errors import error_code, translated
from toolrun.storage.threads import ThreadRunner

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import ObjectIdentifierTypeDef

PART_BYTES = 8 * 1024 * 1024  # streamed writes: parts of this size (S3 minimum is 5 MiB)
DELETE_BATCH = 1000  # DeleteObjects limit


def bucket_and_prefix(url: str) -> tuple[str, str]:
    """Split ``s3://bucket/some/prefix`` into ``("bucket", "some/prefix/")``."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ValueError(f"not an s3://bucket/prefix URL: {url!r}")
    prefix = unquote(parts.path).strip("/")
    if prefix:
        validate_key(prefix)
        prefix += "/"
    return parts.netloc, prefix


class S3Storage:
    """Objects in ``bucket`` under ``prefix`` (see the module docstring).

    Credentials, when not given, come from boto3's usual chain (the
    ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``,
    ``AWS_PROFILE``, ``AWS_REGION`` variables, shared config files, instance roles).
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region_name: str | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        session_token: str | None = None,
        max_threads: int = 8,
        part_bytes: int = PART_BYTES,
        temp_dir: Path | None = None,
    ) -> None:
        if part_bytes < MIN_PART_BYTES:
            raise ValueError(f"part_bytes must be at least {MIN_PART_BYTES}")
        self.bucket = bucket
        self.prefix = prefix
        self._part_bytes = part_bytes
        self._temp_dir = temp_dir
        self._threads = ThreadRunner(max_threads, "toolrun-s3")
        self._client: S3Client = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region_name,
            aws_access_key_id=access_key_id,
            aws_secret_access_key=secret_access_key,
            aws_session_token=session_token,
            config=_client_config(max_threads, custom_endpoint=endpoint_url is not None),
        )

    async def __aenter__(self) -> S3Storage:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- writing ---------------------------------------------------------------------------

    async def write(
        self, key: str, chunks: AsyncIterable[bytes], *, content_type: str | None = None
    ) -> int:
        upload = ObjectUpload(self._client, self.bucket, self._name(key), content_type)
        pending: list[bytes] = []
        pending_bytes = size = 0
        try:
            async for chunk in chunks:
                # keep bytes as they are (immutable); copy anything a caller might reuse
                pending.append(chunk if isinstance(chunk, bytes) else bytes(chunk))
                pending_bytes += len(chunk)
                size += len(chunk)
                if pending_bytes >= self._part_bytes:
                    data, pending, pending_bytes = b"".join(pending), [], 0
                    await self._threads.run(upload.add, data)
                    del data  # hold at most one part
            await self._threads.run(upload.finish, b"".join(pending))
        except BaseException:
            await self._threads.run(upload.abort)
            raise
        return size

    async def write_bytes(self, key: str, data: bytes, *, content_type: str | None = None) -> int:
        upload = ObjectUpload(self._client, self.bucket, self._name(key), content_type)
        await self._threads.run(upload.finish, data)
        return len(data)

    async def concat(
        self, target_key: str, part_keys: Sequence[str], *, content_type: str | None = None
    ) -> int:
        """Copy parts of 5 MiB or more server-side (UploadPartCopy); stream smaller ones.

        Every part but the last of a multipart upload must be at least 5 MiB, so
        small sources are gathered into a buffer of up to 5 MiB that is uploaded
        as one part; a source that would follow a non-empty buffer first tops
        the buffer up to 5 MiB from its own bytes and is copied from there on.
        Each source is pinned by its ETag: one replaced meanwhile fails the concat
        with ObjectChanged.
        """
        upload = ObjectUpload(self._client, self.bucket, self._name(target_key), content_type)
        sources = [(key, self._name(key)) for key in part_keys]
        heads = [await self._head(key, name) for key, name in sources]
        pending = bytearray()
        try:
            for (key, name), (length, etag) in zip(sources, heads, strict=True):
                pending = await self._append(upload, pending, key, name, length, etag)
            await self._threads.run(upload.finish, bytes(pending))
        except BaseException:
            await self._threads.run(upload.abort)
            raise
        return sum(length for length, _ in heads)

    async def write_part(
        self, key: str, index: int, offset: int, data: bytes | memoryview, *, total_size: int
    ) -> None:
        """One object per part (``<key>/<index:06d>``), joined by :meth:`assemble`."""
        await self.write_bytes(part_key(key, index), bytes(data))

    async def assemble(
        self,
        key: str,
        part_count: int,
        target_key: str,
        check: Callable[[str], Awaitable[Checked]],
    ) -> tuple[int, Checked]:
        """Concatenate the part objects into the target, then check it there (deleting it if the
        check fails): S3 cannot read a multipart upload before it is completed."""
        size = await self.concat(target_key, [part_key(key, index) for index in range(part_count)])
        try:
            checked = await check(target_key)
        except BaseException:
            with contextlib.suppress(StorageError):
                await self.delete(target_key)
            raise
        return size, checked

    async def _append(
        self, upload: ObjectUpload, pending: bytearray, key: str, name: str, length: int, etag: str
    ) -> bytearray:
        """Add one concat source to ``upload``; return the new, still unsent buffer."""
        offset = 0
        while offset < length:
            if not pending and length - offset >= MIN_PART_BYTES:
                for start, end in plan_copy_ranges(offset, length):
                    await self._threads.run(upload.copy, name, etag, start, end)
                return pending
            take = min(length - offset, MIN_PART_BYTES - len(pending))
            await self._threads.run(
                self._read_into, pending, key, name, etag, offset, offset + take
            )
            offset += take
            if len(pending) >= MIN_PART_BYTES:
                data, pending = bytes(pending), bytearray()
                await self._threads.run(upload.add, data)
                del data
        return pending

    # -- reading ---------------------------------------------------------------------------

    def read(
        self, key: str, *, start: int = 0, end: int | None = None
    ) -> AsyncGenerator[bytes, None]:
        check_range(start, end)
        return self._read(key, self._name(key), start, end)

    async def _read(
        self, key: str, name: str, start: int, end: int | None
    ) -> AsyncGenerator[bytes, None]:
        if end is not None and end == start:
            if await self.stat(key) is None:
                raise ObjectNotFound(key)
            return
        body = await self._threads.run(self._open_body, key, name, start, end, None)
        if body is None:
            return
        try:
            pieces = body.iter_chunks(READ_CHUNK_BYTES)
            while data := await self._threads.run(_next_piece, key, pieces):
                yield data
        finally:
            body.close()

    def _open_body(self, key: str, name: str, start: int, end: int | None, etag: str | None) -> Any:
        """The streaming body of bytes ``start``..``end``, or None when ``start`` is past the end."""
        extra: dict[str, Any] = {}
        if start or end is not None:
            extra["Range"] = f"bytes={start}-{'' if end is None else end - 1}"
        if etag is not None:
            extra["IfMatch"] = etag
        try:
            with translated(key):
                return self._client.get_object(Bucket=self.bucket, Key=name, **extra)["Body"]
        except StorageError as exc:
            if error_code(exc.__cause__) == "InvalidRange":
                return None
            raise

    def _read_into(
        self, buffer: bytearray, key: str, name: str, etag: str, start: int, end: int
    ) -> None:
        body = self._open_body(key, name, start, end, etag)
        if body is None:
            raise ObjectChanged(key)
        try:
            with translated(key):
                for piece in body.iter_chunks(READ_CHUNK_BYTES):
                    buffer += piece
        finally:
            body.close()

    async def stat(self, key: str) -> ObjectInfo | None:
        try:
            head = await self._threads.run(self._head_object, key, self._name(key))
        except ObjectNotFound:
            return None
        return ObjectInfo(
            key=key,
            size=head["ContentLength"],
            etag=head["ETag"],
            modified=head["LastModified"].astimezone(UTC),
            content_type=head.get("ContentType"),
        )

    async def _head(self, key: str, name: str) -> tuple[int, str]:
        head = await self._threads.run(self._head_object, key, name)
        return head["ContentLength"], head["ETag"]

    def _head_object(self, key: str, name: str) -> Any:
        with translated(key):
            return self._client.head_object(Bucket=self.bucket, Key=name)

    @asynccontextmanager
    async def local_path(self, key: str) -> AsyncIterator[Path]:
        name = self._name(key)
        directory = Path(await self._threads.run(tempfile.mkdtemp, "", "toolrun-", self._temp_dir))
        try:
            path = directory / PurePosixPath(key).name
            await self._threads.run(self._download, key, name, path)
            yield path
        finally:
            await self._threads.run(shutil.rmtree, directory, True)

    def _download(self, key: str, name: str, path: Path) -> None:
        body = self._open_body(key, name, 0, None, None)
        try:
            with translated(key), path.open("wb") as handle:
                for piece in body.iter_chunks(READ_CHUNK_BYTES):
                    handle.write(piece)
        finally:
            body.close()

    # -- listing and deleting --------------------------------------------------------------

    async def list_keys(self, prefix: str = "") -> AsyncGenerator[str, None]:
        token: str | None = None
        full_prefix = self.prefix + validate_prefix(prefix)
        while True:
            page = await self._threads.run(self._list_page, full_prefix, token)
            for item in page.get("Contents", []):
                yield item["Key"].removeprefix(self.prefix)
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or token is None:
                return

    def _list_page(self, full_prefix: str, token: str | None) -> Any:
        extra: dict[str, Any] = {"ContinuationToken": token} if token else {}
        with translated(full_prefix):
            return self._client.list_objects_v2(Bucket=self.bucket, Prefix=full_prefix, **extra)

    async def delete(self, key: str) -> None:
        await self._threads.run(self._delete_object, key, self._name(key))

    def _delete_object(self, key: str, name: str) -> None:
        with translated(key):
            self._client.delete_object(Bucket=self.bucket, Key=name)

    async def delete_prefix(self, prefix: str) -> int:
        if not validate_prefix(prefix):
            raise ValueError("delete_prefix needs a non-empty prefix")
        count = 0
        batch: list[str] = []
        async for key in self.list_keys(prefix):
            batch.append(self.prefix + key)
            if len(batch) == DELETE_BATCH:
                count += await self._threads.run(self._delete_batch, batch)
                batch = []
        if batch:
            count += await self._threads.run(self._delete_batch, batch)
        return count

    def _delete_batch(self, names: list[str]) -> int:
        objects: list[ObjectIdentifierTypeDef] = [{"Key": name} for name in names]
        with translated(names[0]):
            result = self._client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": objects, "Quiet": True}
            )
        if errors := result.get("Errors"):
            raise StorageError(f"could not delete {len(errors)} objects, e.g. {errors[0]}")
        return len(names)

    # -- maintenance -----------------------------------------------------------------------

    async def purge_incomplete(self, older_than_s: float) -> int:
        cutoff = datetime.now(UTC) - timedelta(seconds=older_than_s)
        return await self._threads.run(self._abort_uploads, cutoff)

    def _abort_uploads(self, cutoff: datetime) -> int:
        count = 0
        paginator = self._client.get_paginator("list_multipart_uploads")
        with translated(self.prefix or "/"):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix):
                for upload in page.get("Uploads", []):
                    if upload["Initiated"] < cutoff:
                        with contextlib.suppress(ClientError):
                            self._client.abort_multipart_upload(
                                Bucket=self.bucket, Key=upload["Key"], UploadId=upload["UploadId"]
                            )
                            count += 1
        return count

    async def aclose(self) -> None:
        await self._threads.close()
        self._client.close()

    def _name(self, key: str) -> str:
        return self.prefix + validate_key(key)


def part_key(key: str, index: int) -> str:
    """Where S3 keeps part ``index`` of the object assembled under ``key``."""
    return f"{key}/{index:06d}"


def _client_config(max_threads: int, *, custom_endpoint: bool) -> Config:
    return Config(
        max_pool_connections=max_threads,
        retries={"mode": "standard", "max_attempts": 3},
        # S3-compatible stores (MinIO, moto, Ceph) are reached by IP or one host name,
        # which only path-style addressing serves; some reject the CRC checksums
        # botocore sends by default since 1.36, so send them only when S3 requires one.
        s3={"addressing_style": "path"} if custom_endpoint else None,
        request_checksum_calculation="when_required" if custom_endpoint else "when_supported",
        response_checksum_validation="when_required" if custom_endpoint else "when_supported",
    )


def _next_piece(key: str, pieces: Iterator[bytes]) -> bytes:
    with translated(key):
        return next(pieces, b"")
