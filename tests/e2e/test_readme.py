"""README.md's curl walk-throughs, step by step, against a real ``toolrun serve`` on SQLite.

Reproduced as the README writes them (not parsed from it): the default SQLite
database in TOOLRUN_DATA_DIR, the default rate limit, the same headers
(``Authorization: Bearer`` or ``X-API-Key``) and the documented response shapes.
Only the port is free instead of 8080, and the DNS lookup asks a loopback
nameserver for ``example.test`` instead of the Internet for ``example.com``.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import CLI_TIMEOUT_S, Proc, Spawner, wait_until
from tests.servers.dns import EXAMPLE_ZONE, DnsServer

pytestmark = pytest.mark.slow

TOOLRUN = str(Path(sys.executable).with_name("toolrun"))  # the README's .venv/bin/toolrun
KEY_PATTERN = re.compile(r"^trk_[A-Za-z0-9_-]{43}$")
SUMMARY_FIELDS = {
    "balance", "isAnonymous", "anonymousSpent", "anonymousSpendLimit", "anonymousRemaining",
    "registrationRequired", "checkedInToday", "dailyReward", "signupReward", "toolCost",
    "nextCheckInAt", "timeZone",
}  # fmt: skip
LEDGER_FIELDS = {
    "id", "userId", "reason", "amount", "balanceAfter", "reference", "operation", "createdAt",
}  # fmt: skip


@pytest.fixture
def dns() -> Iterator[DnsServer]:
    with DnsServer(EXAMPLE_ZONE) as server:
        yield server


def _ok(response: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert (body["code"], body["message"]) == (0, "ok"), body
    for header in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
        assert header in response.headers, f"{header} missing from a keyed response"
    data: dict[str, Any] = body["data"]
    return data


def _is_datetime(text: str) -> bool:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).tzinfo is not None


def _create_account(spawner: Spawner, env: dict[str, str]) -> dict[str, Any]:
    result = subprocess.run(
        [TOOLRUN, "accounts", "create", "--name", "demo", "--json"],
        cwd=spawner.workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 1, f"--json must print one JSON object on stdout: {result.stdout!r}"
    created: dict[str, Any] = json.loads(lines[0])
    assert set(created) == {"accountId", "keyId", "apiKey"}
    assert KEY_PATTERN.match(created["apiKey"]), created["apiKey"]
    return created


def _credits_walkthrough(api: Proc, key: str) -> None:
    # 2. read the credits: a new account starts with the signup grant of 10
    summary = _ok(
        httpx.get(f"{api.url}/openapi/credits", headers={"Authorization": f"Bearer {key}"})
    )
    assert set(summary) == SUMMARY_FIELDS, set(summary) ^ SUMMARY_FIELDS
    assert summary["balance"] == 10
    assert summary["isAnonymous"] is False
    assert summary["checkedInToday"] is False
    assert summary["anonymousRemaining"] is None
    assert summary["registrationRequired"] is False
    assert summary["dailyReward"] == 10
    assert summary["signupReward"] == 10
    assert summary["toolCost"] == 1
    assert summary["timeZone"] == "Asia/Shanghai"
    assert _is_datetime(summary["nextCheckInAt"])

    # 3. check in: 10 credits once per calendar day in Beijing time
    checked_in = _ok(httpx.post(f"{api.url}/openapi/credits/check-in", headers={"X-API-Key": key}))
    assert set(checked_in) == SUMMARY_FIELDS | {"granted"}
    assert checked_in["balance"] == 20
    assert checked_in["checkedInToday"] is True
    assert checked_in["granted"] is True

    # 4. read the ledger, newest first, 20 a page
    history = _ok(
        httpx.get(f"{api.url}/openapi/credits/history?page=1", headers={"X-API-Key": key})
    )
    assert history["hasMore"] is False
    assert history["page"] == 1
    items = history["items"]
    assert [set(item) for item in items] == [LEDGER_FIELDS, LEDGER_FIELDS]
    assert [(i["reason"], i["amount"], i["balanceAfter"]) for i in items] == [
        ("daily_checkin", 10, 20),
        ("signup", 10, 10),
    ]


def _job_status(database: Path, job_id: str) -> str | None:
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5)) as db:
        row = db.execute("SELECT status FROM jobs WHERE id = ?", (job_id,)).fetchone()
    return row[0] if row else None


def test_readme_walkthroughs_work_as_written(spawner: Spawner, dns: DnsServer) -> None:
    env = spawner.env(TOOLRUN_DNS_NAMESERVERS=dns.address)  # default SQLite and rate limit

    # `make run` serves (with its in-process job workers); the account is created beside it.
    served = spawner.serve(env, job_workers=None, name="serve")
    spawner.wait_serving(served)
    account = _create_account(spawner, env)
    key = account["apiKey"]
    _credits_walkthrough(served, key)

    # Errors use one envelope; health needs no key; the description is version 2.0.0.
    unauthorized = httpx.get(f"{served.url}/openapi/credits")
    assert unauthorized.status_code == 401
    error = unauthorized.json()
    assert error["code"] == 401
    assert error["message"]
    assert set(error["data"]) >= {"path", "timestamp"}
    assert error["data"]["path"] == "/openapi/credits"
    assert httpx.get(f"{served.url}/healthz").status_code == 200
    assert httpx.get(f"{served.url}/openapi.json").json()["info"]["version"] == "2.0.0"

    served.signal(15)
    served.wait(30)

    # Jobs walk-through: the API without in-process workers, same data dir and key.
    api = spawner.serve(env, job_workers=0, name="serve-api-only")
    spawner.wait_serving(api)
    execute = f"{api.url}/openapi/tools/dns-lookup/execute"
    headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "lookup-example-1"}
    body = {"domain": "example.test", "types": ["A", "MX"]}

    # 1. create a DNS lookup job: 202, one credit reserved
    created = httpx.post(execute, headers=headers, json=body)
    job = _ok(created, 202)
    assert created.headers["x-credits-balance"] == "19"
    assert created.headers["x-credits-cost"] == "1"
    assert (job["kind"], job["action"], job["status"]) == ("tool", "dns-lookup", "queued")
    assert job["pollAfterMs"] == 6000
    assert job["statusUrl"] == f"/openapi/jobs/{job['id']}"

    # 2. the same request with the same Idempotency-Key: the same job, no second charge
    replayed = httpx.post(execute, headers=headers, json=body)
    assert _ok(replayed, 202)["id"] == job["id"]
    assert replayed.headers["idempotent-replayed"] == "true"
    assert replayed.headers["x-credits-balance"] == "19"

    # 3. queue a second job and cancel it while it is queued: its credit comes back
    other = _ok(
        httpx.post(
            execute,
            headers={"Authorization": f"Bearer {key}"},
            json={"domain": "example.org", "types": ["TXT"]},
        ),
        202,
    )
    canceled = _ok(
        httpx.post(
            f"{api.url}/openapi/jobs/{other['id']}/cancel",
            headers={"Authorization": f"Bearer {key}"},
        )
    )
    assert canceled["status"] == "canceled"
    assert canceled["creditsRefunded"] is True
    assert canceled["error"] == {"code": 409, "message": "job canceled; credit refunded"}

    # Now start a worker and poll the first job.
    spawner.worker(env, concurrency=1, name="worker")
    database = spawner.workdir / "data" / "toolrun.db"
    wait_until(
        lambda: _job_status(database, job["id"]) in ("succeeded", "failed"),
        timeout=40,
        message=lambda: f"job is {_job_status(database, job['id'])}\n{spawner.tails()}",
        every=0.25,
    )
    done = _ok(
        httpx.get(f"{api.url}/openapi/jobs/{job['id']}", headers={"Authorization": f"Bearer {key}"})
    )
    assert (done["status"], done["attempts"]) == ("succeeded", 1), done
    assert done["result"] == {
        "domain": "example.test",
        "status": "NOERROR",
        "resolver": dns.address,
        "records": [
            {"type": "A", "name": "example.test.", "ttl": 300, "value": "192.0.2.10"},
            {"type": "MX", "name": "example.test.", "ttl": 300, "value": "10 mail.example.test."},
            {"type": "MX", "name": "example.test.", "ttl": 300, "value": "20 backup.example.test."},
        ],
    }, done["result"]
