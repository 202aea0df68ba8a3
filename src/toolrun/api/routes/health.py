"""Operations endpoints: no key, not rate limited, not in the OpenAPI document."""

from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text
from starlette.responses import Response

from toolrun.api.deps import Context
from toolrun.api.envelope import error, ok

router = APIRouter(include_in_schema=False)


@router.get("/healthz")
async def healthz() -> Response:
    """The process is up."""
    return ok({"status": "ok"})


@router.get("/readyz")
async def readyz(context: Context) -> Response:
    """The database answers."""
    try:
        async with context.db.read() as session:
            await session.execute(text("SELECT 1"))
    except Exception:
        return error(503, "database unreachable", path="/readyz", now=context.clock())
    return ok({"status": "ready", "database": context.db.dialect})


@router.get("/metrics")
async def metrics(context: Context) -> Response:
    """Prometheus text exposition of this process's metrics."""
    body = context.services["metrics"].render()
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")
