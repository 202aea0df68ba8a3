"""The one door to libvips: loading, the header-only probe and the worker thread pool.

pyvips has no type information, so it is imported here as ``Any`` and the rest
of the image package sees only ``VipsImage`` (an alias of ``Any``) and the
typed functions below. Only allow-listed loaders ever run: the loader is chosen
from the file's bytes by libvips, then refused unless it is one of
``_LOADERS`` (no SVG, PDF, CSV, matrix, raw or ``.vips`` files).

libvips work blocks, so it runs in ``POOL``: one thread per core, each
pipeline with ``VIPS_CONCURRENCY`` libvips worker threads, so jobs running at
the same time share the cores instead of each asking for all of them.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from toolrun.tools.image.errors import ImageCorrupt, ImageUnsupported
from toolrun.tools.image.formats import INPUT_MIME

pyvips: Any = importlib.import_module("pyvips")

VipsImage = Any
"""A ``pyvips.Image``; untyped, so only an alias."""

VipsError: type[Exception] = pyvips.Error

T = TypeVar("T")

POOL_SIZE = (
    len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
)
VIPS_CONCURRENCY = 1  # per pipeline; POOL_SIZE pipelines at once fill the cores

# libvips loader class (as found from the bytes) -> (our format name, loader operation)
_LOADERS: dict[str, tuple[str, str]] = {
    "VipsForeignLoadJpegFile": ("jpeg", "jpegload"),
    "VipsForeignLoadPngFile": ("png", "pngload"),
    "VipsForeignLoadSpngFile": ("png", "pngload"),
    "VipsForeignLoadWebpFile": ("webp", "webpload"),
    "VipsForeignLoadNsgifFile": ("gif", "gifload"),
    "VipsForeignLoadGifFile": ("gif", "gifload"),
    "VipsForeignLoadTiffFile": ("tiff", "tiffload"),
    "VipsForeignLoadHeifFile": ("avif", "heifload"),
}

FAIL_ON = "error"  # truncated or damaged data fails the load instead of giving grey pixels

# Operation caching would keep decoded files and open descriptors alive between jobs.
pyvips.cache_set_max(0)
pyvips.concurrency_set(VIPS_CONCURRENCY)
pyvips.block_untrusted_set(True)

POOL = ThreadPoolExecutor(max_workers=POOL_SIZE, thread_name_prefix="toolrun-vips")


def configure(*, pool_size: int | None = None, vips_concurrency: int | None = None) -> None:
    """Resize the thread pool and/or libvips' per-pipeline threads (benchmarks, operators)."""
    global POOL, POOL_SIZE
    if vips_concurrency is not None:
        pyvips.concurrency_set(vips_concurrency)
    if pool_size is not None and pool_size != POOL_SIZE:
        old, POOL_SIZE = POOL, pool_size
        POOL = ThreadPoolExecutor(max_workers=pool_size, thread_name_prefix="toolrun-vips")
        old.shutdown(wait=False)


async def run_in_pool(fn: Callable[..., T], *args: Any) -> T:
    """Run blocking libvips work ``fn(*args)`` in the image thread pool."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(POOL, functools.partial(fn, *args))


@dataclass(frozen=True)
class ImageInfo:
    """What the header says, read without decoding pixels.

    ``width``/``height`` are as displayed (EXIF orientation applied);
    ``stored_width``/``stored_height`` as stored in the file.
    """

    format: str  # jpeg, png, webp, gif, tiff, avif
    mime: str
    width: int
    height: int
    pages: int
    has_alpha: bool
    interpretation: str
    bands: int
    bits: int
    orientation: int
    has_icc: bool
    loader: str
    stored_width: int
    stored_height: int

    @property
    def pixels(self) -> int:
        return self.width * self.height


def _loader_for(path: Path) -> tuple[str, str]:
    name = pyvips.vips_lib.vips_foreign_find_load(str(path).encode())
    if name == pyvips.ffi.NULL:
        pyvips.vips_lib.vips_error_clear()
        raise ImageUnsupported()
    loader = _LOADERS.get(pyvips.ffi.string(name).decode())
    if loader is None:
        raise ImageUnsupported()
    return loader


def _field(image: VipsImage, name: str, default: Any) -> Any:
    return image.get(name) if image.get_typeof(name) != 0 else default


def _bits(band_format: str) -> int:
    return {"uchar": 8, "char": 8, "ushort": 16, "short": 16}.get(band_format, 32)


def probe(path: Path) -> ImageInfo:
    """Read the header of ``path``; raise ImageUnsupported (415) or ImageCorrupt (400).

    Decodes no pixels, so it is cheap for any size and safe to call before the
    pixel limit is checked.
    """
    fmt, loader = _loader_for(path)
    try:
        image = getattr(pyvips.Image, loader)(str(path), access="sequential", fail_on=FAIL_ON)
        if fmt == "avif" and _field(image, "heif-compression", "av1") != "av1":
            raise ImageUnsupported("unsupported image: HEIC is not read, AVIF is")
        orientation = int(_field(image, "orientation", 1))
        if not 1 <= orientation <= 8:
            orientation = 1
        width, height = image.width, image.height
        rotated = orientation >= 5
        return ImageInfo(
            format=fmt,
            mime=INPUT_MIME[fmt],
            width=height if rotated else width,
            height=width if rotated else height,
            pages=int(_field(image, "n-pages", 1)),
            has_alpha=bool(image.hasalpha()),
            interpretation=str(image.interpretation),
            bands=int(image.bands),
            bits=_bits(str(image.format)),
            orientation=orientation,
            has_icc=image.get_typeof("icc-profile-data") != 0,
            loader=loader,
            stored_width=width,
            stored_height=height,
        )
    except VipsError as exc:
        raise ImageCorrupt() from exc


def watch_deadline(image: VipsImage, deadline: datetime) -> None:
    """Make libvips abandon computing ``image`` once ``deadline`` (naive: UTC) passes.

    Evaluation then fails with a libvips error; the caller tells it from a
    decoding error by checking the deadline again.
    """
    if deadline.tzinfo is None:
        deadline = deadline.replace(tzinfo=UTC)

    def on_eval(evaluated: VipsImage, progress: Any) -> None:
        if datetime.now(UTC) > deadline:
            evaluated.set_kill(True)

    image.set_progress(True)
    image.signal_connect("eval", on_eval)


def load(
    path: Path, info: ImageInfo, *, jpeg_shrink: int = 1, webp_scale: float = 1.0
) -> VipsImage:
    """Open ``path`` lazily with its allow-listed loader: the first frame only.

    Sequential access streams the pixels top to bottom; an orientation other
    than 1 needs random access (rotations read the image out of order).
    ``jpeg_shrink`` (1, 2, 4, 8) decodes a JPEG and ``webp_scale`` (below 1) a
    WebP at reduced size.
    """
    options: dict[str, Any] = {
        "access": "sequential" if info.orientation == 1 else "random",
        "fail_on": FAIL_ON,
    }
    if info.format == "jpeg" and jpeg_shrink > 1:
        options["shrink"] = jpeg_shrink
    if info.format == "webp" and webp_scale < 1.0:
        options["scale"] = webp_scale
    try:
        return getattr(pyvips.Image, info.loader)(str(path), **options)
    except VipsError as exc:
        raise ImageCorrupt() from exc
