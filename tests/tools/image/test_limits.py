from __future__ import annotations

import pytest

from tests.tools.image import samples
from toolrun.config import Settings
from toolrun.tools.image.errors import ImageTooLarge
from toolrun.tools.image.limits import MAX_OUTPUT_EDGE, check_file_size, check_output, check_source
from toolrun.tools.image.vips import probe


def test_file_size_limit(tmp_path):
    path = tmp_path / "a.png"
    path.write_bytes(samples.encode(samples.quadrants(30, 20), ".png"))
    size = path.stat().st_size
    assert check_file_size(path, Settings(max_upload_bytes=size)) == size
    with pytest.raises(ImageTooLarge) as caught:
        check_file_size(path, Settings(max_upload_bytes=size - 1))
    assert caught.value.code == 413


def test_pixel_limit_from_header(tmp_path):
    path = tmp_path / "bomb.png"
    path.write_bytes(samples.png_header_only(100_000, 100_000))
    with pytest.raises(ImageTooLarge, match="10000000000 pixels"):
        check_source(probe(path), Settings())


def test_real_huge_png_over_default_limit(huge_png):
    with pytest.raises(ImageTooLarge):
        check_source(probe(huge_png), Settings())
    check_source(probe(huge_png), Settings(max_image_pixels=400_000_000))


@pytest.mark.parametrize(
    ("width", "height", "fmt", "allowed"),
    [
        (16383, 100, "webp", True),
        (16384, 100, "webp", False),
        (20000, 100, "png", True),
        (MAX_OUTPUT_EDGE + 1, 1, "png", False),
        (10_000, 10_001, "jpeg", False),  # over 100 megapixels
        (10_000, 10_000, "jpeg", True),
        (513, 513, "ico", False),
    ],
)
def test_output_limits(width, height, fmt, allowed):
    if allowed:
        check_output(width, height, Settings(), fmt)
    else:
        with pytest.raises(ImageTooLarge):
            check_output(width, height, Settings(), fmt)
