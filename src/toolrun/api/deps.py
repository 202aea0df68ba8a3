"""The key check of every keyed route, and the dependencies routes declare.

A keyed route (one that declares ``CurrentAccount``) is a ``KeyedRoute``: it
checks the API key and counts the request *before* FastAPI reads and validates
the body. So a request without a usable key is 401 whatever its body, a broken
body of a keyed request still counts toward the rate limit and carries the
``X-RateLimit-*`` headers, and an account over its limit gets 429 before any
upload is spooled.

A keyed route whose endpoint takes nothing but ``str`` path parameters, the
``Request``, ``CurrentAccount`` and ``Context`` and returns a ``Response`` is
called directly, without FastAPI's dependency solving (which, with the two
documented key schemes, cost more CPU than the rest of such a request).
"""

from __future__ import annotations

import inspect
import typing
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


Arguments = Callable[[Request], dict[str, Any]]


def _direct_arguments(route: APIRoute) -> Arguments | None:
    """How to build the endpoint's arguments without FastAPI's dependency solving, or None when
    the endpoint needs it (query, header, cookie or body parameters, other dependencies, a
    non-``str`` path parameter, a return value FastAPI must serialize)."""
    dependant = route.dependant
    if not inspect.iscoroutinefunction(route.endpoint):
        return None
    if dependant.query_params or dependant.header_params or dependant.cookie_params:
        return None
    if dependant.body_params or dependant.response_param_name:
        return None
    if dependant.background_tasks_param_name or dependant.security_scopes_param_name:
        return None
    hints = typing.get_type_hints(route.endpoint)
    returned = hints.get("return")
    if not (isinstance(returned, type) and issubclass(returned, Response)):
        return None
    paths = [field.name for field in dependant.path_params]
    if any(hints.get(name) is not str for name in paths):
        return None
    account_name = context_name = None
    for sub in dependant.dependencies:
        if sub.call is current_account and account_name is None:
            account_name = sub.name
        elif sub.call is get_context and context_name is None:
            context_name = sub.name
        else:
            return None
    request_name = dependant.request_param_name

    def arguments(request: Request) -> dict[str, Any]:
        values = {name: request.path_params[name] for name in paths}
        if account_name:
            values[account_name] = request.state.account
        if context_name:
            values[context_name] = request.app.state.context
        if request_name:
            values[request_name] = request
        return values

    return arguments


class KeyedRoute(APIRoute):
    """An API route that, when it declares ``CurrentAccount``, authenticates before anything else."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        if not _declares_account(self.dependant):
            return self.body_handler()
        handler = self.body_handler(direct=_direct_arguments(self))

        async def keyed_handler(request: Request) -> Response:
            await authenticate(request)
            return await handler(request)

        return keyed_handler

    def body_handler(
        self, direct: Arguments | None = None
    ) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        """The handler that reads the body and runs the route; subclasses wrap it (size caps).
        With ``direct`` it calls the endpoint itself (see the module docstring)."""
        if direct is None:
            return super().get_route_handler()
        endpoint = self.endpoint

        async def direct_handler(request: Request) -> Response:
            response: Response = await endpoint(**direct(request))
            return response

        return direct_handler
