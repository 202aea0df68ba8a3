"""Scale-out on one PostgreSQL database: two API-only processes, two worker processes.

Proves, across processes: each job runs exactly once (one DNS question per
job, attempts 1, one result); credits hold under concurrent creation through
both APIs (10 credits, 14 requests: exactly 10 accepted); the per-minute rate
limit is one count per account, not per process; and the money invariant.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Proc, Spawner, assert_money_invariant, jobs_by_id, wait_until
from tests.servers.dns import EXAMPLE_ZONE, DnsServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("database_url", ["postgresql"], indirect=True),
]

RATE_LIMIT = 20
RATE_BURST = 30
JOBS_PER_ACCOUNT = 6
OVERDRAFT_REQUESTS = 14
SIGNUP_CREDITS = 10
NAMES = 40
RUN_TIMEOUT_S = 40.0
ANSWER_DELAY_S = 0.1


class SlowDnsServer(DnsServer):
    """Answers after ``ANSWER_DELAY_S`` (one at a time), so jobs stay in flight long enough
    that one worker's slots fill up and the other worker has to claim the rest."""

    def _reply(self, data: bytes, transport: str) -> bytes | None:
        time.sleep(ANSWER_DELAY_S)
        return super()._reply(data, transport)


@pytest.fixture
def dns_pair() -> Iterator[list[DnsServer]]:
    """One nameserver per worker process: which one was asked tells which worker ran a job."""
    servers: list[DnsServer] = [SlowDnsServer(EXAMPLE_ZONE), SlowDnsServer(EXAMPLE_ZONE)]
    for server in servers:
        for i in range(NAMES):
            server.add(f"n{i}.example.test. 60 IN A 192.0.2.{i + 1}")
    with servers[0], servers[1]:
        yield servers


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def _burst(
    requests: list[tuple[str, str, str, dict[str, Any] | None]],
) -> list[httpx.Response]:
    """Send (method, url, key, json) requests all at once."""
    async with httpx.AsyncClient(timeout=30) as client:
        return list(
            await asyncio.gather(
                *(
                    client.request(method, url, headers=_auth(key), json=body)
                    for method, url, key, body in requests
                )
            )
        )


def _wait_for_quiet_second() -> None:
    """Keep a sub-second burst inside one UTC minute: skip the last seconds of a minute."""
    second = datetime.now(UTC).second
    if second >= 57:
        time.sleep(60 - second + 0.2)


def _check_rate_limit(apis: list[Proc], key: str) -> None:
    _wait_for_quiet_second()
    responses = asyncio.run(
        _burst(
            [("GET", f"{apis[i % 2].url}/openapi/credits", key, None) for i in range(RATE_BURST)]
        )
    )
    by_window: dict[str, list[tuple[int, httpx.Response]]] = {}
    for i, response in enumerate(responses):
        assert response.status_code in (200, 429), response.text
        assert response.headers["X-RateLimit-Limit"] == str(RATE_LIMIT)
        by_window.setdefault(response.headers["X-RateLimit-Reset"], []).append((i, response))
    for window, hits in by_window.items():
        ok = [i for i, r in hits if r.status_code == 200]
        limited = [r for _, r in hits if r.status_code == 429]
        assert len(ok) == min(RATE_LIMIT, len(hits)), (
            f"window {window}: {len(ok)} of {len(hits)} requests allowed, limit {RATE_LIMIT}"
        )
        for response in limited:
            assert response.json()["code"] == 429
            assert 1 <= int(response.headers["Retry-After"]) <= 60
            assert response.headers["X-RateLimit-Remaining"] == "0"
    (window, hits), *others = sorted(by_window.items(), key=lambda item: -len(item[1]))
    if len(hits) > RATE_LIMIT:  # the usual case: the whole burst in one minute
        ok_per_api = Counter(i % 2 for i, r in hits if r.status_code == 200)
        assert ok_per_api[0] + ok_per_api[1] == RATE_LIMIT
        # Both processes answered, and neither counted on its own: the limit is shared.
        assert min(ok_per_api[0], ok_per_api[1]) > 0, ok_per_api
        if not others and int(window) - time.time() > 1:
            for api in apis:  # still the same minute: each process refuses the account
                late = httpx.get(f"{api.url}/openapi/credits", headers=_auth(key), timeout=10)
                if late.headers["X-RateLimit-Reset"] == window:
                    assert late.status_code == 429, late.text


