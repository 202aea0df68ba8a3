"""A worker that dies or is stopped mid-job loses no job and no credit (PostgreSQL).

The jobs are DNS lookups against a loopback nameserver that never answers the
names under test (``Fault.TIMEOUT``), so a job is provably mid-run (its query
reached the server, its row is ``running``) when the worker is killed.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Proc, Spawner, assert_money_invariant, jobs_by_id, wait_until
from tests.servers.dns import EXAMPLE_ZONE, DnsServer, Fault

pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("database_url", ["postgresql"], indirect=True),
]

LEASE_S = 2
RUN_TIMEOUT_S = 40.0
HANGING = ("hang1.example.test", "hang2.example.test")
QUICK = "quick.example.test"


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with DnsServer(EXAMPLE_ZONE) as server:
        server.add("hang1.example.test. 60 IN A 192.0.2.101")
        server.add("hang2.example.test. 60 IN A 192.0.2.102")
        server.add("quick.example.test. 60 IN A 192.0.2.103")
        for name in HANGING:
            server.set_fault(name + ".", Fault.TIMEOUT)
        yield server


def _env(spawner: Spawner, database_url: str, dns: DnsServer) -> dict[str, str]:
    return spawner.env(
        TOOLRUN_DATABASE_URL=database_url,
        TOOLRUN_DNS_NAMESERVERS=dns.address,
        TOOLRUN_JOB_LEASE_S=str(LEASE_S),
        TOOLRUN_JOB_POLL_INTERVAL_S="0.5",
        TOOLRUN_RATE_LIMIT_PER_MINUTE="1000",
    )


def _submit(api: Proc, key: str, domain: str) -> dict[str, Any]:
    response = httpx.post(
        f"{api.url}/openapi/tools/dns-lookup/execute",
        headers={"Authorization": f"Bearer {key}"},
        json={"domain": domain, "types": ["A"]},
        timeout=10,
    )
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()["data"]
    assert job["status"] == "queued"
    assert job["attempts"] == 0
    return job


def _get(api: Proc, key: str, job_id: str) -> dict[str, Any]:
    response = httpx.get(
        f"{api.url}/openapi/jobs/{job_id}", headers={"Authorization": f"Bearer {key}"}, timeout=10
    )
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()["data"]
    return data


def _balance(api: Proc, key: str) -> int:
    response = httpx.get(
        f"{api.url}/openapi/credits", headers={"Authorization": f"Bearer {key}"}, timeout=10
    )
    assert response.status_code == 200, response.text
    balance: int = response.json()["data"]["balance"]
    return balance


def _wait_running_mid_query(
    spawner: Spawner, database_url: str, dns: DnsServer, job_ids: list[str], worker: Proc
) -> None:
    """Every job is running, leased to ``worker``, and its DNS question has reached the server."""

    def mid_run() -> bool:
        jobs = jobs_by_id(database_url)
        asked = {query.name for query in dns.queries}
        return all(
            jobs[i]["status"] == "running"
            and f":{worker.pid}:" in (jobs[i]["worker_id"] or "")
            and jobs[i]["payload"]["domain"] + "." in asked
            for i in job_ids
        )

    wait_until(
        mid_run,
        timeout=RUN_TIMEOUT_S,
        message=lambda: (
            f"jobs never mid-run on {worker.name}: {jobs_by_id(database_url)}\n" + spawner.tails()
        ),
    )


def _wait_terminal(
    spawner: Spawner, database_url: str, job_ids: list[str]
) -> dict[str, dict[str, Any]]:
    def terminal() -> dict[str, dict[str, Any]] | None:
        jobs = jobs_by_id(database_url)
        done = all(jobs[i]["status"] in ("succeeded", "failed", "canceled") for i in job_ids)
        return jobs if done else None

    return wait_until(
        terminal,
        timeout=RUN_TIMEOUT_S,
        message=lambda: f"jobs not finished: {jobs_by_id(database_url)}\n" + spawner.tails(),
        every=0.25,
    )


def test_sigkill_mid_job_requeues_and_loses_no_credit(
    database_url: str, spawner: Spawner, dns: DnsServer
) -> None:
    env = _env(spawner, database_url, dns)
    api = spawner.serve(env, job_workers=0, name="api")
    doomed = spawner.worker(env, concurrency=2, name="worker-doomed")
    (account,) = spawner.create_accounts(env, 1)
    key = account["apiKey"]
    spawner.wait_serving(api)
    spawner.wait_worker_started(doomed)

    jobs = [_submit(api, key, domain) for domain in HANGING]
    job_ids = [job["id"] for job in jobs]
    _wait_running_mid_query(spawner, database_url, dns, job_ids, doomed)

    doomed.signal(signal.SIGKILL)
    assert doomed.wait(10) == -signal.SIGKILL
    rows = jobs_by_id(database_url)
    for job_id in job_ids:  # nobody has touched them yet: still running, first attempt
        assert (rows[job_id]["status"], rows[job_id]["attempts"]) == ("running", 1), rows[job_id]

    # The first name answers from now on; the second keeps hanging, so its retry fails.
    dns.set_fault("hang1.example.test.", None)
    rescuer = spawner.worker(env, concurrency=2, name="worker-rescuer")
    final = _wait_terminal(spawner, database_url, job_ids)

    answered, hanging = (final[job_id] for job_id in job_ids)
    assert answered["status"] == "succeeded", answered
    assert answered["attempts"] == 2, answered
    assert answered["result"]["records"] == [
        {"type": "A", "name": "hang1.example.test.", "ttl": 60, "value": "192.0.2.101"}
    ], answered
    assert hanging["status"] == "failed", hanging
    assert hanging["attempts"] == 2, hanging
    assert hanging["credits_refunded"] is True
    assert hanging["error_code"] == 400, hanging

    via_api = _get(api, key, job_ids[1])
    assert via_api["status"] == "failed"
    assert via_api["attempts"] == 2
    assert via_api["creditsRefunded"] is True
    assert via_api["error"]["code"] == 400
    assert via_api["result"] is None
    assert _get(api, key, job_ids[0])["attempts"] == 2
    assert _balance(api, key) == 10 - 2 + 1  # one charged (succeeded), one reserved and refunded
    assert "requeued" in rescuer.log(), rescuer.tail()
    assert_money_invariant(database_url)


def test_sigterm_stops_claiming_and_finishes_or_requeues_the_running_job(
    database_url: str, spawner: Spawner, dns: DnsServer
) -> None:
    env = _env(spawner, database_url, dns)
    api = spawner.serve(env, job_workers=0, name="api")
    stopping = spawner.worker(env, concurrency=2, name="worker-stopping")
    (account,) = spawner.create_accounts(env, 1)
    key = account["apiKey"]
    spawner.wait_serving(api)
    spawner.wait_worker_started(stopping)

    running = _submit(api, key, HANGING[0])
    _wait_running_mid_query(spawner, database_url, dns, [running["id"]], stopping)

    stopping.signal(signal.SIGTERM)
    wait_until(  # the claim loop has ended and the worker is draining its running job
        lambda: "waiting up to" in stopping.log(),
        timeout=10,
        message=lambda: "worker did not start draining after SIGTERM\n" + stopping.tail(),
    )
    late = _submit(api, key, QUICK)  # arrives (with its NOTIFY) while the worker drains
    assert stopping.wait(30) == 0, stopping.tail()

    rows = jobs_by_id(database_url)
    assert (rows[late["id"]]["status"], rows[late["id"]]["attempts"]) == ("queued", 0), (
        f"a stopping worker claimed a new job: {rows[late['id']]}"
    )
    first = rows[running["id"]]
    assert first["attempts"] == 1, first
    if first["status"] == "queued":  # put back at the end of the grace period
        assert first["credits_refunded"] is False
        assert first["worker_id"] is None
    else:  # finished within the grace period: the hanging lookup failed, refunded once
        assert (first["status"], first["error_code"]) == ("failed", 400), first
    assert_money_invariant(database_url)

    dns.set_fault(HANGING[0] + ".", None)
    spawner.worker(env, concurrency=2, name="worker-next")
    final = _wait_terminal(spawner, database_url, [running["id"], late["id"]])
    assert final[late["id"]]["status"] == "succeeded"
    assert final[late["id"]]["attempts"] == 1
    if first["status"] == "queued":
        assert final[running["id"]]["status"] == "succeeded"
        assert final[running["id"]]["attempts"] == 2
    expected = 10 - 1 - (0 if first["status"] == "failed" else 1)
    assert _balance(api, key) == expected
    assert_money_invariant(database_url)
