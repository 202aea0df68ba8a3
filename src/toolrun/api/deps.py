"""Dependencies every keyed route declares: the app context and the authenticated account."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from toolrun.api.context import AppContext
from toolrun.core import keys, ratelimit
from toolrun.core.errors import RateLimited, Unauthenticated
from toolrun.db.tables import Account

_bearer = HTTPBearer(auto_error=False, description="`Authorization: Bearer <API key>`")
_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False, description="the API key")


def get_context(request: Request) -> AppContext:
    context: AppContext = request.app.state.context
    return context


Context = Annotated[AppContext, Depends(get_context)]


async def get_current_account(
    request: Request,
    context: Context,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_api_key_header)],
) -> Account:
    """Authenticate the key and count the request against the account's per-minute limit.

    Both happen in one short transaction that commits before the route runs, so
    a request counts even when it later fails validation.
    """
    raw_key = bearer.credentials if bearer is not None else api_key
    if not raw_key:
        if request.headers.get("authorization"):
            raise Unauthenticated("Authorization header must be `Bearer <API key>`")
        raise Unauthenticated()
    now = context.clock()
    async with context.db.write() as session:
        account = await keys.authenticate(session, raw_key.strip(), now)
        status = await ratelimit.hit(
            session,
            account_id=account.id,
            now=now,
            limit=context.settings.rate_limit_per_minute,
        )
    request.state.rate_limit = status
    request.state.account_id = account.id
    if status.exceeded:
        raise RateLimited(status.retry_after(now), status.limit)
    return account


CurrentAccount = Annotated[Account, Depends(get_current_account)]
