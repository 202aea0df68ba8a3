"""Creating a job, shared by every route that creates one (per-tool, generic, v1, image)."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Annotated, Any

import orjson
from fastapi import Header
from pydantic import BaseModel, SecretBytes, SecretStr, ValidationError
from starlette.responses import Response

from toolrun.api.context import AppContext
from toolrun.api.envelope import ok
from toolrun.api.schemas import job_data
from toolrun.core import jobs, uploads
from toolrun.core.errors import Conflict, InvalidInput
from toolrun.db.tables import Account
from toolrun.tools import image
from toolrun.tools.base import ToolDefinition

IDEMPOTENCY_RACE_RETRIES = 5

IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=128,
        description="Optional. The same key and request return the original job, uncharged.",
    ),
]


def _reveal_secrets(value: Any) -> Any:
    """Secrets as a digest of their value: requests that differ only in a secret differ here too."""
    if isinstance(value, SecretStr | SecretBytes):
        secret = value.get_secret_value()
        raw = secret.encode() if isinstance(secret, str) else secret
        return "sha256:" + hashlib.sha256(raw).hexdigest()
    if isinstance(value, dict):
        return {key: _reveal_secrets(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_reveal_secrets(item) for item in value]
    return value


def canonical_input(payload: BaseModel) -> dict[str, Any]:
    """The validated input as JSON-ready data, for the Idempotency-Key fingerprint."""
    data = _reveal_secrets(payload.model_dump(mode="python", by_alias=True))
    parsed: dict[str, Any] = orjson.loads(orjson.dumps(data, default=str))
    return parsed


def validation_errors(exc: ValidationError, *, prefix: str = "") -> list[dict[str, str]]:
    errors = []
    for item in exc.errors():
        location = ".".join(str(part) for part in item.get("loc", ()))
        field = ".".join(part for part in (prefix, location) if part) or prefix or "body"
        message = "field required" if item.get("type") == "missing" else str(item.get("msg"))
        errors.append({"field": field, "message": message})
    return errors


def validate_payload(model: type[BaseModel], payload: Any, *, prefix: str = "") -> BaseModel:
    """Validate a raw payload against a tool's model; 400 naming every bad field."""
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        errors = validation_errors(exc, prefix=prefix)
        summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        raise InvalidInput(f"invalid input: {summary}", errors=errors) from None


async def _require_source_image(context: AppContext, account: Account, payload: BaseModel) -> None:
    """An image job needs a complete, unexpired upload of the caller, and its recorded size must
    keep the result within the output limits: else 400, nothing charged."""
    task_id = str(getattr(payload, "taskId", ""))
    async with context.db.read() as session:
        asset = await uploads.get_complete_asset(session, account.id, task_id, context.clock())
    source = image.SourceSize.of(asset.width, asset.height, asset.mime_type)
    if source is not None:
        image.check_source(payload, source, context.settings)


async def submit(
    context: AppContext,
    *,
    account: Account,
    definition: ToolDefinition,
    payload: BaseModel,
    idempotency_key: str | None,
    variant: str | None = None,
) -> Response:
    """Prepare, charge and queue the job (or replay it), and answer 202 with the credit headers."""
    stored = await definition.prepare(payload, context.settings)
    if definition.kind == "image":
        await _require_source_image(context, account, payload)
    new = jobs.NewJob(
        account_id=account.id,
        kind=definition.kind,
        action=definition.action,
        payload=stored.model_dump(mode="json", by_alias=True),
        variant=variant,
    )
    now = context.clock()
    if idempotency_key is None:
        created = await jobs.create_queued(context.db, new, settings=context.settings, now=now)
    else:
        created = await _create_or_replay(
            context,
            new,
            idempotency_key=idempotency_key,
            request_fingerprint=jobs.fingerprint(
                f"{definition.kind}:{definition.action}:{variant or ''}", canonical_input(payload)
            ),
            now=now,
        )
    if not created.replayed:
        context.services["wakeup"].notify_local()
    headers = {"X-Credits-Balance": str(created.balance), "X-Credits-Cost": "1"}
    if created.replayed:
        headers["Idempotent-Replayed"] = "true"
    data = job_data(created.job, poll_after_ms=context.settings.poll_after_ms)
    return ok(data, status=202, headers=headers)


async def _create_or_replay(
    context: AppContext,
    new: jobs.NewJob,
    *,
    idempotency_key: str,
    request_fingerprint: str,
    now: datetime,
) -> jobs.Created:
    """Create the job of a first use of ``idempotency_key``, or replay the job it made."""
    for _ in range(IDEMPOTENCY_RACE_RETRIES):
        try:
            async with context.db.write() as session:
                return await jobs.create(
                    session,
                    new,
                    settings=context.settings,
                    now=now,
                    idempotency_key=idempotency_key,
                    request_fingerprint=request_fingerprint,
                )
        except jobs.IdempotencyRace:
            continue
    raise Conflict("Idempotency-Key is in use by a concurrent request; retry")
