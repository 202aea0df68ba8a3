"""Step: cut a pixel-exact region out of the upright image."""

from __future__ import annotations

from toolrun.tools.image.errors import RegionOutside
from toolrun.tools.image.vips import VipsImage


def check_region(
    image_width: int, image_height: int, left: int, top: int, width: int, height: int
) -> None:
    """RegionOutside (400) unless the region lies wholly inside the image."""
    if left + width > image_width or top + height > image_height:
        raise RegionOutside(
            f"the crop region {width}x{height} at ({left}, {top}) lies outside "
            f"the {image_width}x{image_height} image"
        )


def crop(image: VipsImage, left: int, top: int, width: int, height: int) -> VipsImage:
    """The ``width`` x ``height`` region whose top-left pixel is (left, top)."""
    check_region(image.width, image.height, left, top, width, height)
    return image.extract_area(left, top, width, height)
