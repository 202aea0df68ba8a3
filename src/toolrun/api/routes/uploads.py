"""Uploads: create a session, send chunks, complete, read the asset's metadata and file.

Free of credits, keyed and rate limited like every route. Unknown, expired,
foreign and malformed task ids all answer 404.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request
from pydantic import BaseModel, Field
from starlette.responses import Response

from toolrun.api.bodies import capped_body_route, multipart_parts, read_body
from toolrun.api.deps import Context, CurrentAccount
from toolrun.api.envelope import JSONResponse, error_body, ok
from toolrun.api.files import file_response
from toolrun.api.schemas import ERROR_RESPONSES, Envelope, ErrorEnvelope
from toolrun.core import uploads
from toolrun.core.errors import InvalidInput, NotFound
from toolrun.storage import Storage
from toolrun.tools.base import ToolFailure
from toolrun.tools.image import vips

READ_PIECE_BYTES = 1024 * 1024
MULTIPART_OVERHEAD_BYTES = 64 * 1024  # boundaries, part headers and the index field


MAX_JSON_BYTES = 64 * 1024  # session and complete bodies are a few fields

router = APIRouter(
    prefix="/openapi/uploads/tasks",
    tags=["uploads"],
    responses=ERROR_RESPONSES,
    route_class=capped_body_route(MAX_JSON_BYTES),
)
chunk_router = APIRouter(
    prefix="/openapi/uploads/tasks",
    tags=["uploads"],
    responses=ERROR_RESPONSES,
    route_class=capped_body_route(uploads.MAX_CHUNK_BYTES + MULTIPART_OVERHEAD_BYTES),
)
NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorEnvelope, "description": "unknown, expired or another account's task"}
}


class CreateUpload(BaseModel):
    fileName: str = Field(..., min_length=1, max_length=1024)
    mimeType: str = Field(..., min_length=1, max_length=255)
    size: int | None = Field(None, ge=1, description="byte length (or give fileSize)")
    fileSize: int | None = Field(None, ge=1, description="byte length (or give size)")
    chunkSize: int | None = Field(
        None, ge=1, le=uploads.MAX_CHUNK_BYTES, description="default 5 MiB; the answer's counts"
    )


class CompleteUpload(BaseModel):
    totalChunks: int = Field(..., ge=1)


class SessionData(BaseModel):
    taskId: str
    chunkSize: int
    totalChunks: int = Field(..., ge=1)
    expiresAt: str


class ProgressData(BaseModel):
    taskId: str
    chunkIndex: int = Field(..., ge=0)
    uploadedChunks: int
    totalChunks: int


class AssetData(BaseModel):
    taskId: str
    kind: Literal["uploaded", "generated"]
    fileName: str
    mimeType: str
    extension: str
    size: int
    fileSize: int
    createdAt: str
    expiresAt: str = Field(..., description="validity end of the file")
    width: int | None
    height: int | None
    downloadPath: str
    previewPath: str


def _storage(request: Request) -> Storage:
    storage: Storage = request.app.state.context.services["storage"]
    return storage


async def probe_image(path: Path) -> uploads.ProbedImage:
    """libvips' header-only probe (no pixels decoded), run in the image thread pool."""
    try:
        info = await vips.run_in_pool(vips.probe, path)
    except ToolFailure:
        raise uploads.UnreadableImage() from None
    return uploads.ProbedImage(format=info.format, width=info.width, height=info.height)


@router.post("", status_code=201, response_model=Envelope[SessionData])
async def create_upload(
    account: CurrentAccount, context: Context, body: Annotated[CreateUpload, Body()]
) -> Response:
    """Open an upload session; split the file by the answer's `chunkSize`. Free."""
    async with context.db.write() as session:
        asset = await uploads.create_session(
            session,
            account_id=account.id,
            file_name=body.fileName,
            mime_type=body.mimeType,
            size=body.size,
            file_size=body.fileSize,
            chunk_size=body.chunkSize,
            settings=context.settings,
            now=context.clock(),
        )
    return ok(uploads.session_data(asset), status=201)


def _chunk_index(body: bytearray, parts: dict[str, Any]) -> int:
    part = parts.get("index")
    text = body[part.start : part.end].decode("ascii", "replace").strip() if part else ""
    if not text.isdigit():
        message = "field required" if part is None else "index must be an integer of at least 0"
        raise InvalidInput(f"index: {message}", field="index")
    return int(text)


CHUNK_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["chunk", "index"],
                    "properties": {
                        "chunk": {"type": "string", "format": "binary"},
                        "index": {"type": "integer", "minimum": 0},
                    },
                }
            }
        },
    }
}


