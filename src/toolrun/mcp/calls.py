"""What each kind of tool call does, through the API with the caller's key.

A catalog action creates its job with a fresh Idempotency-Key (so the client's
retries after a 5xx or a dropped connection never charge twice), waits for it
at the server's pace and answers its result or its error. The upload and
credits tools call the matching endpoints. Nothing here touches the database.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp_types as types
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.requests import Request

from toolrun.client import ApiError, AsyncClient
from toolrun.mcp import replies, uploads
from toolrun.mcp.access import ApiAccess
from toolrun.mcp.progress import CallProgress
from toolrun.tools.base import ToolDefinition

UPLOAD_FILE = "upload-file"
UPLOAD_IMAGE = "upload-image"
CREDITS = "credits"
CHECK_IN = "credits-check-in"


@dataclass(frozen=True)
class CallContext:
    """One tool call: how to reach the API for its caller, and where its progress goes."""

    api: ApiAccess
    request: Request | None
    progress: CallProgress

    def client(self) -> AsyncClient:
        return self.api.client(self.request, self.progress.sleep)

    def link(self, path: str) -> str:
        return self.api.link(self.request, path)


Answer = TypeVar("Answer")
Handler = Callable[[CallContext, dict[str, Any]], Awaitable[types.CallToolResult]]


class NoArguments(BaseModel):
    """The tool takes no arguments."""

    model_config = ConfigDict(extra="forbid")


def _errors(exc: ValidationError) -> list[dict[str, str]]:
    return [
        {
            "field": ".".join(str(part) for part in item["loc"]) or "arguments",
            "message": item["msg"],
        }
        for item in exc.errors()
    ]


async def run_action(
    definition: ToolDefinition, call: CallContext, arguments: dict[str, Any]
) -> types.CallToolResult:
    """Create the action's job, wait for it, and answer its result or its error."""
    key = str(uuid.uuid4())
    async with call.client() as client:
        try:
            if definition.kind == "image":
                job = await client.image(definition.action, arguments, idempotency_key=key)
            else:
                job = await client.execute(definition.slug, arguments, idempotency_key=key)
        except ApiError as exc:
            return replies.refused(definition.slug, exc)
        try:
            job = await client.wait(job, call.progress.observe)
        except ApiError as exc:
            return replies.lost(definition.slug, job, exc)
    if job.status != "succeeded":
        return replies.job_failed(definition.slug, job)
    result = job.result or {}
    if definition.kind == "image":
        result = replies.with_links(result, call.link)
    return replies.job_succeeded(definition.slug, job, result)


async def upload_file(call: CallContext, arguments: dict[str, Any]) -> types.CallToolResult:
    """Upload a file of this machine in chunks; an interrupted upload resumes on the next call."""
    try:
        upload = uploads.UploadFileInput.model_validate(arguments)
        path = await asyncio.to_thread(uploads.local_file, upload.path)
    except ValidationError as exc:
        return replies.invalid_arguments(UPLOAD_FILE, _errors(exc))
    except FileNotFoundError as exc:
        return replies.invalid_arguments(UPLOAD_FILE, [{"field": "path", "message": str(exc)}])
    async with call.client() as client:
        try:
            asset = await client.upload(path, mime_type=upload.mime_type)
        except ApiError as exc:
            return replies.refused(UPLOAD_FILE, exc)
        except OSError as exc:
            message = f"cannot read {path}: {exc.strerror or exc}"
            return replies.invalid_arguments(UPLOAD_FILE, [{"field": "path", "message": message}])
    return replies.asset(UPLOAD_FILE, asset, call.link)


async def upload_image(call: CallContext, arguments: dict[str, Any]) -> types.CallToolResult:
    """Upload base64 content sent in the call."""
    try:
        upload = uploads.UploadContentInput.model_validate(arguments)
    except ValidationError as exc:
        return replies.invalid_arguments(UPLOAD_IMAGE, _errors(exc))
    async with call.client() as client:
        try:
            asset = await uploads.upload_content(client, upload)
        except ApiError as exc:
            return replies.refused(UPLOAD_IMAGE, exc)
    return replies.asset(UPLOAD_IMAGE, asset, call.link)


async def _without_arguments(
    call: CallContext,
    arguments: dict[str, Any],
    name: str,
    request: Callable[[AsyncClient], Awaitable[Answer]],
) -> Answer | types.CallToolResult:
    """``request``'s answer for a tool that takes no arguments, or the tool error to reply."""
    try:
        NoArguments.model_validate(arguments)
    except ValidationError as exc:
        return replies.invalid_arguments(name, _errors(exc))
    async with call.client() as client:
        try:
            return await request(client)
        except ApiError as exc:
            return replies.refused(name, exc)


async def credits(call: CallContext, arguments: dict[str, Any]) -> types.CallToolResult:
    """The account's credit summary."""
    summary = await _without_arguments(call, arguments, CREDITS, AsyncClient.credits)
    if isinstance(summary, types.CallToolResult):
        return summary
    data = summary.model_dump(mode="json", by_alias=True)
    checked = "already checked in today" if summary.checked_in_today else "not checked in today"
    text = (
        f"Balance: {summary.balance} credits; {checked}; next check-in from"
        f" {data['nextCheckInAt']}. Each job costs 1 credit."
    )
    return replies.reply(text, data)


async def check_in(call: CallContext, arguments: dict[str, Any]) -> types.CallToolResult:
    """The daily check-in: the daily grant once per Beijing-time day."""
    done = await _without_arguments(call, arguments, CHECK_IN, AsyncClient.check_in)
    if isinstance(done, types.CallToolResult):
        return done
    data = done.model_dump(mode="json", by_alias=True)
    outcome = (
        f"Granted {done.daily_reward} credits."
        if done.granted
        else "Nothing granted (already checked in today, or an anonymous account)."
    )
    return replies.reply(f"{outcome} Balance: {done.balance} credits.", data)
