"""Step: write the image in the output format, with the quality and metadata asked for.

Quality rules: JPEG, WebP and AVIF take it directly (defaults 80, 80, 50, as
sharp). PNG is lossless unless a quality below 100 is given, which quantises
to a palette (pngquant-style) at that quality. TIFF is Deflate-compressed, or
JPEG-compressed at the given quality when the image has no alpha.
``strip`` keeps the ICC profile and drops EXIF, XMP, IPTC and the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolrun.tools.image.vips import VipsImage

PNG_COMPRESSION = 6  # zlib level, as sharp and imgproxy


@dataclass(frozen=True)
class EncodeSpec:
    """How to write: the format, the asked quality (None: format default) and metadata policy."""

    format: str
    quality: int | None = None
    strip: bool = False


def effective_quality(spec: EncodeSpec, has_alpha: bool) -> int | None:
    """The quality the encoder will use; None for a lossless result."""
    if spec.format == "jpeg":
        return spec.quality or 80
    if spec.format == "webp":
        return spec.quality or 80
    if spec.format == "avif":
        return spec.quality or 50
    if spec.format == "png":
        return spec.quality if spec.quality is not None and spec.quality < 100 else None
    if spec.format == "tiff":
        return spec.quality if spec.quality is not None and not has_alpha else None
    raise ValueError(f"no encoder for {spec.format!r}")


def saver_options(spec: EncodeSpec, has_alpha: bool) -> tuple[str, dict[str, Any]]:
    """The libvips saver and its options for ``spec``."""
    quality = effective_quality(spec, has_alpha)
    keep = "icc" if spec.strip else "all"
    if spec.format == "jpeg":
        return "jpegsave", {"Q": quality, "optimize_coding": True, "keep": keep}
    if spec.format == "webp":
        return "webpsave", {"Q": quality, "keep": keep}
    if spec.format == "avif":
        return "heifsave", {"Q": quality, "compression": "av1", "bitdepth": 8, "keep": keep}
    if spec.format == "png":
        if quality is None:
            return "pngsave", {"compression": PNG_COMPRESSION, "keep": keep}
        return "pngsave", {
            "compression": PNG_COMPRESSION,
            "palette": True,
            "Q": quality,
            "keep": keep,
        }
    if quality is None:
        return "tiffsave", {"compression": "deflate", "predictor": "horizontal", "keep": keep}
    return "tiffsave", {"compression": "jpeg", "Q": quality, "keep": keep}


def save(image: VipsImage, path: Path, spec: EncodeSpec) -> None:
    """Encode ``image`` into the file ``path`` (streamed: the whole image is never in memory)."""
    saver, options = saver_options(spec, bool(image.hasalpha()))
    getattr(image, saver)(str(path), **options)


def to_buffer(image: VipsImage, spec: EncodeSpec) -> bytes:
    """Encode ``image`` into bytes."""
    saver, options = saver_options(spec, bool(image.hasalpha()))
    return bytes(getattr(image, saver + "_buffer")(**options))
