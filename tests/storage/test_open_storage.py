"""open_storage picks the backend from TOOLRUN_STORAGE_URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.servers.s3 import S3Server
from toolrun.config import ConfigError, Settings
from toolrun.storage import FileStorage, S3Storage, open_storage


async def test_default_is_files_under_the_data_dir(tmp_path: Path):
    storage = open_storage(Settings(data_dir=tmp_path))
    try:
        assert isinstance(storage, FileStorage)
        assert storage.root == (tmp_path / "files").resolve()
        assert storage.root.is_dir()
    finally:
        await storage.aclose()


async def test_s3_url_uses_endpoint_and_environment_credentials(s3_env: S3Server, s3_bucket: str):
    storage = open_storage(
        Settings(storage_url=f"s3://{s3_bucket}/tr", s3_endpoint_url=s3_env.endpoint_url)
    )
    try:
        assert isinstance(storage, S3Storage)
        assert (storage.bucket, storage.prefix) == (s3_bucket, "tr/")
        await storage.write_bytes("k", b"v")
    finally:
        await storage.aclose()
    with s3_env.client() as client:
        assert client.get_object(Bucket=s3_bucket, Key="tr/k")["Body"].read() == b"v"


@pytest.mark.parametrize("url", ["s3://", "s3://bucket/../x", "file://"])
def test_unusable_url_is_a_config_error_naming_the_variable(url: str):
    with pytest.raises(ConfigError, match="TOOLRUN_STORAGE_URL"):
        open_storage(Settings(storage_url=url))
