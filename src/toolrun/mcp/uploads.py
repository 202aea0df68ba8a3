"""Uploads for agents: a local file by path (stdio only), or base64 content in the call itself.

Both go through the API's chunked upload flow (free), so the asset is an
ordinary upload of the caller's account. The path form uses the client's
resumable ``upload``; the content form is capped at ``MAX_INLINE_BYTES`` so a
call stays under the API's 1 MiB limit on JSON request bodies.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolrun.client import Asset, AsyncClient

MAX_INLINE_BYTES = 512 * 1024
"""Largest decoded ``contentBase64``: its base64 text (~683 KiB) fits a 1 MiB request body."""
DEFAULT_MIME_TYPE = "application/octet-stream"


class UploadFileInput(BaseModel):
    """Upload an image file from this machine."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1,
        description="path of the image file on the machine running `toolrun mcp` (~ is expanded)",
    )
    mime_type: str | None = Field(
        default=None,
        alias="mimeType",
        description="the file's type; guessed from its name when omitted (the service checks the bytes anyway)",
    )


class UploadContentInput(BaseModel):
    """Upload an image given as base64 text."""

    model_config = ConfigDict(extra="forbid")

    file_name: str = Field(
        min_length=1, max_length=255, alias="fileName", description="a name for the file"
    )
    content_base64: str = Field(
        min_length=1,
        max_length=4 * -(-MAX_INLINE_BYTES // 3),
        alias="contentBase64",
        description=f"the file's bytes in standard base64, at most {MAX_INLINE_BYTES} bytes decoded",
    )
    mime_type: str | None = Field(
        default=None,
        alias="mimeType",
        description="the file's type; guessed from fileName when omitted",
    )

    @field_validator("content_base64")
    @classmethod
    def _decodes(cls, value: str) -> str:
        content = decode(value)
        if len(content) > MAX_INLINE_BYTES:
            raise ValueError(
                f"{len(content)} bytes decoded; at most {MAX_INLINE_BYTES} bytes can be sent inline"
            )
        return value

    @property
    def content(self) -> bytes:
        return decode(self.content_base64)


def decode(text: str) -> bytes:
    """Standard base64, whitespace allowed; ValueError when it is not base64."""
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except binascii.Error as exc:
        raise ValueError(f"not valid base64: {exc}") from None


def guess_mime_type(file_name: str) -> str:
    return mimetypes.guess_type(file_name)[0] or DEFAULT_MIME_TYPE


def local_file(path: str) -> Path:
    """The file ``path`` names (``~`` expanded); FileNotFoundError when it is not a file."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise FileNotFoundError(f"no file at {file}")
    return file


async def upload_content(client: AsyncClient, upload: UploadContentInput) -> Asset:
    """Send the bytes in the session's chunks, then complete it (each step retried by the client)."""
    content = upload.content
    mime_type = upload.mime_type or guess_mime_type(upload.file_name)
    session = await client.create_upload(upload.file_name, mime_type, len(content))
    for index in range(session.total_chunks):
        start = index * session.chunk_size
        await client.upload_chunk(
            session.task_id, index, content[start : start + session.chunk_size]
        )
    return await client.complete_upload(session.task_id, session.total_chunks)
