"""Retries: 5xx and dropped connections resend with the same Idempotency-Key and charge once."""

from __future__ import annotations

import pytest

from tests.client.conftest import FAST_POLL_S
from tests.client.proxy import FaultProxy
from tests.client.server import Server, free_port
from toolrun.client import Client, NetworkError, RetryPolicy, ServerError

pytestmark = pytest.mark.slow

QUICK = RetryPolicy(backoff_s=0.01)


@pytest.mark.parametrize("fault", ["500", "502", "drop"])
def test_an_interrupted_creation_is_retried_and_charged_once(
    server: Server, api_key: str, fault: str
) -> None:
    with (
        FaultProxy(server.base_url, fault) as proxy,
        Client(proxy.base_url, api_key, retry=QUICK, min_poll_s=FAST_POLL_S) as client,
    ):
        result = client.run("dns-lookup", domain="example.test", types=["A"])
        summary = client.credits()
        jobs = client.jobs()
    creations = [seen for seen in proxy.seen if seen.method == "POST"]
    assert len(creations) == 2
    assert creations[0].idempotency_key is not None
    assert creations[0].idempotency_key == creations[1].idempotency_key
    assert result["records"][0]["value"] == "192.0.2.10"
    assert summary.balance == 9
    assert len(jobs) == 1


def test_a_creation_without_key_is_not_resent_after_a_server_error(
    server: Server, api_key: str
) -> None:
    with (
        FaultProxy(server.base_url, "500") as proxy,
        Client(proxy.base_url, api_key, retry=QUICK) as client,
    ):
        with pytest.raises(ServerError) as caught:
            client.execute("dns-lookup", domain="example.test", types=["A"])
        jobs = client.jobs()
    assert caught.value.status == 500
    assert caught.value.message == "submission interrupted"
    assert len([seen for seen in proxy.seen if seen.method == "POST"]) == 1
    assert len(jobs) == 1  # the job exists: only a key lets a retry find it again


def test_reads_are_retried_until_the_retries_run_out(server: Server, api_key: str) -> None:
    waits: list[float] = []
    policy = RetryPolicy(retries=2, backoff_s=0.25)
    with FaultProxy(server.base_url, "drop", method="GET", path_prefix="/openapi/credits") as proxy:
        proxy.faults_left = 3
        with Client(proxy.base_url, api_key, retry=policy, sleep=waits.append) as client:
            with pytest.raises(NetworkError):
                client.credits()
            assert client.credits().balance == 10
    assert waits == [0.25, 0.5]


def test_an_unreachable_server_is_a_network_error() -> None:
    waits: list[float] = []
    address = f"http://127.0.0.1:{free_port()}"
    with Client(address, "trk_any", sleep=waits.append) as client, pytest.raises(NetworkError):
        client.credits()
    assert waits == [0.5, 1.0, 2.0, 4.0]
