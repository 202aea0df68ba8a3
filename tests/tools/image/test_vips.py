"""The header-only probe, the loader allow-list and the thread pool."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tests.tools.image import samples
from toolrun.tools.image import vips
from toolrun.tools.image.errors import ImageCorrupt, ImageUnsupported
from toolrun.tools.image.vips import probe, pyvips


@pytest.mark.parametrize(
    ("suffix", "fmt", "mime"),
    [
        (".jpg", "jpeg", "image/jpeg"),
        (".png", "png", "image/png"),
        (".webp", "webp", "image/webp"),
        (".tif", "tiff", "image/tiff"),
        (".avif", "avif", "image/avif"),
    ],
)
def test_probe_finds_type_from_bytes_not_name(tmp_path, suffix, fmt, mime):
    path = tmp_path / "upload.bin"  # the name says nothing
    path.write_bytes(samples.encode(samples.quadrants(30, 20), suffix))
    info = probe(path)
    assert (info.format, info.mime, info.width, info.height) == (fmt, mime, 30, 20)
    assert (info.pages, info.has_alpha, info.bits, info.orientation) == (1, False, 8, 1)


def test_probe_reports_alpha_and_pages(tmp_path, alpha_png):
    gif = tmp_path / "anim.gif"
    samples.write_animated_gif(gif)
    assert probe(gif).pages == 2
    assert probe(gif).format == "gif"
    assert probe(alpha_png).has_alpha


def test_probe_gives_upright_dimensions(tmp_path):
    path = tmp_path / "rot.jpg"
    samples.write_rotated_jpeg(path, 6)
    info = probe(path)
    assert (info.width, info.height, info.orientation) == (20, 40, 6)
    assert (info.stored_width, info.stored_height) == (40, 20)


def test_probe_reads_no_pixels_of_a_huge_declared_image(tmp_path):
    path = tmp_path / "bomb.png"
    path.write_bytes(samples.png_header_only(100_000, 100_000))
    info = probe(path)
    assert info.pixels == 10**10


def test_probe_16bit_cmyk_grey(tmp_path):
    paths = {name: tmp_path / f"{name}.img" for name in ("rgb16", "cmyk", "grey16")}
    samples.write_16bit_png(paths["rgb16"])
    samples.write_cmyk_jpeg(paths["cmyk"])
    samples.write_grey16_png(paths["grey16"])
    assert (probe(paths["rgb16"]).bits, probe(paths["rgb16"]).interpretation) == (16, "rgb16")
    assert probe(paths["cmyk"]).interpretation == "cmyk"
    assert probe(paths["grey16"]).interpretation == "grey16"


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"hello world, not an image",
        b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>',
        b"P3\n1 1\n255\n0 0 0\n",  # PPM: libvips can read it, toolrun does not
        b"%PDF-1.4\n",
    ],
)
def test_probe_refuses_other_formats(tmp_path, content):
    path = tmp_path / "upload.csv"  # a suffix libvips would otherwise pick a loader by
    path.write_bytes(content)
    with pytest.raises(ImageUnsupported) as caught:
        probe(path)
    assert caught.value.code == 415


def test_probe_refuses_corrupt_header(tmp_path):
    data = bytearray(samples.encode(samples.quadrants(30, 20), ".png"))
    data[16:24] = b"\xff" * 8  # IHDR width/height garbage, CRC now wrong
    path = tmp_path / "bad.png"
    path.write_bytes(bytes(data))
    with pytest.raises(ImageCorrupt) as caught:
        probe(path)
    assert caught.value.code == 400


def test_load_truncated_jpeg_fails_on_decode(tmp_path):
    data = samples.encode(samples.photo(200, 150), ".jpg")
    path = tmp_path / "cut.jpg"
    path.write_bytes(data[: len(data) // 2])
    info = probe(path)  # the header is intact
    image = vips.load(path, info)
    with pytest.raises(vips.VipsError):
        image.avg()


async def test_run_in_pool_runs_in_image_threads():
    names = await asyncio.gather(
        *(vips.run_in_pool(lambda: threading.current_thread().name) for _ in range(4))
    )
    assert all(name.startswith("toolrun-vips") for name in names)


def test_operation_cache_is_off():
    assert pyvips.cache_get_max() == 0
