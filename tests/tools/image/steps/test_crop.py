from __future__ import annotations

import pytest

from tests.tools.image import samples
from toolrun.tools.image.errors import RegionOutside
from toolrun.tools.image.steps.crop import check_region, crop


def test_crop_is_pixel_exact():
    image = samples.quadrants(64, 48)  # quadrants meet at (32, 24)
    out = crop(image, 31, 23, 2, 2)
    assert out.getpoint(0, 0) == list(samples.RED)
    assert out.getpoint(1, 0) == list(samples.GREEN)
    assert out.getpoint(0, 1) == list(samples.BLUE)
    assert out.getpoint(1, 1) == list(samples.WHITE)


def test_crop_whole_image():
    out = crop(samples.quadrants(64, 48), 0, 0, 64, 48)
    assert (out.width, out.height) == (64, 48)


@pytest.mark.parametrize(
    "region", [(0, 0, 65, 48), (0, 0, 64, 49), (64, 0, 1, 1), (1, 47, 1, 2), (100, 100, 1, 1)]
)
def test_region_outside_is_refused(region):
    with pytest.raises(RegionOutside) as caught:
        check_region(64, 48, *region)
    assert caught.value.code == 400
    assert "64x48" in caught.value.message
