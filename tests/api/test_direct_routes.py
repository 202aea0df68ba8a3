"""Keyed routes called without FastAPI's dependency solving (api/deps.py) behave as solved ones."""

from __future__ import annotations

from typing import Annotated

import httpx
from fastapi import APIRouter, FastAPI, Query, Request
from starlette.responses import Response

from tests.factories import create_account
from toolrun.api.deps import Context, CurrentAccount, KeyedRoute, _direct_arguments
from toolrun.api.envelope import ok
from toolrun.config import Settings
from toolrun.db.engine import Database


def _keyed_routes(app: FastAPI) -> dict[tuple[str, str], KeyedRoute]:
    found = {}
    for included in app.router.routes:
        for route in getattr(getattr(included, "original_router", None), "routes", []):
            if isinstance(route, KeyedRoute):
                for method in route.methods or ():
                    found[(method, route.path)] = route
    return found


def test_the_hot_read_routes_are_called_directly(app: FastAPI) -> None:
    routes = _keyed_routes(app)
    for key in [
        ("GET", "/openapi/credits"),
        ("GET", "/openapi/jobs/{job_id}"),
        ("POST", "/openapi/uploads/tasks/{task_id}/chunks"),
    ]:
        assert _direct_arguments(routes[key]) is not None, key
    for key in [("GET", "/openapi/credits/history"), ("POST", "/openapi/jobs")]:
        assert _direct_arguments(routes[key]) is None, key  # query or body parameters


async def test_a_direct_route_gets_its_arguments_and_still_needs_a_key(
    app: FastAPI, client: httpx.AsyncClient, db: Database, settings: Settings
) -> None:
    router = APIRouter(route_class=KeyedRoute)

    @router.get("/probe/{name}")
    async def probe(name: str, request: Request, account: CurrentAccount, ctx: Context) -> Response:
        return ok(
            {"name": name, "account": account.id, "path": request.url.path, "db": ctx.db is db}
        )

    @router.get("/solved/{name}")
    async def solved(
        name: str, account: CurrentAccount, flag: Annotated[bool, Query()] = False
    ) -> Response:
        return ok({"name": name, "flag": flag})

    app.include_router(router)
    routes = _keyed_routes(app)
    assert _direct_arguments(routes[("GET", "/probe/{name}")]) is not None
    assert _direct_arguments(routes[("GET", "/solved/{name}")]) is None
    created = await create_account(db, settings)
    headers = created.headers

    assert (await client.get("/probe/x")).status_code == 401
    answer = await client.get("/probe/caf%C3%A9", headers=headers)
    assert answer.json()["data"] == {
        "name": "café", "account": created.id, "path": "/probe/café", "db": True,
    }  # fmt: skip
    assert answer.headers["X-RateLimit-Limit"]
    flagged = await client.get("/solved/y?flag=true", headers=headers)
    assert flagged.json()["data"] == {"name": "y", "flag": True}