def test_two_apis_two_workers_share_jobs_credits_and_rate_limits(
    database_url: str, spawner: Spawner, dns_pair: list[DnsServer]
) -> None:
    env = spawner.env(
        TOOLRUN_DATABASE_URL=database_url,
        TOOLRUN_RATE_LIMIT_PER_MINUTE=str(RATE_LIMIT),
        TOOLRUN_JOB_POLL_INTERVAL_S="0.5",
    )
    apis = [spawner.serve(env, job_workers=0, name=f"api-{i}") for i in range(2)]
    workers = [
        spawner.worker(
            {**env, "TOOLRUN_DNS_NAMESERVERS": dns.address}, concurrency=4, name=f"worker-{i}"
        )
        for i, dns in enumerate(dns_pair)
    ]
    alice, bob, overdrawn, limited = spawner.create_accounts(env, 4)
    for api in apis:
        spawner.wait_serving(api)
    for worker in workers:
        spawner.wait_worker_started(worker)

    _check_rate_limit(apis, limited["apiKey"])

    names = (f"n{i}.example.test" for i in range(NAMES))
    creates: list[tuple[str, str, str, dict[str, Any] | None]] = []
    owners: list[str] = []
    for account, count in (
        (alice, JOBS_PER_ACCOUNT),
        (bob, JOBS_PER_ACCOUNT),
        (overdrawn, OVERDRAFT_REQUESTS),
    ):
        for i in range(count):
            url = f"{apis[i % 2].url}/openapi/tools/dns-lookup/execute"
            creates.append(
                ("POST", url, account["apiKey"], {"domain": next(names), "types": ["A"]})
            )
            owners.append(account["accountId"])
    responses = asyncio.run(_burst(creates))

    accepted: dict[str, dict[str, Any]] = {}
    balances_seen: dict[str, list[int]] = {}
    refused = Counter[str]()
    for owner, (_, _, _, body), response in zip(owners, creates, responses, strict=True):
        if response.status_code == 402:
            assert response.json()["code"] == 402
            refused[owner] += 1
            continue
        assert response.status_code == 202, response.text
        assert response.headers["X-Credits-Cost"] == "1"
        job = response.json()["data"]
        assert job["status"] == "queued"
        assert job["attempts"] == 0
        accepted[job["id"]] = {"owner": owner, "domain": body["domain"] if body else None}
        balances_seen.setdefault(owner, []).append(int(response.headers["X-Credits-Balance"]))
    # Exactly the balance is accepted; each reservation saw a distinct balance after it.
    assert refused == {overdrawn["accountId"]: OVERDRAFT_REQUESTS - SIGNUP_CREDITS}, refused
    assert sorted(balances_seen[overdrawn["accountId"]]) == list(range(SIGNUP_CREDITS))
    for account in (alice, bob):
        assert sorted(balances_seen[account["accountId"]]) == list(
            range(SIGNUP_CREDITS - JOBS_PER_ACCOUNT, SIGNUP_CREDITS)
        )
    assert len(accepted) == 2 * JOBS_PER_ACCOUNT + SIGNUP_CREDITS

    def all_done() -> dict[str, dict[str, Any]] | None:
        rows = jobs_by_id(database_url)
        done = all(rows[i]["status"] in ("succeeded", "failed", "canceled") for i in accepted)
        return rows if done else None

    rows = wait_until(
        all_done,
        timeout=RUN_TIMEOUT_S,
        message=lambda: (
            f"jobs not finished: {Counter(r['status'] for r in jobs_by_id(database_url).values())}\n"
            + spawner.tails()
        ),
        every=0.25,
    )
    assert set(rows) == set(accepted), "the database holds jobs no 202 announced"
    for job_id, expected in accepted.items():
        row = rows[job_id]
        assert row["account_id"] == expected["owner"]
        assert row["status"] == "succeeded", row
        assert row["attempts"] == 1, row
        assert row["result"]["domain"] == expected["domain"], row
        assert [r["value"] for r in row["result"]["records"]] == [
            f"192.0.2.{int(expected['domain'].split('.')[0][1:]) + 1}"
        ], row
    # Exactly one execution per job: one DNS question per job's name, over both workers'
    # nameservers together, none for refused requests; and both workers took jobs.
    asked = Counter(q.name for dns in dns_pair for q in dns.queries if q.type == "A")
    assert asked == Counter(f"{expected['domain']}." for expected in accepted.values()), asked
    ran_by = Counter(rows[job_id]["result"]["resolver"] for job_id in accepted)
    assert set(ran_by) == {dns.address for dns in dns_pair}, f"jobs per worker: {ran_by}"

    for account, spent in (
        (alice, JOBS_PER_ACCOUNT),
        (bob, JOBS_PER_ACCOUNT),
        (overdrawn, SIGNUP_CREDITS),
    ):
        api = apis[0] if account is alice else apis[1]
        response = httpx.get(
            f"{api.url}/openapi/credits", headers=_auth(account["apiKey"]), timeout=10
        )
        assert response.status_code == 200, response.text
        assert response.json()["data"]["balance"] == SIGNUP_CREDITS - spent
        history = httpx.get(
            f"{api.url}/openapi/credits/history?page=1",
            headers=_auth(account["apiKey"]),
            timeout=10,
        )
        assert history.status_code == 200, history.text
        items = history.json()["data"]["items"]
        assert Counter(item["reason"] for item in items) == {"signup": 1, "tool_use": spent}
        assert history.json()["data"]["hasMore"] is False
    assert_money_invariant(database_url)
