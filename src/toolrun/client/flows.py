"""The client's logic without I/O: retries, polling and resumable uploads as generators.

A flow yields ``Send(call)`` (and receives the ``httpx.Response``, or has the
``httpx.TransportError`` thrown in) and ``Wait(seconds)`` (and receives
nothing); it returns its result. ``Client`` and ``AsyncClient`` drive the same
flows, one with blocking calls, the other with awaits, so both behave alike.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import Message
from pathlib import Path
from typing import Any, TypeAlias, TypeVar

import httpx

from toolrun.client import calls, resume
from toolrun.client.calls import Call
from toolrun.client.errors import (
    Conflict,
    JobFailed,
    NetworkError,
    NotFound,
    RateLimited,
    ServerError,
    error_from_response,
)
from toolrun.client.models import Asset, Job, UploadSession

T = TypeVar("T")

RETRY_STATUSES = frozenset({500, 502, 503})
DEFAULT_MIME_TYPE = "application/octet-stream"


@dataclass(frozen=True)
class Send:
    """Send this call; the driver answers with the response."""

    call: Call


@dataclass(frozen=True)
class Wait:
    """Pause this long (through the client's ``sleep``)."""

    seconds: float


Op: TypeAlias = Send | Wait
Flow: TypeAlias = Generator[Op, Any, T]
JobProgress: TypeAlias = Callable[[Job], None]
UploadProgress: TypeAlias = Callable[[int, int], None]


@dataclass(frozen=True)
class RetryPolicy:
    """How hard a call tries before its error reaches the caller.

    ``retries``: extra tries after 500/502/503 or a dropped connection, for
    calls that are safe to repeat (reads, chunk uploads, job creations with an
    Idempotency-Key); waits grow from ``backoff_s``, doubling, up to
    ``max_backoff_s``. ``rate_limit_waits``: how many 429 answers one call waits
    out (``Retry-After`` seconds each) before raising ``RateLimited``.
    """

    retries: int = 4
    backoff_s: float = 0.5
    max_backoff_s: float = 8.0
    rate_limit_waits: int = 3

    def backoff(self, failures: int) -> float:
        """The wait before try number ``failures + 1``."""
        return float(min(self.backoff_s * 2 ** (failures - 1), self.max_backoff_s))


def request(call: Call, policy: RetryPolicy) -> Flow[httpx.Response]:
    """Send ``call`` until it succeeds, retrying what is safe to retry; raise its ApiError."""
    failures = 0
    waits = 0
    while True:
        try:
            response: httpx.Response = yield Send(call)
        except httpx.TransportError as exc:
            # a refused connection never reached the server: safe to repeat for any call
            repeatable = call.retryable or isinstance(exc, httpx.ConnectError)
            if not repeatable or failures >= policy.retries:
                raise NetworkError(
                    f"no answer from the server: {str(exc) or type(exc).__name__}"
                ) from exc
            failures += 1
            yield Wait(policy.backoff(failures))
            continue
        if response.is_success:
            return response
        error = error_from_response(response)
        if isinstance(error, RateLimited) and waits < policy.rate_limit_waits:
            waits += 1
            yield Wait(
                error.retry_after if error.retry_after is not None else policy.backoff(waits)
            )
            continue
        if response.status_code in RETRY_STATUSES and call.retryable and failures < policy.retries:
            failures += 1
            yield Wait(policy.backoff(failures))
            continue
        raise error


def data(call: Call, policy: RetryPolicy) -> Flow[Any]:
    """The ``data`` of the success envelope ``call`` answers with."""
    response = yield from request(call, policy)
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or "data" not in body:
        status = response.status_code
        raise ServerError(status, "the server answered without a JSON envelope", status=status)
    return body["data"]


def fetch_job(call: Call, policy: RetryPolicy) -> Flow[Job]:
    """A call that answers with a job."""
    return Job.model_validate((yield from data(call, policy)))


def poll_wait_s(job: Job, min_poll_s: float | None) -> float:
    """The server's ``pollAfterMs``, or ``min_poll_s`` when the client was given one (tests)."""
    return min_poll_s if min_poll_s is not None else job.poll_after_ms / 1000


def wait(
    job: Job, policy: RetryPolicy, min_poll_s: float | None, progress: JobProgress | None
) -> Flow[Job]:
    """Poll the job's ``statusUrl`` until it is terminal; ``progress`` sees every state."""
    while True:
        if progress is not None:
            progress(job)
        if job.is_terminal:
            return job
        yield Wait(poll_wait_s(job, min_poll_s))
        job = yield from fetch_job(calls.status(job.status_url), policy)


def run(
    create: Call, policy: RetryPolicy, min_poll_s: float | None, progress: JobProgress | None
) -> Flow[dict[str, Any]]:
    """Create a job, wait for it, and return its result; raise JobFailed if it did not succeed."""
    job = yield from fetch_job(create, policy)
    job = yield from wait(job, policy, min_poll_s, progress)
    if job.status != "succeeded":
        raise JobFailed.of(job)
    return job.result or {}


def guess_mime_type(path: Path) -> str:
    """The file's type by its name, as the upload session records it."""
    return mimetypes.guess_type(path.name)[0] or DEFAULT_MIME_TYPE


def _read_chunk(path: Path, index: int, chunk_size: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(index * chunk_size)
        return handle.read(chunk_size)


def _sent_bytes(state: resume.UploadState, size: int) -> int:
    return sum(min(state.chunk_size, size - index * state.chunk_size) for index in state.done)


@dataclass(frozen=True)
class UploadJob:
    """What ``upload`` needs to know about the file and how to report."""

    path: Path
    state_path: Path
    chunk_size: int | None
    mime_type: str
    progress: UploadProgress | None


def upload_job(
    path: str | Path,
    chunk_size: int | None,
    mime_type: str | None,
    progress: UploadProgress | None,
    state_path: str | Path | None,
) -> UploadJob:
    """The upload of ``path``; its state file defaults to one beside it."""
    file = Path(path)
    return UploadJob(
        path=file,
        state_path=Path(state_path) if state_path else resume.default_state_path(file),
        chunk_size=chunk_size,
        mime_type=mime_type or guess_mime_type(file),
        progress=progress,
    )


def _open_session(job: UploadJob, size: int, policy: RetryPolicy) -> Flow[resume.UploadState]:
    call = calls.create_upload(job.path.name, job.mime_type, size, job.chunk_size)
    session = UploadSession.model_validate((yield from data(call, policy)))
    return resume.UploadState(
        task_id=session.task_id,
        chunk_size=session.chunk_size,
        total_chunks=session.total_chunks,
        expires_at=session.expires_at,
    )


def upload(job: UploadJob, policy: RetryPolicy, *, fresh: bool = False) -> Flow[Asset]:
    """Upload a file in chunks, resuming a recorded session; return the merged asset.

    Progress is recorded after every accepted chunk, so an interrupted upload
    sends only the missing chunks next time. A recorded session the server no
    longer knows (expired, swept) is replaced by a new one, once.
    """
    key = resume.file_key(job.path)
    size = job.path.stat().st_size
    state = None if fresh else resume.load(job.state_path, key, datetime.now(UTC))
    if state is None:
        state = yield from _open_session(job, size, policy)
        resume.save(job.state_path, key, state)
    if job.progress is not None:
        job.progress(_sent_bytes(state, size), size)
    for index in range(state.total_chunks):
        if index in state.done:
            continue
        chunk = _read_chunk(job.path, index, state.chunk_size)
        try:
            yield from data(calls.upload_chunk(state.task_id, index, chunk), policy)
        except NotFound:
            if fresh:
                raise
            resume.forget(job.state_path, key)
            return (yield from upload(job, policy, fresh=True))
        except Conflict:
            break  # already complete: complete answers the asset again
        state.done.add(index)
        resume.save(job.state_path, key, state)
        if job.progress is not None:
            job.progress(_sent_bytes(state, size), size)
    complete = calls.complete_upload(state.task_id, state.total_chunks)
    asset = Asset.model_validate((yield from data(complete, policy)))
    resume.forget(job.state_path, key)
    return asset


def target_path(dest: Path, response: httpx.Response) -> Path:
    """Where a download goes: ``dest``, or the server's file name inside ``dest`` if a directory."""
    if not dest.is_dir():
        return dest
    header = Message()
    header["content-disposition"] = response.headers.get("content-disposition", "")
    name = Path(header.get_filename() or "").name
    return dest / (name or "download")


def download(call: Call, policy: RetryPolicy) -> Flow[Path]:
    """Stream a file to ``call.dest``; return the path written."""
    assert call.dest is not None
    response = yield from request(call, policy)
    return target_path(call.dest, response)
