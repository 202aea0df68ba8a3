"""A real S3 HTTP endpoint on loopback: moto's server mode in a child process.

A child process rather than ``ThreadedMotoServer`` in ours: moto keeps objects
in its own memory, which would pollute memory measurements (tracemalloc sees
every thread), and its request threads would compete with the tests' event
loop for the GIL. It enforces S3's real 5 MiB minimum part size.

Use in a conftest::

    from tests.servers.s3 import s3_bucket, s3_env, s3_server  # noqa: F401

``s3_server`` (session) runs the server; ``s3_bucket`` makes a fresh bucket
per test; ``s3_env`` also puts the fake credentials and
``TOOLRUN_S3_ENDPOINT_URL`` in the environment, so
``Settings(storage_url=f"s3://{bucket}/prefix")`` and ``toolrun serve``
subprocesses (``env=s3_server.env()``) reach it. Also usable without pytest:
``with running_s3_server() as server: ...``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import boto3
import pytest
from botocore.config import Config

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

START_TIMEOUT_S = 30

_SERVER_SCRIPT = """
import logging
import sys
from moto.server import ThreadedMotoServer

logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request

server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()  # serve until the parent closes our stdin
server.stop()
"""


@dataclass(frozen=True)
class S3Server:
    """Where the server listens and the fake credentials it accepts."""

    endpoint_url: str
    access_key_id: str = "testing"
    secret_access_key: str = "testing"
    region: str = "us-east-1"

    def env(self) -> dict[str, str]:
        """Variables that point boto3 and toolrun at this server and nowhere else."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_REGION": self.region,
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": os.devnull,
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "TOOLRUN_S3_ENDPOINT_URL": self.endpoint_url,
        }

    @contextmanager
    def client(self) -> Iterator[S3Client]:
        """A boto3 client for setting up or inspecting buckets, closed on exit."""
        client = boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint_url,
            region_name=self.region,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key,
            config=Config(s3={"addressing_style": "path"}),
        )
        try:
            yield client
        finally:
            client.close()

    def create_bucket(self, name: str | None = None) -> str:
        """Create a bucket (a fresh random name by default) and return its name."""
        name = name or f"toolrun-test-{uuid.uuid4().hex[:16]}"
        with self.client() as client:
            client.create_bucket(Bucket=name)
        return name


@contextmanager
def running_s3_server() -> Iterator[S3Server]:
    """Start moto's S3 server on 127.0.0.1 (a free port) and stop it on exit."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AWS_")}
    env.pop("S3_UPLOAD_PART_MIN_SIZE", None)  # keep S3's real 5 MiB minimum
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER_SCRIPT],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        port_line = process.stdout.readline().strip()
        if not port_line.isdigit():
            raise RuntimeError(f"moto server did not start (said {port_line!r})")
        yield S3Server(endpoint_url=f"http://127.0.0.1:{port_line}")
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=START_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server for the whole test session."""
    with running_s3_server() as server:
        yield server


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    """A fresh, empty bucket on the session's server."""
    return s3_server.create_bucket()


@pytest.fixture
def s3_env(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The server, with its credentials and endpoint set in the environment for this test."""
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    return s3_server
