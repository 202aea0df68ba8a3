"""429: the client waits the server's Retry-After (through its ``sleep``) before it gives up."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from tests.client.server import Server, running_server
from toolrun.client import Client, RateLimited, RetryPolicy

pytestmark = pytest.mark.slow

LIMIT = 3


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("toolrun-limited")
    with running_server(data_dir, rate_limit_per_minute=str(LIMIT)) as running:
        yield running


def _clear_of_the_minute_edge() -> None:
    """The window is the UTC minute: start early enough that it does not roll over mid-test."""
    second = datetime.now(UTC).second
    if second >= 50:
        time.sleep(61 - second)


def test_a_rate_limited_call_waits_retry_after_each_time(limited: Server) -> None:
    key = limited.create_account()
    _clear_of_the_minute_edge()
    waits: list[float] = []
    with Client(limited.base_url, key, sleep=waits.append) as client:
        for _ in range(LIMIT):
            client.credits()
        with pytest.raises(RateLimited) as caught:
            client.credits()
    retry_after = caught.value.retry_after
    assert retry_after is not None
    assert 1 <= retry_after <= 60
    assert len(waits) == RetryPolicy().rate_limit_waits
    assert all(abs(wait - retry_after) <= 1 for wait in waits)
    assert caught.value.status == 429


def test_the_wait_is_the_header_the_server_sent(limited: Server) -> None:
    key = limited.create_account()
    _clear_of_the_minute_edge()
    headers = {"Authorization": f"Bearer {key}"}
    for _ in range(LIMIT):
        httpx.get(f"{limited.base_url}/openapi/credits", headers=headers)
    refused = httpx.get(f"{limited.base_url}/openapi/credits", headers=headers)
    assert refused.status_code == 429
    waits: list[float] = []
    policy = RetryPolicy(rate_limit_waits=1)
    with (
        Client(limited.base_url, key, sleep=waits.append, retry=policy) as client,
        pytest.raises(RateLimited),
    ):
        client.credits()
    assert waits[0] in (
        float(refused.headers["retry-after"]),
        float(refused.headers["retry-after"]) - 1,
    )
