"""The baseline of bench.http_bench: a bare FastAPI app answering constant envelopes.

    .venv/bin/python -m bench.bare_app --port 18080 --http-workers 2

``GET /openapi/credits`` returns the same envelope (same fields, same sizes of
values) as toolrun's credits route, and ``GET /openapi/jobs/{job_id}`` a
succeeded dns-lookup job envelope; both are serialised with orjson like
toolrun's ``envelope.ok``. No key, no database, no middleware. It is served by
uvicorn with the options ``toolrun serve`` uses: uvloop, httptools, no access
log, the same worker count.
"""

from __future__ import annotations

import argparse
from typing import Any

import orjson
import uvicorn
from fastapi import FastAPI
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
