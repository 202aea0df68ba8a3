"""Step: one multi-resolution ICO from square PNG images.

Every entry is PNG-compressed (read by Windows since Vista, all browsers and
Pillow). The ICO directory holds a size in one byte, so 256 and larger are
written as 0; readers take the real size from the PNG itself.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from toolrun.tools.image.colours import Rgba
from toolrun.tools.image.steps.background import as_colour, with_alpha
from toolrun.tools.image.steps.resize import scale_to
from toolrun.tools.image.vips import VipsImage

DEFAULT_SIZES = (16, 32, 48, 64, 128, 256)


def square(image: VipsImage, colour: Rgba) -> VipsImage:
    """Pad a non-square image to a centred square of ``colour`` (RGBA out)."""
    image = with_alpha(as_colour(image))
    side = max(image.width, image.height)
    if image.width == image.height:
        return image
    left, top = (side - image.width) // 2, (side - image.height) // 2
    return image.embed(left, top, side, side, extend="background", background=list(colour))


def icon_pngs(image: VipsImage, sizes: Sequence[int]) -> list[tuple[int, bytes]]:
    """PNG bytes of the square ``image`` scaled to each size, smallest first, sizes deduplicated."""
    # Scale once to the largest size and keep that in memory: every entry is made from it.
    largest = scale_to(image, max(sizes), max(sizes)).copy_memory()
    return [
        (size, bytes(scale_to(largest, size, size).pngsave_buffer(compression=9, keep="none")))
        for size in sorted(set(sizes))
    ]


def pack_ico(entries: Sequence[tuple[int, bytes]]) -> bytes:
    """The ICO container (ICONDIR, ICONDIRENTRYs, then the PNG data) for square PNG entries."""
    header = struct.pack("<HHH", 0, 1, len(entries))
    offset = len(header) + 16 * len(entries)
    directory, data = b"", b""
    for size, png in entries:
        side = size if size < 256 else 0
        directory += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset + len(data))
        data += png
    return header + directory + data
