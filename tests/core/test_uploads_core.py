"""Pure rules of uploads: the chunk plan, file-name cleaning, type sniffing, the served name."""

from __future__ import annotations

import pytest

from tests.api.uploadkit import encoded, png_bytes
from toolrun.core.assets import TYPES, clean_file_name, extension_of, name_for_type, sniff_image
from toolrun.core.errors import InvalidInput
from toolrun.core.uploads import MAX_CHUNKS, asset_paths, parts_key, plan_chunks


@pytest.mark.parametrize(
    ("size", "requested", "planned"),
    [
        (1, None, (1, 1)),
        (5 * 1024 * 1024, None, (5 * 1024 * 1024, 1)),
        (5 * 1024 * 1024 + 1, None, (5 * 1024 * 1024, 2)),
        (100, 7, (7, 15)),
        (100, 100, (100, 1)),
        (100, 1000, (100, 1)),
        (64 * 1024 * 1024, 1, (6711, 10_000)),
        (64 * 1024 * 1024, 8 * 1024 * 1024, (8 * 1024 * 1024, 8)),
    ],
)
def test_plan_chunks(size: int, requested: int | None, planned: tuple[int, int]) -> None:
    chunk, total = plan_chunks(size, requested)
    assert (chunk, total) == planned
    assert total <= MAX_CHUNKS
    assert chunk * (total - 1) < size <= chunk * total


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("photo.png", "photo.png"),
        ("C:\\Users\\me\\photo.png", "photo.png"),
        ("../../etc/passwd", "passwd"),
        ("a\r\nb.png", "ab.png"),
        ("  spaced .png ", "spaced .png"),
        ("q\"uo'te.png", "q\"uo'te.png"),
        ("e\u0301t\u00e9.png", "\u00e9t\u00e9.png"),  # NFC
        ("rtl\u202egnp.exe", "rtlgnp.exe"),  # no bidi override
        ("x" * 300, "x" * 255),
    ],
)
def test_clean_file_name(raw: str, clean: str) -> None:
    assert clean_file_name(raw) == clean


@pytest.mark.parametrize("raw", ["", "/", "..", "a/", "\r\n", "\u200b", "..."])
def test_file_names_that_name_nothing_are_refused(raw: str) -> None:
    with pytest.raises(InvalidInput):
        clean_file_name(raw)


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (png_bytes(), "png"),
        (encoded("jpg"), "jpeg"),
        (encoded("gif"), "gif"),
        (encoded("webp"), "webp"),
        (encoded("tif"), "tiff"),
        (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf", "avif"),
        (b"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1avif", "avif"),
        (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic", None),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", None),  # SVG only when asked for
        (b"hello", None),
        (b"", None),
    ],
)
def test_sniff_image(data: bytes, name: str | None) -> None:
    found = sniff_image(data[:1024])
    assert (found.name if found else None) == name


@pytest.mark.parametrize(
    ("data", "is_svg"),
    [
        (b"<svg/>", True),
        (b"\xef\xbb\xbf  <?xml version='1.0'?><!-- c --><!DOCTYPE svg><svg width='1'>", True),
        (b"<html><svg></svg></html>", False),
        (b"<svgfoo>", False),
        (b"text <svg>", False),
    ],
)
def test_sniff_svg(data: bytes, is_svg: bool) -> None:
    assert (sniff_image(data, allow_svg=True) == TYPES["svg"]) is is_svg


@pytest.mark.parametrize(
    ("name", "fmt", "served"),
    [
        ("a.png", "png", "a.png"),
        ("a.PNG", "png", "a.PNG"),
        ("a.jpeg", "jpeg", "a.jpeg"),
        ("a.png", "jpeg", "a.jpg"),
        ("archive.tar.gz", "gif", "archive.tar.gif"),
        ("noext", "webp", "noext.webp"),
        ("a.tif", "tiff", "a.tif"),
    ],
)
def test_name_for_type(name: str, fmt: str, served: str) -> None:
    assert name_for_type(name, TYPES[fmt]) == served


def test_extension_and_keys() -> None:
    assert extension_of("a.b.PNG") == "png"
    assert extension_of("a.") == ""
    assert parts_key("t") == "uploads/t/chunks"
    assert asset_paths("t") == (
        "/openapi/uploads/tasks/t/file?download=1",
        "/openapi/uploads/tasks/t/file?role=preview",
    )
