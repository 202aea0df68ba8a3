"""What a stored file is, told from its bytes, and the names it may be served under.

The client's ``mimeType`` and file name are never trusted for the type: the
first bytes decide (:func:`sniff_image`), so a file is always served with the
type it really has.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath

from toolrun.core.errors import InvalidInput

SNIFF_BYTES = 1024  # enough for every signature below, and for an SVG's prologue
MAX_FILE_NAME_CHARS = 255


@dataclass(frozen=True)
class FileType:
    """A file type toolrun stores: its short name, MIME type and canonical extension."""

    name: str
    mime_type: str
    extension: str
    aliases: frozenset[str]  # extensions that also name this type (lower case, no dot)


TYPES: dict[str, FileType] = {
    "png": FileType("png", "image/png", "png", frozenset({"png"})),
    "jpeg": FileType("jpeg", "image/jpeg", "jpg", frozenset({"jpg", "jpeg", "jpe", "jfif"})),
    "gif": FileType("gif", "image/gif", "gif", frozenset({"gif"})),
    "webp": FileType("webp", "image/webp", "webp", frozenset({"webp"})),
    "tiff": FileType("tiff", "image/tiff", "tiff", frozenset({"tif", "tiff"})),
    "avif": FileType("avif", "image/avif", "avif", frozenset({"avif"})),
    "svg": FileType("svg", "image/svg+xml", "svg", frozenset({"svg"})),
    "ico": FileType("ico", "image/x-icon", "ico", frozenset({"ico"})),
}

_AVIF_BRANDS = {b"avif", b"avis"}
_SVG_PROLOGUE = re.compile(
    rb"\A(?:\s+|<\?xml[^>]*\?>|<!--.*?-->|<!DOCTYPE\s+svg[^>]*>)*<svg[\s>/]", re.DOTALL
)


def sniff_image(head: bytes, *, allow_svg: bool = False) -> FileType | None:
    """The raster type whose signature ``head`` (the file's first bytes) starts with, or None.

    SVG (text, so recognised by its root element) only when ``allow_svg``.
    """
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return TYPES["png"]
    if head.startswith(b"\xff\xd8\xff"):
        return TYPES["jpeg"]
    if head.startswith((b"GIF87a", b"GIF89a")):
        return TYPES["gif"]
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return TYPES["webp"]
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return TYPES["tiff"]
    if head[4:8] == b"ftyp" and _has_avif_brand(head):
        return TYPES["avif"]
    if allow_svg and _is_svg(head):
        return TYPES["svg"]
    return None


def _has_avif_brand(head: bytes) -> bool:
    box_size = int.from_bytes(head[:4], "big")
    brands = head[8:12], *(head[i : i + 4] for i in range(16, min(box_size, len(head)), 4))
    return any(brand in _AVIF_BRANDS for brand in brands)


def _is_svg(head: bytes) -> bool:
    return _SVG_PROLOGUE.match(head.removeprefix(b"\xef\xbb\xbf")) is not None


def type_by_name(name: str) -> FileType | None:
    return TYPES.get(name)


def clean_file_name(name: str, *, field: str = "fileName") -> str:
    """The client's file name without folders or control characters; 400 if nothing is left.

    ``a/b\\c.png`` becomes ``c.png``; CR, LF, NUL and other control or
    format characters are dropped; quotes and any other Unicode are kept
    (the download header encodes them, see :func:`content_disposition`).
    """
    name = unicodedata.normalize("NFC", name)
    name = re.split(r"[/\\]", name)[-1]
    name = "".join(char for char in name if unicodedata.category(char) not in {"Cc", "Cf"})
    name = name.strip().strip(".").strip()
    if not name:
        raise InvalidInput("fileName names no file", field=field)
    return name[:MAX_FILE_NAME_CHARS]


def extension_of(name: str) -> str:
    """The lower-case extension of ``name`` without the dot (``""`` when none fits)."""
    suffix = PurePosixPath(name).suffix.lower().lstrip(".")
    return suffix if suffix.isalnum() and len(suffix) <= 16 else ""


def name_for_type(name: str, file_type: FileType) -> str:
    """``name`` with the extension of the type it really has (``photo.png`` of a JPEG: ``.jpg``)."""
    if extension_of(name) in file_type.aliases:
        return name
    stem = PurePosixPath(name).stem if extension_of(name) else name
    return f"{stem[: MAX_FILE_NAME_CHARS - 8]}.{file_type.extension}"
