"""Errors of the business rules, each carrying its HTTP status and a public message.

The API turns every one into the error envelope; the docstring is the default message.

    ServiceError
    ├── InvalidInput          400  (``errors``: [{field, message}])
    ├── Unauthenticated       401
    ├── InsufficientCredits   402
    ├── NotFound              404
    ├── Conflict              409
    ├── PayloadTooLarge       413
    └── RateLimited           429  (``retry_after`` seconds)
"""

from __future__ import annotations


class ServiceError(Exception):
    """The request could not be served."""

    status = 500

    def __init__(self, message: str | None = None) -> None:
        self.message = message or (self.__doc__ or "error").strip()
        super().__init__(self.message)


class InvalidInput(ServiceError):
    """The request is invalid."""

    status = 400

    def __init__(
        self,
        message: str | None = None,
        *,
        field: str | None = None,
        errors: list[dict[str, str]] | None = None,
    ) -> None:
        super().__init__(message)
        self.errors = errors or ([{"field": field, "message": self.message}] if field else [])


class Unauthenticated(ServiceError):
    """A valid API key is required: send it as `Authorization: Bearer <key>` or `X-API-Key`."""

    status = 401


class InsufficientCredits(ServiceError):
    """Not enough credits: this operation costs 1 credit."""

    status = 402


class NotFound(ServiceError):
    """Not found."""

    status = 404


class Conflict(ServiceError):
    """The request conflicts with the current state."""

    status = 409


class PayloadTooLarge(ServiceError):
    """The request body is too large."""

    status = 413


class RateLimited(ServiceError):
    """Rate limit reached: too many requests this minute."""

    status = 429

    def __init__(self, retry_after: int, limit: int) -> None:
        super().__init__(
            f"rate limit of {limit} requests per minute reached; retry after {retry_after} s"
        )
        self.retry_after = retry_after
