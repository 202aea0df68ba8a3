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


def output_problem(
    width: int, height: int, settings: Settings, fmt: str, *, subject: str = "the result"
) -> str | None:
    """Why a ``width`` x ``height`` result (or intermediate) in ``fmt`` is over the limits, or None.

    Each side at most ``MAX_OUTPUT_EDGE`` (16383 for WebP, 512 for ICO), at most
    ``max_image_pixels`` pixels: the same budget as an input.
    """
    edge = FORMAT_MAX_EDGE.get(fmt, MAX_OUTPUT_EDGE)
    if width > edge or height > edge:
        scope = f" of a {fmt.upper()} image" if fmt in FORMAT_MAX_EDGE else ""
        return f"{subject} would be {width}x{height}; each side{scope} may be at most {edge}"
    if width * height > settings.max_image_pixels:
        return (
            f"{subject} would be {width}x{height} ({width * height} pixels); "
            f"at most {settings.max_image_pixels} pixels are produced"
        )
    return None


def check_output(width: int, height: int, settings: Settings, fmt: str) -> None:
    """ImageTooLarge (413) when :func:`output_problem` finds one: the run-time check.

    Job creation checks the same limits first (``admission``, 400); this one
    holds whatever creation could not know.
    """
    problem = output_problem(width, height, settings, fmt)
    if problem is not None:
        raise ImageTooLarge(problem)
