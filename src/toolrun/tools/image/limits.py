"""Size limits, checked from the file size and the header before any pixel is decoded."""

from __future__ import annotations

from pathlib import Path

from toolrun.config import Settings
from toolrun.tools.image.errors import ImageTooLarge
from toolrun.tools.image.vips import ImageInfo

MAX_OUTPUT_EDGE = 65535
"""Longest output side of any format (JPEG's and AVIF's limit); requests above it are refused."""

FORMAT_MAX_EDGE = {"webp": 16383, "ico": 512}


def check_file_size(path: Path, settings: Settings) -> int:
    """Return the size of ``path``; ImageTooLarge when over ``max_upload_bytes``."""
    size = path.stat().st_size
    if size > settings.max_upload_bytes:
        raise ImageTooLarge(
            f"the image file is {size} bytes; at most {settings.max_upload_bytes} are accepted"
        )
    return size


def check_source(info: ImageInfo, settings: Settings) -> None:
    """ImageTooLarge when the decoded image would exceed ``max_image_pixels``."""
    if info.pixels > settings.max_image_pixels:
        raise ImageTooLarge(
            f"the image is {info.width}x{info.height} ({info.pixels} pixels); "
            f"at most {settings.max_image_pixels} pixels are accepted"
        )


def check_output(width: int, height: int, settings: Settings, fmt: str) -> None:
    """ImageTooLarge when a ``width`` x ``height`` result (or intermediate) is over the limits.

    Each side at most ``MAX_OUTPUT_EDGE`` (16383 for WebP), at most
    ``max_image_pixels`` pixels: the same budget as an input.
    """
    edge = FORMAT_MAX_EDGE.get(fmt, MAX_OUTPUT_EDGE)
    if width > edge or height > edge:
        scope = f" of a {fmt.upper()} image" if fmt in FORMAT_MAX_EDGE else ""
        raise ImageTooLarge(
            f"the result would be {width}x{height}; each side{scope} may be at most {edge}"
        )
    if width * height > settings.max_image_pixels:
        raise ImageTooLarge(
            f"the result would be {width}x{height} ({width * height} pixels); "
            f"at most {settings.max_image_pixels} pixels are produced"
        )
