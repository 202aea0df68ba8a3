"""``Client``: the blocking client (httpx.Client underneath)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import httpx

from toolrun.client import calls, connection, flows
from toolrun.client.calls import Call
from toolrun.client.flows import Flow, JobProgress, RetryPolicy, UploadProgress, Wait
from toolrun.client.models import (
    Asset,
    CheckIn,
    ChunkProgress,
    CreditSummary,
    Job,
    LedgerPage,
    Share,
    Tool,
    UploadSession,
)

T = TypeVar("T")


class Client:
    """A typed, blocking client of the toolrun API.

    ``base_url`` and ``api_key`` default to TOOLRUN_BASE_URL (else
    http://127.0.0.1:8080) and TOOLRUN_API_KEY. ``retry`` sets how 429, 5xx and
    dropped connections are retried. ``run`` polls no sooner than the server's
    ``pollAfterMs``; ``min_poll_s`` replaces that wait and exists for tests
    against a local server with a raised rate limit (against a real deployment
    it only spends the account's 10 requests a minute faster). ``sleep`` is how
    the client waits (tests pass a recorder); ``transport`` an httpx transport.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = connection.DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        min_poll_s: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = connection.base_url(base_url)
        self.retry = retry or RetryPolicy()
        self.min_poll_s = min_poll_s
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=connection.headers(connection.api_key(api_key)),
            timeout=timeout,
            transport=transport,
        )

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- driving flows ---------------------------------------------------------------------

    def _drive(self, flow: Flow[T]) -> T:
        reply: Any = None
        failure: Exception | None = None
        while True:
            try:
                op = flow.send(reply) if failure is None else flow.throw(failure)
            except StopIteration as stop:
                result: T = stop.value
                return result
            reply, failure = None, None
            if isinstance(op, Wait):
                self._sleep(op.seconds)
                continue
            try:
                reply = self._send(op.call)
            except httpx.TransportError as exc:
                failure = exc

    def _send(self, call: Call) -> httpx.Response:
        request = self._http.build_request(
            call.method,
            call.path,
            params=call.params,
            json=call.json,
            headers=call.headers,
            files=call.files,
            data=call.data,
        )
        if call.dest is None:
            return self._http.send(request)
        response = self._http.send(request, stream=True)
        try:
            if response.is_success:
                self._save(response, flows.target_path(call.dest, response))
            else:
                response.read()
        finally:
            response.close()
        return response

    @staticmethod
    def _save(response: httpx.Response, path: Path) -> None:
        partial = path.with_name(path.name + ".part")
        with partial.open("wb") as handle:
            for piece in response.iter_bytes():
                handle.write(piece)
        partial.replace(path)

    def _data(self, call: Call) -> Any:
        return self._drive(flows.data(call, self.retry))

    # --- credits ---------------------------------------------------------------------------

    def credits(self) -> CreditSummary:
        """The balance and check-in state (GET /openapi/credits)."""
        return CreditSummary.model_validate(self._data(calls.credits()))

    def check_in(self) -> CheckIn:
        """The daily check-in; ``granted`` says whether credits were added this time."""
        return CheckIn.model_validate(self._data(calls.check_in()))

    def history(self, page: int = 1) -> LedgerPage:
        """One page (20 entries, newest first) of the credit ledger."""
        return LedgerPage.model_validate(self._data(calls.history(page)))

    # --- catalog ---------------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Every tool and image action, with input and output JSON Schemas."""
        return [Tool.model_validate(item) for item in self._data(calls.tools())["items"]]

    def tool(self, slug: str) -> Tool:
        """One catalog entry with an ``example`` body; NotFound for an unknown slug."""
        return Tool.model_validate(self._data(calls.tool(slug)))

    # --- jobs ------------------------------------------------------------------------------

    def create_job(
        self,
        kind: str,
        action: str,
        payload: Mapping[str, Any],
        idempotency_key: str | None = None,
    ) -> Job:
        """POST /openapi/jobs: queue a tool (``kind="tool"``) or image job; 1 credit."""
        return self._drive(
            flows.fetch_job(calls.create_job(kind, action, payload, idempotency_key), self.retry)
        )

    def execute(
        self,
        slug: str,
        /,
        payload: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Job:
        """Queue a tool job (POST /openapi/tools/<slug>/execute) and return it without waiting."""
        call = calls.execute(slug, calls.merge_payload(payload, fields), idempotency_key)
        return self._drive(flows.fetch_job(call, self.retry))

    def image(
        self,
        action: str,
        /,
        payload: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> Job:
        """Queue an image job (POST /openapi/image-tools/<action>) on an asset's ``task_id``."""
        call = calls.image(action, calls.merge_payload(payload, fields), idempotency_key)
        return self._drive(flows.fetch_job(call, self.retry))

    def job(self, job_id: str) -> Job:
        """A job of this account, in any state."""
        return self._drive(flows.fetch_job(calls.job(job_id), self.retry))

    def jobs(self) -> list[Job]:
        """The account's latest 50 jobs, newest first."""
        return [Job.model_validate(item) for item in self._data(calls.jobs())["items"]]

    def cancel(self, job_id: str) -> Job:
        """Cancel a queued job (its credit comes back); Conflict once it has started."""
        return self._drive(flows.fetch_job(calls.cancel(job_id), self.retry))

    def wait(self, job: Job, progress: JobProgress | None = None) -> Job:
        """Poll a job until it is succeeded, failed or canceled."""
        return self._drive(flows.wait(job, self.retry, self.min_poll_s, progress))

    def run(
        self,
        tool: str,
        /,
        payload: Mapping[str, Any] | None = None,
        *,
        progress: JobProgress | None = None,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Run a tool and return its result; raise JobFailed if the job fails or is canceled.

        The creation carries an Idempotency-Key (a new uuid4 unless given), so
        retries after a 5xx or a dropped connection never charge twice.
        """
        key = idempotency_key or str(uuid.uuid4())
        call = calls.execute(tool, calls.merge_payload(payload, fields), key)
        return self._drive(flows.run(call, self.retry, self.min_poll_s, progress))

    def run_image(
        self,
        action: str,
        /,
        payload: Mapping[str, Any] | None = None,
        *,
        progress: JobProgress | None = None,
        idempotency_key: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """Run an image action; the result is the generated asset (see ``download``)."""
        key = idempotency_key or str(uuid.uuid4())
        call = calls.image(action, calls.merge_payload(payload, fields), key)
        return self._drive(flows.run(call, self.retry, self.min_poll_s, progress))

    # --- uploads ---------------------------------------------------------------------------

    def create_upload(
        self, file_name: str, mime_type: str, size: int, chunk_size: int | None = None
    ) -> UploadSession:
        """Open an upload session (free); send chunks of the answer's ``chunk_size``."""
        call = calls.create_upload(file_name, mime_type, size, chunk_size)
        return UploadSession.model_validate(self._data(call))

    def upload_chunk(self, task_id: str, index: int, chunk: bytes) -> ChunkProgress:
        """Send chunk ``index`` (from 0); sending it again replaces it."""
        return ChunkProgress.model_validate(self._data(calls.upload_chunk(task_id, index, chunk)))

    def complete_upload(self, task_id: str, total_chunks: int) -> Asset:
        """Merge the chunks into the asset (the bytes must be an image)."""
        return Asset.model_validate(self._data(calls.complete_upload(task_id, total_chunks)))

    def upload_meta(self, task_id: str) -> Asset:
        """An asset's metadata and validity period."""
        return Asset.model_validate(self._data(calls.upload_meta(task_id)))

    def upload(
        self,
        path: str | Path,
        chunk_size: int | None = None,
        mime_type: str | None = None,
        progress: UploadProgress | None = None,
        *,
        state_path: str | Path | None = None,
    ) -> Asset:
        """Upload a file and return its asset; resumes an interrupted upload of the same file.

        Progress is kept in ``state_path`` (default ``<file>.toolrun-upload.json``
        beside the file) and removed on success. ``progress(sent, total)`` gets
        byte counts.
        """
        job = flows.upload_job(path, chunk_size, mime_type, progress, state_path)
        return self._drive(flows.upload(job, self.retry))

    def download(self, task_id: str, role: str | None = None, dest: str | Path = ".") -> Path:
        """Stream an asset's file to ``dest`` (a directory: the server's file name in it)."""
        call = calls.download(task_id, role, Path(dest))
        return self._drive(flows.download(call, self.retry))

    # --- diagram shares --------------------------------------------------------------------

    def share(self, code: str, image_path: str | Path) -> Share:
        """Store diagram code with its rendered image; 1 credit; returns the public id."""
        image = Path(image_path)
        call = calls.share(code, image.name, image.read_bytes(), flows.guess_mime_type(image))
        return Share.model_validate(self._data(call))

    def get_share(self, share_id: str) -> Share:
        """A share's code and image URL."""
        return Share.model_validate(self._data(calls.get_share(share_id)))
