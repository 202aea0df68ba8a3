from __future__ import annotations

import pytest

from tests.tools.web.conftest import image_bytes
from toolrun.tools.web.imagesize import sniff


@pytest.mark.parametrize(
    ("fmt", "options", "media_type"),
    [
        ("PNG", {}, "image/png"),
        ("GIF", {}, "image/gif"),
        ("JPEG", {}, "image/jpeg"),
        ("JPEG", {"progressive": True}, "image/jpeg"),
        ("WEBP", {}, "image/webp"),
        ("WEBP", {"lossless": True}, "image/webp"),
        ("BMP", {}, "image/bmp"),
    ],
)
def test_dimensions_from_header(fmt: str, options: dict[str, object], media_type: str) -> None:
    data = image_bytes(321, 123, fmt, **options)
    info = sniff(data[:4096])
    assert info is not None
    assert (info.type, info.width, info.height) == (media_type, 321, 123)


def test_webp_extended_with_alpha() -> None:
    from io import BytesIO

    from PIL import Image

    buffer = BytesIO()
    Image.new("RGBA", (77, 55), (0, 0, 0, 0)).save(buffer, "WEBP", exif=b"Exif\x00\x00")
    info = sniff(buffer.getvalue())
    assert info is not None
    assert (info.width, info.height) == (77, 55)


def test_ico_reports_largest_entry() -> None:
    info = sniff(image_bytes(64, 64, "ICO", sizes=[(16, 16), (48, 48)]))
    assert info is not None
    assert (info.type, info.width, info.height) == ("image/x-icon", 48, 48)


@pytest.mark.parametrize(
    ("svg", "size"),
    [
        (b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20px"/>', (40, 20)),
        (b'<?xml version="1.0"?>\n<svg viewBox="0 0 24 12"></svg>', (24, 12)),
        (b'<svg width="100%" height="100%"></svg>', (None, None)),
    ],
)
def test_svg_size(svg: bytes, size: tuple[int | None, int | None]) -> None:
    info = sniff(svg)
    assert info is not None
    assert (info.width, info.height) == size


@pytest.mark.parametrize("data", [b"", b"<html>", b"\x89PNG\r\n\x1a\n", b"GIF8", b"plain text"])
def test_not_an_image_or_too_short(data: bytes) -> None:
    assert sniff(data) is None


def test_jpeg_cut_before_frame_header_has_no_size() -> None:
    info = sniff(image_bytes(10, 10, "JPEG")[:20])
    assert info is not None
    assert info.type == "image/jpeg"
    assert info.width is None
