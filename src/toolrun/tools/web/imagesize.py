"""Image type and dimensions from the first bytes of a file, without decoding it.

PNG (IHDR), GIF (logical screen), JPEG (first SOFn marker), WebP (VP8, VP8L,
VP8X), ICO (largest directory entry), BMP and SVG (``width``/``height`` or
``viewBox`` of the root element). ``HEADER_BYTES`` is enough for all but JPEGs
with very large EXIF blocks, which then report no dimensions.
"""

from __future__ import annotations

import contextlib
import re
import struct
from dataclasses import dataclass

HEADER_BYTES = 64 * 1024
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
_SVG_ROOT = re.compile(rb"<svg\b([^>]*)>", re.I | re.S)
_SVG_ATTR = re.compile(rb"""\b(width|height|viewBox)\s*=\s*["']([^"']*)["']""", re.I)


@dataclass(frozen=True)
class ImageInfo:
    """What the header says: media type and pixel size (None when not readable)."""

    type: str
    width: int | None
    height: int | None


def sniff(data: bytes) -> ImageInfo | None:
    """Identify the image in ``data`` (a prefix is enough); None if it is not an image we know."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return ImageInfo("image/png", width, height)
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return ImageInfo("image/gif", width, height)
    if data.startswith(b"\xff\xd8"):
        return _jpeg(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp(data)
    if data[:4] == b"\x00\x00\x01\x00" and len(data) >= 22:
        return _ico(data)
    if data[:2] == b"BM" and len(data) >= 26:
        width, height = struct.unpack("<ii", data[18:26])
        return ImageInfo("image/bmp", abs(width), abs(height))
    head = data[:4096].lstrip()
    if head.startswith((b"<svg", b"<?xml", b"<!DOCTYPE svg")) and b"<svg" in head:
        return _svg(data)
    return None


def _jpeg(data: bytes) -> ImageInfo:
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            index += 1
            continue
        marker = data[index + 1]
        if marker == 0xFF:
            index += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            index += 2
            continue
        (length,) = struct.unpack(">H", data[index + 2 : index + 4])
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[index + 5 : index + 9])
            return ImageInfo("image/jpeg", width, height)
        index += 2 + length
    return ImageInfo("image/jpeg", None, None)


def _webp(data: bytes) -> ImageInfo:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return ImageInfo("image/webp", width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return ImageInfo("image/webp", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return ImageInfo("image/webp", width, height)
    return ImageInfo("image/webp", None, None)


def _ico(data: bytes) -> ImageInfo:
    (count,) = struct.unpack("<H", data[4:6])
    best = (0, 0)
    for entry in range(min(count, 64)):
        offset = 6 + 16 * entry
        if offset + 2 > len(data):
            break
        width = data[offset] or 256
        height = data[offset + 1] or 256
        if width * height > best[0] * best[1]:
            best = (width, height)
    return ImageInfo("image/x-icon", best[0] or None, best[1] or None)


def _svg(data: bytes) -> ImageInfo:
    root = _SVG_ROOT.search(data[:HEADER_BYTES])
    if root is None:
        return ImageInfo("image/svg+xml", None, None)
    attrs = {
        k.decode().lower(): v.decode("ascii", "replace")
        for k, v in _SVG_ATTR.findall(root.group(1))
    }
    width, height = _svg_length(attrs.get("width")), _svg_length(attrs.get("height"))
    box = attrs.get("viewbox", "").replace(",", " ").split()
    if (width is None or height is None) and len(box) == 4:
        with contextlib.suppress(ValueError):
            width, height = round(float(box[2])), round(float(box[3]))
    return ImageInfo("image/svg+xml", width, height)


def _svg_length(value: str | None) -> int | None:
    if not value:
        return None
    match = re.match(r"\s*([0-9.]+)\s*(px)?\s*$", value)
    return round(float(match.group(1))) if match else None
