"""Storing one S3 object in parts, within S3's part rules. Blocking; run it in a thread."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from toolrun.storage.base import StorageError
from toolrun.storage.s3errors import translated

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client
    from mypy_boto3_s3.type_defs import CompletedPartTypeDef

MIN_PART_BYTES = 5 * 1024 * 1024  # every part but the last
MAX_COPY_PART_BYTES = 5 * 1024 * 1024 * 1024  # UploadPartCopy and UploadPart maximum
MAX_PARTS = 10_000


def plan_copy_ranges(start: int, end: int) -> list[tuple[int, int]]:
    """Split bytes ``start``..``end`` (exclusive) into near-equal ranges of at most 5 GiB.

    Equal ranges keep every piece far above the 5 MiB minimum whenever a
    split is needed at all (a split only happens above 5 GiB).
    """
    length = end - start
    count = max(1, -(-length // MAX_COPY_PART_BYTES))
    bounds = [start + length * index // count for index in range(count + 1)]
    return list(itertools.pairwise(bounds))


@dataclass
class ObjectUpload:
    """One object being stored part by part; nothing is visible until :meth:`finish`.

    The multipart upload starts with the first part added; an object that
    never needs one (``finish`` alone) is stored by a single PutObject.
    """

    client: S3Client
    bucket: str
    key: str
    content_type: str | None = None
    upload_id: str | None = None
    parts: list[CompletedPartTypeDef] = field(default_factory=list)

    def add(self, data: bytes) -> None:
        """Upload ``data`` as the next part; it must be 5 MiB or more unless it is the last."""
        number = self._next_number()
        with translated(self.key):
            result = self.client.upload_part(
                Bucket=self.bucket,
                Key=self.key,
                UploadId=self._started(),
                PartNumber=number,
                Body=data,
            )
        self.parts.append({"PartNumber": number, "ETag": result["ETag"]})

    def copy(self, source_key: str, etag: str, start: int, end: int) -> None:
        """Add bytes ``start``..``end`` (exclusive) of ``source_key`` as the next part.

        Server-side (UploadPartCopy); fails if the source no longer has ``etag``.
        """
        number = self._next_number()
        with translated(source_key):
            result = self.client.upload_part_copy(
                Bucket=self.bucket,
                Key=self.key,
                UploadId=self._started(),
                PartNumber=number,
                CopySource={"Bucket": self.bucket, "Key": source_key},
                CopySourceRange=f"bytes={start}-{end - 1}",
                CopySourceIfMatch=etag,
            )
        self.parts.append({"PartNumber": number, "ETag": result["CopyPartResult"]["ETag"]})

    def finish(self, last: bytes) -> None:
        """Store ``last`` as the final bytes and make the object appear, all parts in order."""
        if self.upload_id is None:
            with translated(self.key):
                self.client.put_object(Bucket=self.bucket, Key=self.key, Body=last, **self._type())
            return
        if last:
            self.add(last)
        with translated(self.key):
            self.client.complete_multipart_upload(
                Bucket=self.bucket,
                Key=self.key,
                UploadId=self.upload_id,
                MultipartUpload={"Parts": self.parts},
            )

    def abort(self) -> None:
        """Drop the parts, best effort: a failed abort is left to purge_incomplete."""
        if self.upload_id is None:
            return
        try:
            self.client.abort_multipart_upload(
                Bucket=self.bucket, Key=self.key, UploadId=self.upload_id
            )
        except (ClientError, BotoCoreError):
            return

    def _started(self) -> str:
        if self.upload_id is None:
            with translated(self.key):
                created = self.client.create_multipart_upload(
                    Bucket=self.bucket, Key=self.key, **self._type()
                )
            self.upload_id = created["UploadId"]
        return self.upload_id

    def _type(self) -> dict[str, Any]:
        return {"ContentType": self.content_type} if self.content_type else {}

    def _next_number(self) -> int:
        if len(self.parts) >= MAX_PARTS:
            raise StorageError(f"object needs more than {MAX_PARTS} parts: {self.key}")
        return len(self.parts) + 1
