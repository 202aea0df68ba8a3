"""Why an image job fails: each error is a ``ToolFailure`` with its job error code.

Exceptions::

    ToolFailure                 (toolrun.tools.base)
    ├── ImageCorrupt        400 the bytes cannot be decoded (truncated, damaged)
    ├── RegionOutside       400 a crop region does not lie inside the image
    ├── ImageTooLarge       413 input bytes, input pixels or output size over a limit
    ├── ImageUnsupported    415 not an image format toolrun reads
    └── DeadlinePassed      504 the job's deadline passed between two steps

The message is public: it names the problem, never a path or a libvips detail.
"""

from __future__ import annotations

from toolrun.tools.base import ToolFailure


class ImageCorrupt(ToolFailure):
    """The image is corrupt or truncated and cannot be decoded."""

    def __init__(self, message: str = "the image is corrupt or truncated") -> None:
        super().__init__(400, message)


class RegionOutside(ToolFailure):
    """The crop region does not lie inside the image."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


class ImageTooLarge(ToolFailure):
    """The input file, the decoded input or the requested output is over a limit."""

    def __init__(self, message: str) -> None:
        super().__init__(413, message)


class ImageUnsupported(ToolFailure):
    """The file is not in a format toolrun reads (JPEG, PNG, WebP, GIF, TIFF, AVIF)."""

    def __init__(
        self, message: str = "unsupported image: JPEG, PNG, WebP, GIF, TIFF and AVIF are read"
    ) -> None:
        super().__init__(415, message)


class DeadlinePassed(ToolFailure):
    """The job passed its deadline while the image was being processed."""

    def __init__(self) -> None:
        super().__init__(504, "the job passed its deadline")
