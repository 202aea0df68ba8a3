"""The baseline of bench.http_bench: a bare FastAPI app answering constant envelopes.

    .venv/bin/python -m bench.bare_app --port 18080 --http-workers 2

``GET /openapi/credits`` returns the same envelope (same fields, same sizes of
values) as toolrun's credits route, and ``GET /openapi/jobs/{job_id}`` a
succeeded dns-lookup job envelope; both are serialised with orjson like
toolrun's ``envelope.ok``. No key, no database, no middleware. It is served by
uvicorn with the options ``toolrun serve`` uses: uvloop, httptools, no access
log, the same worker count.

``GET /floor/credits`` is the same envelope with the balance read from a toolrun
database per request (``BARE_APP_DATABASE_URL``, ``BARE_APP_ACCOUNT_ID``): one
``SELECT`` on an asyncpg pool of 8 connections per process, or one aiosqlite
call, and nothing else (no key check, no request count); ``GET /floor/jobs/{id}``
likewise reads the job's status from PostgreSQL, and ``GET /floor/keyed/jobs/{id}``
adds the least a keyed, rate-limited read needs: the key's hash checked, the
request counted and the job read in one statement. They bound what any
service that reads its answer from the database per request can reach.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from datetime import UTC, datetime
from typing import Any

import aiosqlite
import asyncpg
import orjson
import uvicorn
from fastapi import FastAPI, Request
from starlette.responses import Response

CREDITS: dict[str, Any] = {
    "code": 0,
    "message": "ok",
    "data": {
        "balance": 10,
        "isAnonymous": False,
        "anonymousSpent": 0,
        "anonymousSpendLimit": 0,
        "anonymousRemaining": None,
        "registrationRequired": False,
        "checkedInToday": False,
        "dailyReward": 10,
        "signupReward": 10,
        "toolCost": 1,
        "nextCheckInAt": "2026-11-22T16:00:00.000Z",
        "timeZone": "Asia/Shanghai",
    },
}

JOB_ID = "6d53a0c2-8f8e-4d1c-9a57-2b1f0c1e9a11"
JOB: dict[str, Any] = {
    "code": 0,
    "message": "ok",
    "data": {
        "id": JOB_ID,
        "kind": "tool",
        "action": "dns-lookup",
        "status": "succeeded",
        "result": {
            "domain": "example.test",
            "status": "NOERROR",
            "resolver": "127.0.0.1:53000",
            "records": [{"type": "A", "name": "example.test.", "ttl": 300, "value": "192.0.2.1"}],
        },
        "error": None,
        "creditCost": 1,
        "creditsRefunded": False,
        "attempts": 1,
        "createdAt": "2026-11-22T08:00:00.000Z",
        "startedAt": "2026-11-22T08:00:00.002Z",
        "completedAt": "2026-11-22T08:00:00.010Z",
        "deadlineAt": "2026-11-22T08:02:00.000Z",
        "pollAfterMs": 6000,
        "statusUrl": f"/openapi/jobs/{JOB_ID}",
    },
}


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


app = FastAPI()


@app.get("/openapi/credits")
async def credits() -> Response:
    return JSONResponse(CREDITS)


@app.get("/openapi/jobs/{job_id}")
async def job(job_id: str) -> Response:
    return JSONResponse(JOB)


_BALANCE_SQL = "SELECT balance FROM accounts WHERE id = {}"
_floor: dict[str, Any] = {}


async def _balance() -> int:
    url = os.environ["BARE_APP_DATABASE_URL"]
    account_id = os.environ["BARE_APP_ACCOUNT_ID"]
    if url.startswith("sqlite"):
        if "sqlite" not in _floor:
            _floor["sqlite"] = await aiosqlite.connect(url.split(":///", 1)[1])
        rows = await _floor["sqlite"].execute_fetchall(_BALANCE_SQL.format("?"), (account_id,))
        return int(next(iter(rows))[0])
    if "pool" not in _floor:
        _floor["pool"] = await asyncpg.create_pool(url, min_size=8, max_size=8)
    balance: int = await _floor["pool"].fetchval(_BALANCE_SQL.format("$1"), account_id)
    return balance


@app.get("/floor/credits")
async def floor_credits() -> Response:
    return JSONResponse({**CREDITS, "data": {**CREDITS["data"], "balance": await _balance()}})


_JOB_SQL = "SELECT status, attempts FROM jobs WHERE id = $1"


@app.get("/floor/jobs/{job_id}")
async def floor_job(job_id: str) -> Response:
    """The job envelope with the job's status read from PostgreSQL (one ``SELECT``)."""
    if "pool" not in _floor:
        url = os.environ["BARE_APP_DATABASE_URL"]
        _floor["pool"] = await asyncpg.create_pool(url, min_size=8, max_size=8)
    row = await _floor["pool"].fetchrow(_JOB_SQL, job_id)
    status = row["status"] if row else "missing"
    return JSONResponse({**JOB, "data": {**JOB["data"], "status": status, "id": job_id}})


_KEYED_JOB_SQL = """
WITH caller AS (
    SELECT a.id FROM api_keys AS k JOIN accounts AS a ON a.id = k.account_id
    WHERE k.key_hash = $1 AND k.revoked_at IS NULL
      AND (k.expires_at IS NULL OR k.expires_at > $2) AND NOT a.disabled
), counted AS (
    INSERT INTO rate_limit_windows (account_id, window_start, count)
    SELECT id, $3, 1 FROM caller
    ON CONFLICT (account_id, window_start) DO UPDATE SET count = rate_limit_windows.count + 1
    RETURNING count
)
SELECT j.status, (SELECT count FROM counted) AS request_count
FROM jobs AS j WHERE j.id = $4 AND j.account_id = (SELECT id FROM caller)
"""


@app.get("/floor/keyed/jobs/{job_id}")
async def floor_keyed_job(job_id: str, request: Request) -> Response:
    """The least a keyed, rate-limited job read must do: hash the key, then check it, count
    the request and read the job in one statement (one round trip)."""
    if "pool" not in _floor:
        url = os.environ["BARE_APP_DATABASE_URL"]
        _floor["pool"] = await asyncpg.create_pool(url, min_size=8, max_size=8)
    raw = request.headers.get("authorization", "").removeprefix("Bearer ")
    now = datetime.now(UTC)
    row = await _floor["pool"].fetchrow(
        _KEYED_JOB_SQL,
        hashlib.sha256(raw.encode()).hexdigest(),
        now,
        now.replace(second=0, microsecond=0),
        job_id,
    )
    if row is None:
        return JSONResponse({"code": 401, "message": "unauthorized", "data": None}, status_code=401)
    return JSONResponse({**JOB, "data": {**JOB["data"], "status": row["status"], "id": job_id}})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18080)
    parser.add_argument("--http-workers", type=int, default=1)
    args = parser.parse_args()
    uvicorn.run(
        "bench.bare_app:app",
        host=args.host,
        port=args.port,
        workers=args.http_workers,
        loop="uvloop",
        http="httptools",
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=30,
    )


if __name__ == "__main__":
    main()
