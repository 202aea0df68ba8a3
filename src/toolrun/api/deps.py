"""The key check of every keyed route, and the dependencies routes declare.

A keyed route (one that declares ``CurrentAccount``) is a ``KeyedRoute``: it
checks the API key and counts the request *before* FastAPI reads and validates
the body. So a request without a usable key is 401 whatever its body, a broken
body of a keyed request still counts toward the rate limit and carries the
``X-RateLimit-*`` headers, and an account over its limit gets 429 before any
upload is spooled.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader, HTTPBearer
from starlette.responses import Response

from toolrun.api.context import AppContext
from toolrun.core import access
from toolrun.core.errors import RateLimited, Unauthenticated
from toolrun.db.tables import Account

# Declared by ``CurrentAccount`` so that /openapi.json documents both ways of sending a key;
# the key itself is read by ``authenticate`` before the route's dependencies run.
_bearer = HTTPBearer(auto_error=False, description="`Authorization: Bearer <API key>`")
_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="the API key")

BEARER_PREFIX = "bearer "


async def get_context(request: Request) -> AppContext:
    context: AppContext = request.app.state.context
    return context


Context = Annotated[AppContext, Depends(get_context)]


def _raw_key(request: Request) -> str:
    authorization = request.headers.get("authorization")
    if authorization:
        if authorization[: len(BEARER_PREFIX)].lower() == BEARER_PREFIX:
            raw = authorization[len(BEARER_PREFIX) :].strip()
            if raw:
                return raw
        if not request.headers.get("x-api-key"):
            raise Unauthenticated("Authorization header must be `Bearer <API key>`")
    raw = (request.headers.get("x-api-key") or "").strip()
    if not raw:
        raise Unauthenticated()
    return raw


async def authenticate(request: Request) -> None:
    """Check the key and count the request; the account lands in ``request.state.account``."""
    context: AppContext = request.app.state.context
    raw_key = _raw_key(request)
    now = context.clock()
    caller = await access.check_and_count(
        context.db, raw_key, now=now, limit=context.settings.rate_limit_per_minute
    )
    request.state.rate_limit = caller.rate_limit
    request.state.account_id = caller.account.id
    request.state.account = caller.account
    if caller.rate_limit.exceeded:
        raise RateLimited(caller.rate_limit.retry_after(now), caller.rate_limit.limit)


async def current_account(
    request: Request,
    _bearer_credentials: Annotated[Any, Depends(_bearer)],
    _api_key: Annotated[Any, Depends(_api_key_header)],
) -> Account:
    """The account ``KeyedRoute`` authenticated for this request (or, on any other route, now)."""
    if getattr(request.state, "account", None) is None:
        await authenticate(request)
    account: Account = request.state.account
    return account


CurrentAccount = Annotated[Account, Depends(current_account)]


def _declares_account(dependant: Dependant) -> bool:
    return any(
        sub.call is current_account or _declares_account(sub) for sub in dependant.dependencies
    )


class KeyedRoute(APIRoute):
    """An API route that, when it declares ``CurrentAccount``, authenticates before anything else."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = self.body_handler()
        if not _declares_account(self.dependant):
            return handler

        async def keyed_handler(request: Request) -> Response:
            await authenticate(request)
            return await handler(request)

        return keyed_handler

    def body_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The handler that reads the body and runs the route; subclasses wrap it (size caps)."""
        return super().get_route_handler()
