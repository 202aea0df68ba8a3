from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tools.image import samples
from toolrun.tools.image.steps.colour import to_srgb
from toolrun.tools.image.vips import pyvips


def _load(path: Path) -> Any:
    return pyvips.Image.new_from_file(str(path))


def test_cmyk_becomes_red_srgb(tmp_path):
    path = tmp_path / "cmyk.jpg"
    samples.write_cmyk_jpeg(path)
    image = to_srgb(_load(path))
    assert (image.interpretation, image.bands, image.format) == ("srgb", 3, "uchar")
    red, green, blue = image.getpoint(5, 5)
    assert red > 200
    assert max(green, blue) < 90


def test_16bit_becomes_8bit(tmp_path):
    path = tmp_path / "rgb16.png"
    samples.write_16bit_png(path)
    image = to_srgb(_load(path))
    assert (image.interpretation, image.format) == ("srgb", "uchar")
    assert samples.close(image.getpoint(0, 0), (255, 128, 0), 1)


def test_grey16_stays_grey_8bit(tmp_path):
    path = tmp_path / "g16.png"
    samples.write_grey16_png(path)
    image = to_srgb(_load(path))
    assert (image.interpretation, image.bands, image.format) == ("b-w", 1, "uchar")
    assert abs(image.getpoint(0, 0)[0] - 128) <= 1


def test_srgb_passes_through_untouched():
    image = samples.solid(4, 4, samples.RED)
    assert to_srgb(image) is image


def test_embedded_profile_is_converted_and_replaced_by_srgb(tmp_path):
    # A CMYK JPEG carrying a real CMYK profile (libvips' built-in fallback one).
    cmyk = samples.solid(8, 8, samples.RED).icc_export(output_profile="cmyk")
    path = tmp_path / "cmyk-icc.jpg"
    cmyk.jpegsave(str(path))
    source = _load(path)
    assert source.get_typeof("icc-profile-data") != 0
    image = to_srgb(source)
    assert image.interpretation == "srgb"
    assert image.get_typeof("icc-profile-data") != 0  # now sRGB's profile
    assert samples.close(image.getpoint(2, 2), samples.RED, 40)


def test_damaged_profile_falls_back(tmp_path):
    image = samples.solid(4, 4, samples.BLUE).copy()
    image.set_type(pyvips.GValue.blob_type, "icc-profile-data", b"not a profile" * 20)
    out = to_srgb(image)
    assert samples.close(out.getpoint(0, 0), samples.BLUE, 1)
