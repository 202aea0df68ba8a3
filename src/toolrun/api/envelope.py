"""The response envelopes of SPEC: ``{code: 0, message: "ok", data}`` and the error envelope."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson
from starlette.responses import Response

from toolrun.core.clock import isoformat


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def ok(data: Any, *, status: int = 200, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"code": 0, "message": "ok", "data": data}, status, headers=headers)


def error_body(
    status: int,
    message: str,
    *,
    path: str,
    now: datetime,
    errors: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {"path": path, "timestamp": isoformat(now)}
    if status == 400:
        data["errors"] = errors or []
    return {"code": status, "message": message, "data": data}


def error(
    status: int,
    message: str,
    *,
    path: str,
    now: datetime,
    errors: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = error_body(status, message, path=path, now=now, errors=errors)
    return JSONResponse(body, status, headers=headers)
