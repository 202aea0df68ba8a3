"""Blob storage: one :class:`Storage` interface, a file:// and an s3:// backend.

The backend is chosen once, from ``TOOLRUN_STORAGE_URL``, by :func:`open_storage`.
"""

from __future__ import annotations

from toolrun.config import ConfigError, Settings
from toolrun.storage.base import (
    ObjectChanged,
    ObjectInfo,
    ObjectNotFound,
    Storage,
    StorageError,
    validate_key,
    validate_prefix,
)
from toolrun.storage.files import FileStorage, root_from_url
from toolrun.storage.s3 import S3Storage, bucket_and_prefix

__all__ = [
    "FileStorage",
    "ObjectChanged",
    "ObjectInfo",
    "ObjectNotFound",
    "S3Storage",
    "Storage",
    "StorageError",
    "open_storage",
    "validate_key",
    "validate_prefix",
]


def open_storage(settings: Settings) -> Storage:
    """The backend ``settings.resolved_storage_url`` names; close it with ``aclose()``.

    ``file://DIR`` creates DIR if needed. ``s3://bucket/prefix`` uses
    ``TOOLRUN_S3_ENDPOINT_URL`` (None: AWS) and boto3's credential chain
    (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``...).
    ConfigError names the variable when the URL cannot be used.
    """
    url = settings.resolved_storage_url
    try:
        if url.startswith("s3://"):
            bucket, prefix = bucket_and_prefix(url)
            return S3Storage(bucket, prefix, endpoint_url=settings.s3_endpoint_url)
        return FileStorage(root_from_url(url))
    except (ValueError, OSError) as exc:
        raise ConfigError(f"TOOLRUN_STORAGE_URL={url!r}: {exc}") from exc
