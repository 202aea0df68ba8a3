"""Step: turn the image upright according to its EXIF orientation."""

from __future__ import annotations

from toolrun.tools.image.vips import VipsImage


def orient(image: VipsImage) -> VipsImage:
    """Rotate/flip by the ``orientation`` tag and drop the tag, so no viewer turns it twice."""
    return image.autorot()
