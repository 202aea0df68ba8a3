"""One ``Call`` per endpoint: what to send, built without doing any I/O.

Both clients send these; ``retryable`` marks calls that are safe to send again
after a 5xx answer or a dropped connection (reads, idempotent writes, and job
creations that carry an Idempotency-Key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pydantic.alias_generators import to_camel

MAX_IDEMPOTENCY_KEY_LENGTH = 128
IMAGE_ACTIONS = ("convert", "compress", "resize", "crop", "ico")


@dataclass(frozen=True)
class Call:
    """An HTTP request to the API, relative to the base URL."""

    method: str
    path: str
    json: Any = None
    params: Mapping[str, str] | None = None
    headers: Mapping[str, str] | None = None
    files: Mapping[str, tuple[str, bytes, str]] | None = None
    data: Mapping[str, str] | None = None
    retryable: bool = False
    dest: Path | None = None
    """Stream a successful answer's body into this file (or directory) instead of reading it."""


def _segment(value: str) -> str:
    return quote(value, safe="")


def camel_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments as API fields: ``task_id`` -> ``taskId``; camelCase passes through."""
    return {(to_camel(name) if "_" in name else name): value for name, value in fields.items()}


def _keyed(key: str | None) -> dict[str, str] | None:
    if key is None:
        return None
    if not 0 < len(key) <= MAX_IDEMPOTENCY_KEY_LENGTH:
        raise ValueError(f"an Idempotency-Key is 1 to {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
    return {"Idempotency-Key": key}


def credits() -> Call:
    return Call("GET", "/openapi/credits", retryable=True)


def check_in() -> Call:
    # a repeated check-in the same day grants nothing, so sending it again is safe
    return Call("POST", "/openapi/credits/check-in", retryable=True)


def history(page: int) -> Call:
    return Call("GET", "/openapi/credits/history", params={"page": str(page)}, retryable=True)


def tools() -> Call:
    return Call("GET", "/openapi/tools", retryable=True)


def tool(slug: str) -> Call:
    return Call("GET", f"/openapi/tools/{_segment(slug)}", retryable=True)


def create_job(kind: str, action: str, payload: Mapping[str, Any], key: str | None) -> Call:
    body = {"kind": kind, "action": action, "payload": dict(payload)}
    return Call("POST", "/openapi/jobs", json=body, headers=_keyed(key), retryable=key is not None)


def execute(slug: str, payload: Mapping[str, Any], key: str | None) -> Call:
    path = f"/openapi/tools/{_segment(slug)}/execute"
    return Call("POST", path, json=dict(payload), headers=_keyed(key), retryable=key is not None)


def image(action: str, payload: Mapping[str, Any], key: str | None) -> Call:
    path = f"/openapi/image-tools/{_segment(action)}"
    return Call("POST", path, json=dict(payload), headers=_keyed(key), retryable=key is not None)


def job(job_id: str) -> Call:
    return Call("GET", f"/openapi/jobs/{_segment(job_id)}", retryable=True)


def status(status_url: str) -> Call:
    """A job's ``statusUrl`` (a path under the base URL)."""
    return Call("GET", status_url, retryable=True)


def jobs() -> Call:
    return Call("GET", "/openapi/jobs", retryable=True)


def cancel(job_id: str) -> Call:
    return Call("POST", f"/openapi/jobs/{_segment(job_id)}/cancel")


def create_upload(file_name: str, mime_type: str, size: int, chunk_size: int | None = None) -> Call:
    body: dict[str, Any] = {"fileName": file_name, "mimeType": mime_type, "size": size}
    body["fileSize"] = size
    if chunk_size is not None:
        body["chunkSize"] = chunk_size
    return Call("POST", "/openapi/uploads/tasks", json=body)


def upload_chunk(task_id: str, index: int, chunk: bytes) -> Call:
    # sending an index again replaces the chunk: always safe to retry
    return Call(
        "POST",
        f"/openapi/uploads/tasks/{_segment(task_id)}/chunks",
        files={"chunk": (f"chunk-{index}", chunk, "application/octet-stream")},
        data={"index": str(index)},
        retryable=True,
    )


def complete_upload(task_id: str, total_chunks: int) -> Call:
    # a second complete answers the asset again
    path = f"/openapi/uploads/tasks/{_segment(task_id)}/complete"
    return Call("POST", path, json={"totalChunks": total_chunks}, retryable=True)


def upload_meta(task_id: str) -> Call:
    return Call("GET", f"/openapi/uploads/tasks/{_segment(task_id)}/meta", retryable=True)


def download(task_id: str, role: str | None, dest: Path, *, attachment: bool = True) -> Call:
    params = {"download": "1" if attachment else "0"}
    if role is not None:
        params["role"] = role
    path = f"/openapi/uploads/tasks/{_segment(task_id)}/file"
    return Call("GET", path, params=params, retryable=True, dest=dest)


def share(code: str, image_name: str, image_bytes: bytes, mime_type: str) -> Call:
    return Call(
        "POST",
        "/openapi/mermaid/share",
        files={"image": (image_name, image_bytes, mime_type)},
        data={"code": code},
    )


def get_share(share_id: str) -> Call:
    return Call("GET", f"/openapi/mermaid/share/{_segment(share_id)}", retryable=True)


def merge_payload(payload: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A job's input from a mapping and/or keyword arguments (keywords win, see camel_fields)."""
    return {**(payload or {}), **camel_fields(fields)}
