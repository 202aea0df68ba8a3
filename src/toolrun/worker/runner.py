"""Runs one claimed job: resolves its tool, runs it under the deadline, records the outcome.

A tool's exception never escapes: ``ToolFailure`` becomes its code and message,
a deadline becomes 504, anything else is logged with its traceback and stored
as 500 "internal error". Every failure refunds the credit (core.jobs.fail).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ValidationError

from toolrun.config import Settings
from toolrun.core import jobs
from toolrun.core.clock import Clock
from toolrun.db.engine import Database
from toolrun.db.tables import Job
from toolrun.tools.base import ToolContext, ToolDefinition, ToolFailure
from toolrun.tools.registry import Registry

log = logging.getLogger("toolrun.worker")


def job_services(services: Mapping[str, Any], job: Job) -> Mapping[str, Any]:
    """The worker's services plus those scoped to the job's account (its image assets)."""
    factory = services.get("assets_factory")
    if factory is None:
        return services
    return {**services, "assets": factory(job.account_id)}


def present_result(definition: ToolDefinition, job: Job, result: BaseModel) -> dict[str, Any]:
    """The stored result: the tool's output, or its v1 shape for a job created through v1."""
    if job.variant == "v1" and definition.v1_result is not None:
        payload = definition.payload_model.model_validate(job.payload)
        result = definition.v1_result(result, payload)
    return result.model_dump(mode="json", by_alias=True)


async def execute(
    job: Job,
    definition: ToolDefinition,
    *,
    settings: Settings,
    clock: Clock,
    services: Mapping[str, Any],
) -> tuple[dict[str, Any] | None, ToolFailure | None]:
    """Run the tool; returns (result, None) or (None, failure). Never raises but CancelledError."""
    remaining = (job.deadline_at - clock()).total_seconds()
    try:
        payload = definition.payload_model.model_validate(job.payload)
        context = ToolContext(
            settings=settings,
            job_id=job.id,
            account_id=job.account_id,
            # tools measure time on the wall clock; the job's clock may be a test's
            deadline_at=datetime.now(UTC) + timedelta(seconds=max(remaining, 0.0)),
            services=job_services(services, job),
        )
        async with asyncio.timeout(max(remaining, 0.001)):
            output = await definition.run(payload, context)
        return present_result(definition, job, output), None
    except ToolFailure as failure:
        return None, failure
    except TimeoutError:
        message = jobs.DEADLINE_MESSAGE.format(seconds=settings.job_timeout_s)
        return None, ToolFailure(504, message)
    except ValidationError:
        log.exception("job %s has a payload its tool %s rejects", job.id, definition.slug)
        return None, ToolFailure(500, "internal error")
    except Exception:
        log.exception("job %s: tool %s raised", job.id, definition.slug)
        return None, ToolFailure(500, "internal error")


async def run_job(
    job: Job,
    *,
    worker_id: str,
    db: Database,
    registry: Registry,
    settings: Settings,
    clock: Clock,
    services: Mapping[str, Any],
) -> None:
    definition = registry.by_action(job.kind, job.action)
    result: dict[str, Any] | None = None
    failure: ToolFailure | None = None
    if definition is None:
        failure = ToolFailure(500, f"no tool for {job.kind} {job.action}")
    else:
        result, failure = await execute(
            job, definition, settings=settings, clock=clock, services=services
        )
    if failure is None:
        assert result is not None
        async with db.statement(write=True) as connection:
            await jobs.succeed(
                connection, job_id=job.id, worker_id=worker_id, result=result, now=clock()
            )
        return
    async with db.write() as session:
        await jobs.fail(
            session,
            job_id=job.id,
            worker_id=worker_id,
            code=failure.code,
            message=failure.message,
            now=clock(),
        )
