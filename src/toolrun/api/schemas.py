"""Response shapes as pydantic models (for the OpenAPI document) and the functions that fill them."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from toolrun.core.clock import isoformat
from toolrun.core.credits import CreditSummary, HistoryPage
from toolrun.db.tables import Job, JobStatus, LedgerEntry

DataT = TypeVar("DataT")


class Envelope(BaseModel, Generic[DataT]):
    code: int = Field(0, description="0 on success")
    message: str = Field("ok", description="'ok' on success")
    data: DataT


class ErrorData(BaseModel):
    path: str
    timestamp: str
    errors: list[dict[str, Any]] | None = Field(
        None, description="400 only: one {field, message} per problem"
    )


class ErrorEnvelope(BaseModel):
    code: int = Field(..., ge=400, le=599)
    message: str
    data: ErrorData


class CreditSummaryData(BaseModel):
    balance: int = Field(..., ge=0)
    isAnonymous: bool
    anonymousSpent: int = Field(..., ge=0)
    anonymousSpendLimit: int = Field(..., ge=0)
    anonymousRemaining: int | None
    registrationRequired: bool
    checkedInToday: bool
    dailyReward: int
    signupReward: int
    toolCost: int
    nextCheckInAt: str
    timeZone: str


class CheckInData(CreditSummaryData):
    granted: bool


class LedgerEntryData(BaseModel):
    id: str
    userId: str
    reason: str
    amount: int
    balanceAfter: int = Field(..., ge=0)
    reference: str
    operation: str | None
    createdAt: str


class HistoryData(BaseModel):
    items: list[LedgerEntryData]
    hasMore: bool
    page: int = Field(..., ge=1)


def summary_data(summary: CreditSummary) -> dict[str, Any]:
    return {
        "balance": summary.balance,
        "isAnonymous": summary.is_anonymous,
        "anonymousSpent": summary.anonymous_spent,
        "anonymousSpendLimit": summary.anonymous_spend_limit,
        "anonymousRemaining": summary.anonymous_remaining,
        "registrationRequired": summary.registration_required,
        "checkedInToday": summary.checked_in_today,
        "dailyReward": summary.daily_reward,
        "signupReward": summary.signup_reward,
        "toolCost": summary.tool_cost,
        "nextCheckInAt": isoformat(summary.next_check_in_at),
        "timeZone": summary.time_zone,
    }


def ledger_entry_data(entry: LedgerEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "userId": entry.account_id,
        "reason": entry.reason,
        "amount": entry.amount,
        "balanceAfter": entry.balance_after,
        "reference": entry.reference,
        "operation": entry.operation,
        "createdAt": isoformat(entry.created_at),
    }


def history_data(page: HistoryPage) -> dict[str, Any]:
    return {
        "items": [ledger_entry_data(entry) for entry in page.items],
        "hasMore": page.has_more,
        "page": page.page,
    }


class JobError(BaseModel):
    code: int
    message: str


class JobData(BaseModel):
    id: str
    kind: str
    action: str
    status: str = Field(..., description="queued, running, succeeded, failed or canceled")
    result: dict[str, Any] | None = Field(None, description="the tool result when succeeded")
    error: JobError | None = None
    creditCost: int = 1
    creditsRefunded: bool = False
    attempts: int = 0
    createdAt: str
    startedAt: str | None = None
    completedAt: str | None = None
    deadlineAt: str
    pollAfterMs: int = Field(..., ge=6000)
    statusUrl: str


class JobListData(BaseModel):
    items: list[JobData]


def _time(moment: Any) -> str | None:
    return isoformat(moment) if moment is not None else None


def job_data(job: Job, *, poll_after_ms: int) -> dict[str, Any]:
    error = (
        {"code": job.error_code, "message": job.error_message}
        if job.error_code is not None
        else None
    )
    return {
        "id": job.id,
        "kind": job.kind,
        "action": job.action,
        "status": job.status,
        "result": job.result if job.status == JobStatus.SUCCEEDED else None,
        "error": error,
        "creditCost": job.credit_cost,
        "creditsRefunded": job.credits_refunded,
        "attempts": job.attempts,
        "createdAt": isoformat(job.created_at),
        "startedAt": _time(job.started_at),
        "completedAt": _time(job.completed_at),
        "deadlineAt": isoformat(job.deadline_at),
        "pollAfterMs": poll_after_ms,
        "statusUrl": f"/openapi/jobs/{job.id}",
    }


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorEnvelope, "description": description}
    for status, description in {
        400: "invalid input",
        401: "key missing, invalid, expired or revoked, or account disabled",
        429: "rate limit reached; see Retry-After",
    }.items()
}

CREATE_RESPONSES: dict[int | str, dict[str, Any]] = {
    **ERROR_RESPONSES,
    402: {"model": ErrorEnvelope, "description": "insufficient credits; no job created"},
    409: {"model": ErrorEnvelope, "description": "Idempotency-Key used by a different request"},
    500: {"model": ErrorEnvelope, "description": "submission interrupted; retry with the key"},
}
