from __future__ import annotations

import pytest

from tests.tools.image import samples
from toolrun.tools.image.geometry import plan_resize
from toolrun.tools.image.steps.resize import apply_plan, pad, scale_to

TRANSPARENT = (0, 0, 0, 0)


@pytest.mark.parametrize("fit", ["cover", "contain", "fill", "inside", "outside"])
@pytest.mark.parametrize(("width", "height"), [(30, 30), (50, 10), (7, 90), (200, 150)])
def test_apply_plan_produces_planned_size(fit, width, height):
    image = samples.quadrants(64, 48)
    plan = plan_resize(64, 48, width, height, fit)
    out = apply_plan(image, plan, TRANSPARENT)
    assert (out.width, out.height) == (plan.width, plan.height)


def test_cover_crops_the_centre():
    image = samples.quadrants(200, 100)  # into 100x100: keep the middle 100 columns
    out = apply_plan(image, plan_resize(200, 100, 100, 100, "cover"), TRANSPARENT)
    assert samples.close(out.getpoint(10, 10), samples.RED)
    assert samples.close(out.getpoint(90, 10), samples.GREEN)


def test_contain_pads_with_background():
    image = samples.solid(200, 100, samples.BLUE)
    out = apply_plan(image, plan_resize(200, 100, 100, 100, "contain"), (255, 255, 0, 255))
    assert out.bands == 3
    assert out.getpoint(50, 5) == [255, 255, 0]  # padding above
    assert samples.close(out.getpoint(50, 50), samples.BLUE)


def test_contain_transparent_padding_adds_alpha():
    out = apply_plan(
        samples.solid(20, 10, samples.BLUE), plan_resize(20, 10, 10, 10, "contain"), TRANSPARENT
    )
    assert out.bands == 4
    assert out.getpoint(5, 0)[3] == 0
    assert out.getpoint(5, 5)[3] == 255


def test_alpha_edges_do_not_darken():
    # half transparent black, half opaque white: premultiplied scaling keeps white white
    image = samples.solid(40, 40, (0, 0, 0, 0)).draw_rect(
        [255, 255, 255, 255], 20, 0, 20, 40, fill=True
    )
    out = scale_to(image, 10, 10)
    red, green, blue, alpha = out.getpoint(5, 5)
    assert 0 < alpha < 255
    assert min(red, green, blue) > 240


def test_pad_offsets():
    out = pad(samples.solid(2, 2, samples.RED), 6, 4, 3, 1, (0, 0, 255, 255))
    assert out.getpoint(3, 1) == [255, 0, 0]
    assert out.getpoint(2, 1) == [0, 0, 255]
