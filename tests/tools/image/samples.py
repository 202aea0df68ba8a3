"""Test images, generated with pyvips and Pillow (small, so the suite stays fast)."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path
from typing import Any

from PIL import Image as PILImage

from toolrun.tools.image.vips import pyvips

RED = (255, 0, 0)
GREEN = (0, 255, 0)
BLUE = (0, 0, 255)
WHITE = (255, 255, 255)


def solid(width: int, height: int, colour: tuple[int, ...]) -> Any:
    """A ``width`` x ``height`` sRGB (or sRGB + alpha) image of one colour."""
    image = pyvips.Image.black(width, height, bands=len(colour)).new_from_image(list(colour))
    return image.copy(interpretation="srgb")


def quadrants(width: int, height: int) -> Any:
    """Red top-left, green top-right, blue bottom-left, white bottom-right; halves rounded down."""
    half_w, half_h = width // 2, height // 2
    image = solid(width, height, WHITE)
    image = image.draw_rect(list(RED), 0, 0, half_w, half_h, fill=True)
    image = image.draw_rect(list(GREEN), half_w, 0, width - half_w, half_h, fill=True)
    return image.draw_rect(list(BLUE), 0, half_h, half_w, height - half_h, fill=True)


def photo(width: int, height: int) -> Any:
    """Smooth noise: compresses like a photograph, not like flat colour."""
    noise = pyvips.Image.gaussnoise(width, height, mean=128, sigma=50)
    bands = noise.bandjoin([noise.rot180(), noise.flip("horizontal")]).gaussblur(1.5)
    return bands.cast("uchar").copy(interpretation="srgb")


def pixel(path: Path, x: int, y: int) -> list[float]:
    """The pixel at (x, y) of the image file at ``path``, decoded by libvips."""
    return list(pyvips.Image.new_from_file(str(path)).getpoint(x, y))


def close(actual: list[float], expected: tuple[int, ...], tolerance: int = 12) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual, expected, strict=False))


def write_rotated_jpeg(path: Path, orientation: int) -> None:
    """A 40x20 stored JPEG (red left half, blue right half) tagged with ``orientation``."""
    image = solid(40, 20, BLUE).draw_rect(list(RED), 0, 0, 20, 20, fill=True).copy()
    image.set_type(pyvips.GValue.gint_type, "orientation", orientation)
    image.jpegsave(str(path), Q=95)


def write_cmyk_jpeg(path: Path) -> None:
    """A CMYK JPEG of pure red ink (C=0, M=100%, Y=100%, K=0), written by Pillow."""
    PILImage.new("CMYK", (32, 32), (0, 255, 255, 0)).save(path, "JPEG", quality=95)


def write_16bit_png(path: Path) -> None:
    """A 16-bit RGB PNG of (65535, 32896, 0) = 8-bit (255, 128, 0)."""
    image = pyvips.Image.black(24, 24, bands=3).cast("ushort").new_from_image([65535, 32896, 0])
    image.copy(interpretation="rgb16").pngsave(str(path), bitdepth=16)


def write_grey16_png(path: Path) -> None:
    """A 16-bit greyscale PNG of mid grey."""
    image = pyvips.Image.black(24, 24).cast("ushort").new_from_image(32896)
    image.copy(interpretation="grey16").pngsave(str(path), bitdepth=16)


def write_palette_png(path: Path) -> None:
    """A palette PNG: index 0 transparent on the left half, index 1 opaque red on the right."""
    image = PILImage.new("P", (20, 10), 0)
    image.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    image.paste(1, (10, 0, 20, 10))
    image.save(path, "PNG", transparency=0)


def write_animated_gif(path: Path) -> None:
    """Two frames: red then blue."""
    frames = [PILImage.new("RGB", (16, 16), colour) for colour in (RED, BLUE)]
    frames[0].save(path, "GIF", save_all=True, append_images=frames[1:], duration=100, loop=0)


def write_grey_jpeg(path: Path) -> None:
    grey = pyvips.Image.black(16, 16).new_from_image(100).copy(interpretation="b-w")
    grey.jpegsave(str(path))


def png_header_only(width: int, height: int) -> bytes:
    """A PNG whose header declares ``width`` x ``height`` and whose data is one tiny IDAT."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 64)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def encode(image: Any, fmt: str) -> bytes:
    """``image`` encoded as ``fmt`` (a libvips suffix such as ``.png``)."""
    return bytes(image.write_to_buffer(fmt))


def pil_open(data: bytes) -> PILImage.Image:
    return PILImage.open(io.BytesIO(data))
