"""The results of tool calls: a summary line, the data as JSON text, and the same data structured.

A tool that ran answers ``is_error: false``. A job that failed or was canceled,
and a call the API refused, answer ``is_error: true`` with the reason and what
it cost, so the agent can correct itself: a failed job's credit was refunded, a
refused call was never charged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp_types as types

from toolrun.client import (
    ApiError,
    Asset,
    AuthError,
    BadRequest,
    InsufficientCredits,
    Job,
    NetworkError,
    RateLimited,
    ServerError,
)

Link = Callable[[str], str]


def reply(summary: str, data: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    """A result whose text is ``summary`` and ``data`` as JSON, and whose structure is ``data``."""
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text=summary),
            types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False)),
        ],
        structured_content=data,
        is_error=error,
    )


def job_summary(job: Job) -> dict[str, Any]:
    """The job fields an agent may need later (its id to look it up, what it cost)."""
    return {
        "id": job.id,
        "status": job.status,
        "creditCost": job.credit_cost,
        "creditsRefunded": job.credits_refunded,
    }


def with_links(asset: dict[str, Any], link: Link) -> dict[str, Any]:
    """An asset with absolute ``downloadUrl`` and ``previewUrl`` beside its paths."""
    linked = dict(asset)
    if isinstance(asset.get("downloadPath"), str):
        linked["downloadUrl"] = link(asset["downloadPath"])
    if isinstance(asset.get("previewPath"), str):
        linked["previewUrl"] = link(asset["previewPath"])
    return linked


def job_succeeded(name: str, job: Job, result: dict[str, Any]) -> types.CallToolResult:
    summary = f"{name} succeeded (job {job.id}, {job.credit_cost} credit)."
    if "downloadUrl" in result:
        summary += (
            f" Generated image taskId {result.get('taskId')}; download it with your API key"
            f" from {result['downloadUrl']}"
        )
    return reply(summary, {"job": job_summary(job), "result": result})


def job_failed(name: str, job: Job) -> types.CallToolResult:
    code, message = (job.error.code, job.error.message) if job.error else (500, f"job {job.status}")
    refund = (
        "Its credit was refunded."
        if job.credits_refunded
        else "Its credit is refunded once the job ends."
    )
    summary = f"{name} {job.status} with error {code}: {message}. {refund} (job {job.id})"
    data = {"job": job_summary(job), "error": {"code": code, "message": message}}
    return reply(summary, data, error=True)


def _advice(error: ApiError) -> str:
    if isinstance(error, BadRequest):
        fields = "; ".join(f"{item.get('field')}: {item.get('message')}" for item in error.errors)
        return (f"Fix the input ({fields}). " if fields else "") + "Nothing was charged."
    if isinstance(error, AuthError):
        return "The API key was refused; nothing was charged. Ask the user for a valid key."
    if isinstance(error, InsufficientCredits):
        return "Nothing was charged. The daily check-in (credits-check-in) adds credits."
    if isinstance(error, RateLimited):
        wait = f" in {error.retry_after:g} s" if error.retry_after is not None else " later"
        return (
            f"The account's requests for this minute are used up; try again{wait}."
            " Nothing was charged."
        )
    return "Nothing was charged."


def _detail(error: ApiError) -> dict[str, Any]:
    detail: dict[str, Any] = {"code": error.code, "message": error.message}
    if isinstance(error, BadRequest) and error.errors:
        detail["errors"] = error.errors
    return detail


def refused(name: str, error: ApiError) -> types.CallToolResult:
    """The API refused the call, or never answered it: no job is known to exist."""
    if isinstance(error, NetworkError | ServerError):
        summary = (
            f"{name}: the service did not answer ({error.code} {error.message}). A job may have"
            " been created and charged: GET /openapi/jobs lists it, and if it fails its credit"
            " is refunded."
        )
    else:
        summary = f"{name} was not run: {error.code} {error.message}. {_advice(error)}"
    return reply(summary, {"error": _detail(error)}, error=True)


def lost(name: str, job: Job, error: ApiError) -> types.CallToolResult:
    """The job was created (and charged) but could not be followed to its end."""
    summary = (
        f"{name}: job {job.id} was created (1 credit, refunded if it fails) but could not be"
        f" followed to its end: {error.code} {error.message}. Its state is at {job.status_url}."
    )
    return reply(summary, {"job": job_summary(job), "error": _detail(error)}, error=True)


def invalid_arguments(name: str, errors: list[dict[str, str]]) -> types.CallToolResult:
    """Arguments this server checks itself (the upload and credits tools) were wrong."""
    fields = "; ".join(f"{item['field']}: {item['message']}" for item in errors)
    detail = {"code": 400, "message": f"invalid arguments: {fields}", "errors": errors}
    return reply(f"{name} was not run: {detail['message']}.", {"error": detail}, error=True)


def asset(name: str, uploaded: Asset, link: Link) -> types.CallToolResult:
    data = with_links(uploaded.model_dump(mode="json", by_alias=True), link)
    size = f"{uploaded.width}x{uploaded.height}, " if uploaded.width and uploaded.height else ""
    summary = (
        f"{name}: stored {uploaded.file_name} ({size}{uploaded.file_size} bytes) as taskId"
        f" {uploaded.task_id}, valid until {data['expiresAt']}. Pass this taskId to the image"
        " tools. Uploads are free."
    )
    return reply(summary, data)
