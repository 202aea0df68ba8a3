"""Background colours: ``#RGB``, ``#RGBA``, ``#RRGGBB`` or ``#RRGGBBAA``, ``#`` optional, any case."""

from __future__ import annotations

import re

BACKGROUND_PATTERN = r"^#?([0-9A-Fa-f]{3}|[0-9A-Fa-f]{4}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$"
_BACKGROUND = re.compile(BACKGROUND_PATTERN)

Rgba = tuple[int, int, int, int]

WHITE: Rgba = (255, 255, 255, 255)
TRANSPARENT: Rgba = (0, 0, 0, 0)


def normalize_background(value: str) -> str:
    """``"fff"`` -> ``"#FFFFFF"``, ``"#0f08"`` -> ``"#00FF0088"``; ValueError if malformed."""
    if not _BACKGROUND.match(value):
        raise ValueError("must be a hex colour: #RGB, #RGBA, #RRGGBB or #RRGGBBAA")
    digits = value.removeprefix("#").upper()
    if len(digits) in (3, 4):
        digits = "".join(digit * 2 for digit in digits)
    return "#" + digits


def parse_background(value: str) -> Rgba:
    """The colour as (red, green, blue, alpha), each 0-255; alpha 255 when not given."""
    digits = normalize_background(value)[1:]
    if len(digits) == 6:
        digits += "FF"
    red, green, blue, alpha = (int(digits[i : i + 2], 16) for i in range(0, 8, 2))
    return red, green, blue, alpha


def format_background(colour: Rgba) -> str:
    """(r, g, b, a) -> ``#RRGGBB`` when opaque, else ``#RRGGBBAA``."""
    text = "#" + "".join(f"{channel:02X}" for channel in colour)
    return text[:7] if colour[3] == 255 else text
