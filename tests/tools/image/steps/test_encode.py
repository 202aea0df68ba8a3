from __future__ import annotations

import pytest

from tests.tools.image import samples
from toolrun.tools.image.steps.encode import (
    EncodeSpec,
    effective_quality,
    save,
    saver_options,
    to_buffer,
)
from toolrun.tools.image.vips import pyvips


@pytest.mark.parametrize(
    ("spec", "alpha", "quality"),
    [
        (EncodeSpec("jpeg"), False, 80),
        (EncodeSpec("webp"), True, 80),
        (EncodeSpec("avif"), True, 50),
        (EncodeSpec("png"), True, None),
        (EncodeSpec("png", 100), True, None),
        (EncodeSpec("png", 60), True, 60),
        (EncodeSpec("tiff"), False, None),
        (EncodeSpec("tiff", 70), False, 70),
        (EncodeSpec("tiff", 70), True, None),
        (EncodeSpec("jpeg", 33), False, 33),
    ],
)
def test_effective_quality(spec, alpha, quality):
    assert effective_quality(spec, alpha) == quality


@pytest.mark.parametrize(
    ("fmt", "loader"),
    [
        ("png", "pngload"),
        ("jpeg", "jpegload"),
        ("webp", "webpload"),
        ("avif", "heifload"),
        ("tiff", "tiffload"),
    ],
)
def test_save_writes_format(tmp_path, fmt, loader):
    path = tmp_path / "out"
    save(samples.quadrants(32, 24), path, EncodeSpec(fmt))
    image = pyvips.Image.new_from_file(str(path))
    assert image.get("vips-loader") == loader
    assert (image.width, image.height) == (32, 24)


def test_png_quality_quantises_to_palette(tmp_path):
    image = samples.photo(64, 64)
    lossless = to_buffer(image, EncodeSpec("png"))
    palette = to_buffer(image, EncodeSpec("png", 50))
    assert len(palette) < len(lossless)
    assert saver_options(EncodeSpec("png", 50), False)[1]["palette"] is True


def test_strip_keeps_icc_drops_exif(tmp_path):
    image = samples.solid(8, 8, samples.RED).icc_export(output_profile="srgb").copy()
    image.set_type(pyvips.GValue.gstr_type, "exif-ifd0-Artist", "someone")
    stripped, kept = tmp_path / "s.jpg", tmp_path / "k.jpg"
    save(image, stripped, EncodeSpec("jpeg", strip=True))
    save(image, kept, EncodeSpec("jpeg"))
    stripped_image = pyvips.Image.new_from_file(str(stripped))
    assert stripped_image.get_typeof("icc-profile-data") != 0
    assert stripped_image.get_typeof("exif-data") == 0
    assert pyvips.Image.new_from_file(str(kept)).get_typeof("exif-data") != 0
