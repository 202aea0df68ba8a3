"""Errors the client raises, one class per way a call can end badly.

    ApiError(code, message, data, status)   the server answered with an error envelope
     ├── BadRequest            400  invalid input; ``errors`` lists ``{field, message}``
     ├── AuthError             401  key missing, invalid, expired, revoked; account disabled
     ├── InsufficientCredits   402  not enough credits (or registration required)
     ├── NotFound              404  no such job, asset, share or tool for this account
     ├── Conflict              409  Idempotency-Key reused with other input; cancel too late
     ├── RateLimited           429  ``retry_after``: seconds the server asked to wait
     ├── ServerError           5xx  the submission may have happened; retry with the same key
     ├── NetworkError          (status 0) no answer: refused, reset, timed out
     └── JobFailed                  a job ended ``failed`` or ``canceled``; ``job`` holds it

The client retries 429, 500/502/503 and dropped connections itself (see
``RetryPolicy``); these reach the caller only when the retries run out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from toolrun.client.models import Job


class ApiError(Exception):
    """The server refused or could not answer a call; ``code`` and ``message`` are its own."""

    def __init__(
        self, code: int, message: str, data: dict[str, Any] | None = None, status: int = 0
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data: dict[str, Any] = data or {}
        self.status = status

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class BadRequest(ApiError):
    """400: the input was refused; no job was created and nothing was charged."""

    @property
    def errors(self) -> list[dict[str, Any]]:
        """``[{field, message}]`` as the server listed them."""
        found = self.data.get("errors")
        return found if isinstance(found, list) else []


class AuthError(ApiError):
    """401: the API key is missing, invalid, expired or revoked, or the account is disabled."""


class InsufficientCredits(ApiError):
    """402: the balance cannot pay for the job; nothing ran."""


class NotFound(ApiError):
    """404: unknown id, or one that belongs to another account."""


class Conflict(ApiError):
    """409: an Idempotency-Key reused for other input, or a job that can no longer be canceled."""


class RateLimited(ApiError):
    """429: the account's requests for this minute are used up; nothing was charged."""

    def __init__(
        self,
        code: int,
        message: str,
        data: dict[str, Any] | None = None,
        status: int = 429,
        *,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(code, message, data, status)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx: the server failed; a job creation may have happened (retry with the same key)."""


class NetworkError(ApiError):
    """No HTTP answer at all: the connection was refused, reset or timed out."""

    def __init__(self, message: str) -> None:
        super().__init__(0, message, None, 0)


class JobFailed(ApiError):
    """A job ended ``failed`` or ``canceled``: ``code``/``message`` are the job's ``error``.

    Its credit was refunded (``job.credits_refunded``).
    """

    def __init__(self, code: int, message: str, job: Job) -> None:
        super().__init__(code, message, job.model_dump(by_alias=True), 200)
        self.job = job

    @classmethod
    def of(cls, job: Job) -> JobFailed:
        """The error of a job in a terminal state other than ``succeeded``."""
        if job.error is not None:
            return cls(job.error.code, job.error.message, job)
        return cls(500, f"job {job.status}", job)


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: AuthError,
    402: InsufficientCredits,
    404: NotFound,
    409: Conflict,
}


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (the server sends whole seconds)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(seconds, 0.0)


def error_from_response(response: httpx.Response) -> ApiError:
    """The ApiError for an error response: the envelope's code and message when it has one."""
    status = response.status_code
    code, message = status, response.reason_phrase or f"HTTP {status}"
    data: dict[str, Any] = {}
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        message = body["message"]
        code = body["code"] if isinstance(body.get("code"), int) else status
        data = body["data"] if isinstance(body.get("data"), dict) else {}
    if status == 429:
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        return RateLimited(code, message, data, status, retry_after=retry_after)
    if status >= 500:
        return ServerError(code, message, data, status)
    return _BY_STATUS.get(status, ApiError)(code, message, data, status)
