from __future__ import annotations

from tests.tools.image import samples
from toolrun.tools.image.steps.background import as_colour, flatten, with_alpha
from toolrun.tools.image.vips import pyvips


def test_flatten_paints_background_under_transparency():
    image = samples.solid(4, 4, (0, 0, 0, 0)).draw_rect([0, 255, 0, 255], 0, 0, 2, 4, fill=True)
    out = flatten(image, (255, 0, 0, 255))
    assert out.bands == 3
    assert out.getpoint(0, 0) == [0, 255, 0]
    assert out.getpoint(3, 0) == [255, 0, 0]


def test_flatten_leaves_opaque_images():
    image = samples.solid(2, 2, samples.BLUE)
    assert flatten(image, (255, 255, 255, 255)) is image


def test_flatten_grey_alpha_onto_colour():
    grey_alpha = pyvips.Image.black(2, 2, bands=2).copy(interpretation="b-w")  # fully transparent
    out = flatten(grey_alpha, (255, 0, 0, 255))
    assert out.getpoint(0, 0) == [255, 0, 0]


def test_with_alpha_and_as_colour():
    image = samples.solid(2, 2, samples.BLUE)
    assert with_alpha(image).getpoint(0, 0) == [0, 0, 255, 255]
    grey = pyvips.Image.black(2, 2).copy(interpretation="b-w")
    assert as_colour(grey).bands == 3
