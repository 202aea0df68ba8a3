"""Serving a stored object over HTTP: streamed, with ETag, Range and safe headers.

Every file response carries ``X-Content-Type-Options: nosniff`` and a
sandboxing ``Content-Security-Policy`` (so an SVG, or anything a browser might
render as a document, runs no script and reaches nothing), and a
``Content-Disposition`` built per RFC 6266 from a file name the client chose.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from toolrun.api.context import AppContext
from toolrun.api.envelope import error
from toolrun.storage import ObjectInfo, Storage

SANDBOX_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_FALLBACK_UNSAFE = re.compile(r"[^A-Za-z0-9!#$&+.^_`|~ ()\-,;=@\[\]{}]")


def content_disposition(disposition: str, file_name: str) -> str:
    """``inline``/``attachment`` with an ASCII ``filename`` and, when needed, ``filename*``.

    The ASCII fallback has no quotes, backslashes, control characters or
    path separators; ``filename*`` carries the exact name, percent-encoded
    UTF-8 (RFC 8187), for every name that the fallback changed.
    """
    name = "".join(c for c in file_name if unicodedata.category(c) not in {"Cc", "Cf"})
    name = name.replace("/", "_").replace("\\", "_").strip() or "file"
    ascii_name = "".join(
        c if c.isascii() else ("" if unicodedata.combining(c) else "_")
        for c in unicodedata.normalize("NFKD", name)
    )
    fallback = _FALLBACK_UNSAFE.sub("_", ascii_name).strip() or "file"
    header = f'{disposition}; filename="{fallback}"'
    if fallback != name:
        header += f"; filename*=UTF-8''{quote(name, safe='')}"
    return header


def _parse_range(header: str, size: int) -> tuple[int, int] | bool | None:
    """One byte range ``(start, end exclusive)``; None to ignore the header; False if unsatisfiable."""
    match = _RANGE.match(header.strip().replace(" ", ""))
    if match is None:
        return None  # several ranges or another unit: answer the whole file (RFC 9110 allows it)
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:
        suffix = int(last)
        if suffix == 0 or size == 0:
            return False
        return max(0, size - suffix), size
    start = int(first)
    end = min(int(last) + 1, size) if last else size
    if last and int(last) < start:
        return None
    if start >= size:
        return False
    return start, end


def _not_modified(request: Request, etag: str) -> bool:
    header = request.headers.get("if-none-match")
    if header is None:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    return "*" in tags or etag in tags


async def _stream(storage: Storage, key: str, start: int, end: int) -> AsyncIterator[bytes]:
    async with aclosing(storage.read(key, start=start, end=end)) as pieces:
        async for piece in pieces:
            yield piece


def file_response(
    request: Request,
    storage: Storage,
    info: ObjectInfo,
    *,
    media_type: str,
    file_name: str,
    download: bool,
    cache_control: str = "private, no-cache",
    extra_headers: Mapping[str, str] | None = None,
) -> Response:
    """Stream the object ``info`` describes: 200, 206 for one satisfiable range, 304, or 416."""
    headers = {
        "ETag": info.etag,
        "Accept-Ranges": "bytes",
        "Cache-Control": cache_control,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": SANDBOX_CSP,
        "Content-Disposition": content_disposition(
            "attachment" if download else "inline", file_name
        ),
        **(extra_headers or {}),
    }
    if _not_modified(request, info.etag):
        return Response(status_code=304, headers=headers)
    start, end, status = 0, info.size, 200
    range_header = request.headers.get("range")
    if_range = request.headers.get("if-range")
    if range_header and (if_range is None or if_range.strip() == info.etag):
        parsed = _parse_range(range_header, info.size)
        if parsed is False:
            context: AppContext = request.app.state.context
            return error(
                416,
                f"range not satisfiable: the file has {info.size} bytes",
                path=request.url.path,
                now=context.clock(),
                headers={
                    "Content-Range": f"bytes */{info.size}",
                    "X-Content-Type-Options": "nosniff",
                },
            )
        if isinstance(parsed, tuple):
            start, end = parsed
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end - 1}/{info.size}"
    headers["Content-Length"] = str(end - start)
    if request.method == "HEAD":
        return Response(status_code=status, headers=headers, media_type=media_type)
    return StreamingResponse(
        _stream(storage, info.key, start, end),
        status_code=status,
        headers=headers,
        media_type=media_type,
    )
