"""The formats toolrun reads and writes, with their MIME types, extensions and defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OutputFormat = Literal["png", "jpeg", "webp", "avif", "tiff"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("png", "jpeg", "webp", "avif", "tiff")


@dataclass(frozen=True)
class FormatSpec:
    """What a written format is called and what it can hold."""

    name: str
    mime: str
    extension: str
    has_alpha: bool
    default_quality: int | None  # None: lossless unless a quality is asked for


FORMATS: dict[str, FormatSpec] = {
    "png": FormatSpec("png", "image/png", "png", True, None),
    "jpeg": FormatSpec("jpeg", "image/jpeg", "jpg", False, 80),
    "webp": FormatSpec("webp", "image/webp", "webp", True, 80),
    "avif": FormatSpec("avif", "image/avif", "avif", True, 50),
    "tiff": FormatSpec("tiff", "image/tiff", "tiff", True, None),
    "ico": FormatSpec("ico", "image/x-icon", "ico", True, None),
}

# Input formats (probe names) -> the output format used when a job names none.
# GIF cannot be written by libvips here, so GIF sources become PNG (lossless, keeps alpha).
DEFAULT_OUTPUT_FOR_INPUT: dict[str, OutputFormat] = {
    "jpeg": "jpeg",
    "png": "png",
    "webp": "webp",
    "gif": "png",
    "tiff": "tiff",
    "avif": "avif",
}

INPUT_MIME: dict[str, str] = {
    "jpeg": "image/jpeg",
    "png": "image/png",
    "webp": "image/webp",
    "gif": "image/gif",
    "tiff": "image/tiff",
    "avif": "image/avif",
}
