"""Step: remove alpha for formats without it, painting the background colour beneath."""

from __future__ import annotations

from toolrun.tools.image.colours import Rgba
from toolrun.tools.image.vips import VipsImage


def as_colour(image: VipsImage) -> VipsImage:
    """Greyscale to sRGB, so a coloured background or padding can be painted."""
    if image.bands - int(image.hasalpha()) < 3:
        return image.colourspace("srgb")
    return image


def with_alpha(image: VipsImage) -> VipsImage:
    """The image with an alpha band (opaque where it had none)."""
    if image.hasalpha():
        return image
    return image.bandjoin_const([255])


def fill_values(image: VipsImage, colour: Rgba) -> list[int]:
    """``colour`` as one value per band of ``image`` (sRGB, with alpha when the image has it)."""
    return list(colour[: image.bands])


def flatten(image: VipsImage, colour: Rgba) -> VipsImage:
    """Composite an image with alpha over ``colour`` (its alpha is ignored); others unchanged."""
    if not image.hasalpha():
        return image
    image = as_colour(image)
    return image.flatten(background=list(colour[:3])).cast("uchar")
