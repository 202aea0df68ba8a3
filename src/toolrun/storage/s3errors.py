"""botocore errors turned into storage errors at the S3 boundary."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from botocore.exceptions import BotoCoreError, ClientError

from toolrun.storage.base import ObjectChanged, ObjectNotFound, StorageError

NOT_FOUND_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
CHANGED_CODES = frozenset({"PreconditionFailed", "412"})  # an If-Match / CopySourceIfMatch miss


def error_code(exc: BaseException | None) -> str | None:
    """The S3 error code of a ClientError (``NoSuchKey``, ``InvalidRange``...), else None."""
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code"))
    return None


@contextlib.contextmanager
def translated(key: str) -> Iterator[None]:
    """Raise ObjectNotFound, ObjectChanged or StorageError naming ``key`` for a botocore error.

    The botocore error stays attached as ``__cause__`` for logs.
    """
    try:
        yield
    except ClientError as exc:
        code = error_code(exc)
        if code in NOT_FOUND_CODES:
            raise ObjectNotFound(key) from exc
        if code in CHANGED_CODES:
            raise ObjectChanged(key) from exc
        raise StorageError(f"S3 error {code} for {key}") from exc
    except BotoCoreError as exc:
        raise StorageError(f"S3 request failed for {key}: {type(exc).__name__}") from exc
