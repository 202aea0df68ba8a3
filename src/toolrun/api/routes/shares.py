"""Diagram share: create (1 credit, synchronous), read, and the public share image."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, UploadFile
from pydantic import BaseModel
from starlette.responses import Response

from toolrun.api.bodies import capped_body_route
from toolrun.api.context import AppContext
from toolrun.api.deps import Context, CurrentAccount
from toolrun.api.envelope import ok
from toolrun.api.files import file_response
from toolrun.api.routes.uploads import MULTIPART_OVERHEAD_BYTES, READ_PIECE_BYTES
from toolrun.api.schemas import ERROR_RESPONSES, Envelope, ErrorEnvelope
from toolrun.core import shares
from toolrun.core.assets import SNIFF_BYTES
from toolrun.core.errors import NotFound
from toolrun.storage import Storage

IMMUTABLE = "public, max-age=31536000, immutable"
MAX_BODY_BYTES = shares.MAX_IMAGE_BYTES + shares.MAX_CODE_BYTES + MULTIPART_OVERHEAD_BYTES

router = APIRouter(
    prefix="/openapi/mermaid/share",
    tags=["diagram share"],
    responses=ERROR_RESPONSES,
    route_class=capped_body_route(MAX_BODY_BYTES),
)
public_router = APIRouter(include_in_schema=False)


class ShareCreatedData(BaseModel):
    id: str
    imageUrl: str


class ShareData(BaseModel):
    id: str
    code: str
    imageUrl: str


def _base_url(context: AppContext, request: Request) -> str:
    return context.settings.public_base_url or str(request.base_url)


def _storage(context: AppContext) -> Storage:
    storage: Storage = context.services["storage"]
    return storage


async def _pieces(file: UploadFile) -> AsyncIterator[bytes]:
    await file.seek(0)
    while piece := await file.read(READ_PIECE_BYTES):
        yield piece


CREATE_RESPONSES: dict[int | str, dict[str, Any]] = {
    402: {"model": ErrorEnvelope, "description": "insufficient credits"},
    500: {"model": ErrorEnvelope, "description": "storing failed; the credit was returned"},
}


@router.post(
    "", status_code=201, response_model=Envelope[ShareCreatedData], responses=CREATE_RESPONSES
)
async def create_share(
    request: Request,
    account: CurrentAccount,
    context: Context,
    code: Annotated[str, Form(description="the diagram code, at most 100 KB")],
    image: Annotated[UploadFile, File(description="PNG, JPEG, WebP or SVG, at most 5 MiB")],
) -> Response:
    """Store a diagram and its image; costs 1 credit, returned if storing fails."""
    head = await image.read(SNIFF_BYTES)
    created = await shares.create(
        context.db,
        _storage(context),
        account_id=account.id,
        code=code,
        head=head,
        image=_pieces(image),
        length=image.size,
        now=context.clock(),
    )
    data = shares.share_data(created.share, _base_url(context, request), with_code=False)
    headers = {"X-Credits-Balance": str(created.balance), "X-Credits-Cost": "1"}
    return ok(data, status=201, headers=headers)


@router.get(
    "/{share_id}",
    response_model=Envelope[ShareData],
    responses={404: {"model": ErrorEnvelope, "description": "no such share"}},
)
async def get_share(
    share_id: str, request: Request, account: CurrentAccount, context: Context
) -> Response:
    """A share's code and image URL; any valid key may read any share."""
    async with context.db.read() as session:
        share = await shares.get(session, share_id=share_id)
    return ok(shares.share_data(share, _base_url(context, request), with_code=True))


@public_router.get("/share-images/{name}")
async def share_image(name: str, request: Request, context: Context) -> Response:
    """The share's image: public (meant to be embedded), immutable, never run as a document."""
    async with context.db.read() as session:
        share = await shares.by_image_name(session, name=name)
    storage = _storage(context)
    info = await storage.stat(share.image_key)
    if info is None:
        raise NotFound("share image not found")
    return file_response(
        request,
        storage,
        info,
        media_type=share.mime_type,
        file_name=f"{share.id}.{share.extension}",
        download=False,
        cache_control=IMMUTABLE,
    )
