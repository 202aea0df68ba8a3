"""Step: bring any input to 8-bit sRGB (or 8-bit greyscale), the space every output is written in.

An embedded ICC profile is honoured (CMYK, wide-gamut RGB, grey profiles) and
replaced by sRGB's; without a profile libvips' own conversions are used (its
built-in CMYK profile for CMYK). 16-bit inputs become 8-bit.
"""

from __future__ import annotations

from toolrun.tools.image.vips import VipsError, VipsImage

_GREY = ("b-w", "grey16")
_READY = ("srgb", "b-w")


def _has_profile(image: VipsImage) -> bool:
    return bool(image.get_typeof("icc-profile-data") != 0)


def _without_profile(image: VipsImage) -> VipsImage:
    image = image.copy()
    image.remove("icc-profile-data")
    return image


def to_srgb(image: VipsImage) -> VipsImage:
    """The image as 8-bit sRGB, or 8-bit greyscale for grey inputs without a profile."""
    if _has_profile(image):
        try:
            return image.icc_transform("srgb", embedded=True, intent="perceptual", depth=8)
        except VipsError:
            image = _without_profile(image)  # a damaged profile: convert as if there were none
    interpretation = str(image.interpretation)
    if interpretation in _READY and image.format == "uchar":
        return image
    target = "b-w" if interpretation in _GREY else "srgb"
    try:
        return image.colourspace(target)
    except VipsError:
        # an interpretation libvips cannot convert (multiband, fourier ...): keep the numbers
        return image.cast("uchar").copy(interpretation=target)
