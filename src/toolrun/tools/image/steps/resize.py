"""Step: scale to a ``ResizePlan``, then crop (cover) or pad (contain) to the target canvas."""

from __future__ import annotations

from toolrun.tools.image.colours import Rgba
from toolrun.tools.image.geometry import ResizePlan
from toolrun.tools.image.steps.background import as_colour, fill_values, with_alpha
from toolrun.tools.image.vips import VipsImage

KERNEL = "lanczos3"  # sharp's default


def scale_to(image: VipsImage, width: int, height: int) -> VipsImage:
    """Exactly ``width`` x ``height``; alpha is premultiplied so edges do not bleed dark."""
    if (image.width, image.height) == (width, height):
        return image
    alpha = bool(image.hasalpha())
    if alpha:
        image = image.premultiply()
    image = image.resize(width / image.width, vscale=height / image.height, kernel=KERNEL)
    if alpha:
        image = image.unpremultiply().cast("uchar")
    if (image.width, image.height) != (width, height):  # float rounding: at most a pixel off
        image = image.gravity("centre", width, height, extend="copy")
    return image


def pad(image: VipsImage, width: int, height: int, left: int, top: int, colour: Rgba) -> VipsImage:
    """Place ``image`` at (left, top) on a ``width`` x ``height`` canvas of ``colour``."""
    image = as_colour(image)
    if colour[3] < 255:
        image = with_alpha(image)
    return image.embed(
        left, top, width, height, extend="background", background=fill_values(image, colour)
    )


def apply_plan(image: VipsImage, plan: ResizePlan, padding: Rgba) -> VipsImage:
    """Scale to the plan's scaled size, then crop or pad to its canvas."""
    image = scale_to(image, plan.scaled_width, plan.scaled_height)
    if plan.placement == "crop":
        return image.extract_area(plan.left, plan.top, plan.width, plan.height)
    if plan.placement == "embed":
        return pad(image, plan.width, plan.height, plan.left, plan.top, padding)
    return image
