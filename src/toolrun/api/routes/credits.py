"""Credits: the summary, the daily check-in and the ledger history (DESIGN §5)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from starlette.responses import Response

from toolrun.api.deps import Context, CurrentAccount, KeyedRoute
from toolrun.api.envelope import ok
from toolrun.api.schemas import (
    ERROR_RESPONSES,
    CheckInData,
    CreditSummaryData,
    Envelope,
    HistoryData,
    history_data,
    summary_data,
)
from toolrun.core import credits

router = APIRouter(
    prefix="/openapi/credits", tags=["credits"], responses=ERROR_RESPONSES, route_class=KeyedRoute
)


@router.get("", response_model=Envelope[CreditSummaryData])
async def get_credits(account: CurrentAccount, context: Context) -> Response:
    """The account's balance, anonymous allowance and check-in state."""
    summary = await credits.current_summary(
        context.db, account_id=account.id, now=context.clock(), settings=context.settings
    )
    return ok(summary_data(summary))


@router.post("/check-in", response_model=Envelope[CheckInData])
async def check_in(account: CurrentAccount, context: Context) -> Response:
    """Grant the daily credits once per calendar day in Beijing time (`granted` says if it did)."""
    now = context.clock()
    async with context.db.write() as session:
        granted = await credits.check_in(
            session, account=account, now=now, settings=context.settings
        )
        summary = await credits.summary(
            session, account_id=account.id, now=now, settings=context.settings
        )
    return ok({**summary_data(summary), "granted": granted})


@router.get("/history", response_model=Envelope[HistoryData])
async def get_history(
    account: CurrentAccount,
    context: Context,
    page: Annotated[int, Query(ge=1, le=1_000_000, description="page number, from 1")] = 1,
) -> Response:
    """The credit ledger, newest first, 20 entries a page."""
    async with context.db.read() as session:
        history = await credits.history(session, account_id=account.id, page=page)
    return ok(history_data(history))
