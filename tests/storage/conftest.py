"""The ``storage`` fixture: every contract test runs on the file and the S3 backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.servers.s3 import S3Server, s3_bucket, s3_env, s3_server
from toolrun.config import Settings
from toolrun.storage import Storage, open_storage

__all__ = ["s3_bucket", "s3_env", "s3_server"]


@pytest.fixture(params=["file", "s3"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    """A fresh, empty store built by open_storage exactly as the service builds it."""
    if request.param == "file":
        settings = Settings(storage_url=f"file://{tmp_path / 'files'}")
    else:
        server: S3Server = request.getfixturevalue("s3_env")
        bucket: str = request.getfixturevalue("s3_bucket")
        settings = Settings(
            storage_url=f"s3://{bucket}/some/prefix", s3_endpoint_url=server.endpoint_url
        )
    backend = open_storage(settings)
    try:
        yield backend
    finally:
        await backend.aclose()