@chunk_router.post(
    "/{task_id}/chunks",
    status_code=201,
    response_model=Envelope[ProgressData],
    responses={**NOT_FOUND, 409: {"model": ErrorEnvelope, "description": "already complete"}},
    openapi_extra=CHUNK_BODY,
)
async def upload_chunk(
    task_id: str, request: Request, account: CurrentAccount, context: Context
) -> Response:
    """Store one chunk (multipart fields `chunk` and `index`); sending an index again replaces
    it. Chunks may come in any order and in parallel."""
    body = await read_body(request)
    parts = multipart_parts(request.headers.get("content-type"), body)
    index = _chunk_index(body, parts)
    chunk = parts.get("chunk")
    if chunk is None:
        raise InvalidInput("chunk: field required", field="chunk")
    progress = await uploads.receive_chunk(
        context.db,
        _storage(request),
        account_id=account.id,
        task_id=task_id,
        index=index,
        data=memoryview(body)[chunk.start : chunk.end],
        now=context.clock(),
    )
    return ok(uploads.progress_data(progress), status=201)


@router.post(
    "/{task_id}/complete",
    status_code=201,
    response_model=Envelope[AssetData],
    responses=NOT_FOUND,
)
async def complete_upload(
    task_id: str,
    request: Request,
    account: CurrentAccount,
    context: Context,
    body: Annotated[CompleteUpload, Body()],
) -> Response:
    """Merge the chunks into the asset; the type is read from the bytes. Repeatable."""
    asset = await uploads.complete(
        context.db,
        _storage(request),
        account_id=account.id,
        task_id=task_id,
        total_chunks=body.totalChunks,
        probe=probe_image,
        settings=context.settings,
        now=context.clock(),
    )
    return ok(uploads.asset_data(asset), status=201)


PENDING_META = (
    "not complete yet; `data` also carries `taskId`, `status` (pending), `chunkSize`, "
    "`totalChunks`, `uploadedChunks`, `receivedChunks` (the indexes stored, ascending) and "
    "`expiresAt`, so a client can resume by sending only the missing chunks"
)


@router.get(
    "/{task_id}/meta",
    response_model=Envelope[AssetData],
    responses={**NOT_FOUND, 409: {"model": ErrorEnvelope, "description": PENDING_META}},
)
async def get_meta(
    task_id: str, request: Request, account: CurrentAccount, context: Context
) -> Response:
    """The asset and its validity period (`expiresAt`). For a pending session: 409 with the chunk
    indexes received so far in `data.receivedChunks`."""
    now = context.clock()
    try:
        async with context.db.read() as session:
            asset = await uploads.get_meta(session, account_id=account.id, task_id=task_id, now=now)
    except uploads.UploadPending as pending:
        body = error_body(409, pending.message, path=request.url.path, now=now)
        body["data"].update(pending.progress or {})
        return JSONResponse(body, 409)
    return ok(uploads.asset_data(asset))


@router.get(
    "/{task_id}/file",
    response_class=Response,
    responses={
        200: {"description": "the file's bytes", "content": {"application/octet-stream": {}}},
        206: {"description": "the requested byte range"},
        **NOT_FOUND,
        409: {"model": ErrorEnvelope, "description": "not complete yet"},
        416: {"model": ErrorEnvelope, "description": "range not satisfiable"},
    },
)
async def get_file(
    task_id: str,
    request: Request,
    account: CurrentAccount,
    context: Context,
    role: Annotated[
        str | None,
        Query(description="output, preview, uploaded_source or input; default by asset kind"),
    ] = None,
    download: Annotated[
        Literal["0", "1"], Query(description="1: as an attachment; 0: inline")
    ] = "0",
) -> Response:
    """The raw file (no envelope), streamed; `Range` gives 206."""
    if role is not None and role not in uploads.ROLES:
        raise InvalidInput(f"role must be one of {', '.join(uploads.ROLES)}", field="role")
    now = context.clock()
    async with context.db.read() as session:
        asset = await uploads.get_asset(session, account_id=account.id, task_id=task_id, now=now)
        served = await uploads.file_for_role(session, asset=asset, role=role, now=now)
    storage = _storage(request)
    info = await storage.stat(served.key)
    if info is None:
        raise NotFound(f"upload task {task_id} not found")
    return file_response(
        request,
        storage,
        info,
        media_type=served.mime_type,
        file_name=served.file_name,
        download=download == "1",
    )
