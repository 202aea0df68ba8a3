"""The typed clients against a real server: results, failures and error classes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.client.conftest import FAST_POLL_S
from tests.client.server import Server, closed_udp_port
from tests.servers.dns import DnsServer, Fault
from toolrun.client import (
    ApiError,
    AsyncClient,
    AuthError,
    BadRequest,
    Client,
    Conflict,
    InsufficientCredits,
    Job,
    JobFailed,
    NotFound,
)

pytestmark = pytest.mark.slow

EXAMPLE_A = {"type": "A", "name": "example.test.", "ttl": 300, "value": "192.0.2.10"}


def test_run_returns_the_result_and_charges_one_credit(server: Server, api_key: str) -> None:
    seen: list[str] = []
    with Client(server.base_url, api_key, min_poll_s=FAST_POLL_S) as client:
        result = client.run(
            "dns-lookup",
            domain="example.test",
            types=["A"],
            progress=lambda j: seen.append(j.status),
        )
        assert result["records"] == [EXAMPLE_A]
        assert result["status"] == "NOERROR"
        assert client.credits().balance == 9
        history = client.history()
        [job] = client.jobs()
    assert seen[-1] == "succeeded"
    assert [entry.reason for entry in history.items] == ["tool_use", "signup"]
    assert history.items[0].reference == f"job:{job.id}"
    assert job.result == result


async def test_async_client_runs_tools_and_reads_the_catalog(server: Server, api_key: str) -> None:
    async with AsyncClient(server.base_url, api_key, min_poll_s=FAST_POLL_S) as client:
        result = await client.run("dns-lookup", {"domain": "example.test"}, types=["A"])
        slugs = [tool.slug for tool in await client.tools()]
        detail = await client.tool("dns-lookup")
        summary = await client.credits()
    assert result["records"] == [EXAMPLE_A]
    assert "dns-lookup" in slugs
    assert detail.example is not None
    assert detail.path == "/openapi/tools/dns-lookup/execute"
    assert summary.balance == 9


def test_a_failed_job_raises_job_failed_with_its_error(server: Server, api_key: str) -> None:
    silent = f"127.0.0.1:{closed_udp_port()}"
    with Client(server.base_url, api_key, min_poll_s=FAST_POLL_S) as client:
        with pytest.raises(JobFailed) as caught:
            client.run("dns-lookup", domain="example.test", types=["A"], nameservers=[silent])
        balance = client.credits().balance
    failure = caught.value
    assert failure.code == 400
    assert failure.job.status == "failed"
    assert failure.job.credits_refunded
    assert failure.job.error is not None
    assert failure.message == failure.job.error.message
    assert balance == 10


def test_a_timed_out_name_server_answer_fails_the_job(
    server: Server, api_key: str, dns: DnsServer
) -> None:
    dns.set_fault("slow.example.test.", Fault.TIMEOUT)
    with Client(server.base_url, api_key, min_poll_s=0.5) as client:
        job = client.execute("dns-lookup", domain="slow.example.test", types=["A", "MX"])
        assert job.status in ("queued", "running")
        with pytest.raises(JobFailed) as caught:
            client.run("dns-lookup", domain="slow.example.test", types=["A"])
        finished = client.wait(job)
    assert caught.value.code == 400
    assert finished.status == "failed"
    assert finished.credits_refunded


def _bad_key(client: Client, server: Server) -> None:
    with Client(server.base_url, "trk_not-a-key") as stranger:
        stranger.credits()


def _bad_input(client: Client, server: Server) -> None:
    client.execute("dns-lookup", domain="example.test", types=[])


def _unknown_job(client: Client, server: Server) -> None:
    client.job("00000000-0000-4000-8000-000000000000")


def _unknown_tool(client: Client, server: Server) -> None:
    client.tool("no-such-tool")


def _reused_key(client: Client, server: Server) -> None:
    client.execute("dns-lookup", domain="example.test", types=["A"], idempotency_key="k-1")
    client.execute("dns-lookup", domain="example.test", types=["MX"], idempotency_key="k-1")


def _cancel_finished(client: Client, server: Server) -> None:
    job = client.wait(client.execute("dns-lookup", domain="example.test", types=["A"]))
    client.cancel(job.id)


@pytest.mark.parametrize(
    ("act", "error", "code"),
    [
        (_bad_key, AuthError, 401),
        (_bad_input, BadRequest, 400),
        (_unknown_job, NotFound, 404),
        (_unknown_tool, NotFound, 404),
        (_reused_key, Conflict, 409),
        (_cancel_finished, Conflict, 409),
    ],
)
def test_error_answers_raise_their_class(
    server: Server,
    api_key: str,
    act: Callable[[Client, Server], None],
    error: type[ApiError],
    code: int,
) -> None:
    with (
        Client(server.base_url, api_key, min_poll_s=FAST_POLL_S) as client,
        pytest.raises(error) as caught,
    ):
        act(client, server)
    assert caught.value.status == code
    assert caught.value.code == code
    assert caught.value.message
    assert caught.value.data["path"].startswith("/openapi/")


def test_bad_input_lists_the_fields(server: Server, api_key: str) -> None:
    with Client(server.base_url, api_key) as client, pytest.raises(BadRequest) as caught:
        client.create_job("tool", "dns-lookup", {"domain": "example.test", "types": []})
    assert [error["field"] for error in caught.value.errors] == ["payload.types"]


def test_an_exhausted_trial_raises_insufficient_credits(server: Server) -> None:
    key = server.create_account(anonymous=True)
    with Client(server.base_url, key, min_poll_s=FAST_POLL_S) as client:
        trial = client.credits().balance
        jobs: list[Job] = [
            client.wait(client.execute("dns-lookup", domain="example.test", types=["A"]))
            for _ in range(trial)
        ]
        with pytest.raises(InsufficientCredits) as caught:
            client.execute("dns-lookup", domain="example.test", types=["A"])
    assert all(job.status == "succeeded" for job in jobs)
    assert caught.value.status == 402


def test_the_environment_supplies_address_and_key(
    server: Server, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLRUN_BASE_URL", server.base_url + "/")
    monkeypatch.setenv("TOOLRUN_API_KEY", api_key)
    with Client() as client:
        assert client.base_url == server.base_url
        assert client.check_in().granted
        assert not client.check_in().granted
