"""Exception handlers: every error leaves as the error envelope, with a message that names it."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from toolrun.api.context import AppContext
from toolrun.api.envelope import error
from toolrun.core.errors import InvalidInput, RateLimited, ServiceError
from toolrun.tools.base import InputRejected

HTTP_MESSAGES = {
    404: "not found: no such path",
    405: "method not allowed",
}


def _now(request: Request) -> Any:
    context: AppContext = request.app.state.context
    return context.clock()


def _field_name(location: tuple[Any, ...]) -> str:
    parts = [str(part) for part in location]
    if parts and parts[0] in {"body", "query", "path", "header"}:
        parts = parts[1:] or parts[:1]
    return ".".join(parts)


def _validation_message(item: dict[str, Any]) -> str:
    if item.get("type") == "json_invalid":
        return "request body is not valid JSON"
    if item.get("type") == "missing":
        return "field required"
    return str(item.get("msg", "invalid value"))


async def _service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RateLimited) else None
    errors = exc.errors if isinstance(exc, InvalidInput) else None
    return error(
        exc.status,
        exc.message,
        path=request.url.path,
        now=_now(request),
        errors=errors,
        headers=headers,
    )


async def _input_rejected(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, InputRejected)
    errors = [{"field": exc.field, "message": exc.message}]
    return error(400, exc.message, path=request.url.path, now=_now(request), errors=errors)


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {
            # a JSON syntax error's location is the offset of the bad character, not a field
            "field": "body"
            if item.get("type") == "json_invalid"
            else _field_name(tuple(item.get("loc", ()))),
            "message": _validation_message(item),
        }
        for item in exc.errors()
    ]
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
    message = f"invalid request: {summary}" if summary else "invalid request"
    return error(400, message, path=request.url.path, now=_now(request), errors=errors)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    message = HTTP_MESSAGES.get(exc.status_code) or str(exc.detail)
    if exc.status_code == 405:
        message = f"method {request.method} not allowed on {request.url.path}"
    return error(
        exc.status_code,
        message,
        path=request.url.path,
        now=_now(request),
        headers=exc.headers,
    )


def install(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(InputRejected, _input_rejected)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
