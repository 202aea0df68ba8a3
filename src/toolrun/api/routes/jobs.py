"""Jobs: the generic create, the caller's job list, one job, and cancel (SPEC "Jobs")."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body
from pydantic import BaseModel, Field
from starlette.responses import Response

from toolrun.api.deps import Context, CurrentAccount, KeyedRoute
from toolrun.api.envelope import ok
from toolrun.api.schemas import (
    CREATE_RESPONSES,
    ERROR_RESPONSES,
    Envelope,
    ErrorEnvelope,
    JobData,
    JobListData,
    job_data,
)
from toolrun.api.submission import IdempotencyKeyHeader, submit, validate_payload
from toolrun.core import jobs
from toolrun.core.errors import InvalidInput

router = APIRouter(
    prefix="/openapi/jobs", tags=["jobs"], responses=ERROR_RESPONSES, route_class=KeyedRoute
)
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorEnvelope, "description": "job not found or not the caller's"}
}


class CreateJob(BaseModel):
    kind: Annotated[Literal["tool", "image"], Field(description="`tool` or `image`")]
    action: Annotated[
        str, Field(min_length=1, max_length=128, description="tool slug or image action")
    ]
    payload: Annotated[dict[str, Any], Field(description="the input of the chosen action")]


@router.post("", status_code=202, response_model=Envelope[JobData], responses=CREATE_RESPONSES)
async def create_job(
    account: CurrentAccount,
    context: Context,
    body: Annotated[CreateJob, Body()],
    idempotency_key: IdempotencyKeyHeader = None,
) -> Response:
    """Create a job for any catalog action; the same as that action's own route."""
    definition = context.registry.by_action(body.kind, body.action)
    if definition is None:
        known = ", ".join(sorted(d.action for d in context.registry if d.kind == body.kind))
        message = f"unknown {body.kind} action {body.action!r}; known: {known or 'none'}"
        raise InvalidInput(message, field="action")
    payload = validate_payload(definition.input_model, body.payload, prefix="payload")
    return await submit(
        context,
        account=account,
        definition=definition,
        payload=payload,
        idempotency_key=idempotency_key,
    )


@router.get("", response_model=Envelope[JobListData])
async def list_jobs(account: CurrentAccount, context: Context) -> Response:
    """The caller's latest 50 jobs, newest created first."""
    async with context.db.read() as session:
        found = await jobs.list_recent(session, account_id=account.id)
    poll = context.settings.poll_after_ms
    return ok({"items": [job_data(job, poll_after_ms=poll) for job in found]})


@router.get("/{job_id}", response_model=Envelope[JobData], responses=NOT_FOUND)
async def get_job(job_id: str, account: CurrentAccount, context: Context) -> Response:
    """One job in any state; a failed job answers 200 with the reason in `error`."""
    job = await jobs.read(context.db, account_id=account.id, job_id=job_id)
    return ok(job_data(job, poll_after_ms=context.settings.poll_after_ms))


@router.post(
    "/{job_id}/cancel",
    response_model=Envelope[JobData],
    responses={
        **NOT_FOUND,
        409: {"model": ErrorEnvelope, "description": "the job is not queued"},
    },
)
async def cancel_job(job_id: str, account: CurrentAccount, context: Context) -> Response:
    """Cancel a queued job; its credit is refunded in the same transaction."""
    async with context.db.write() as session:
        job = await jobs.cancel(session, account_id=account.id, job_id=job_id, now=context.clock())
    return ok(job_data(job, poll_after_ms=context.settings.poll_after_ms))
