"""Output geometry of a resize, with sharp's ``fit`` semantics; pure arithmetic, no pixels.

Per sharp (``api-resize``, ``ResolveShrink`` and ``CalculateCrop`` /
``CalculateEmbedPosition`` of its pipeline), with W x H the source and w x h
the target:

- ``cover``: scale by max(w/W, h/H) (fills both), crop the overflow around the centre.
- ``contain``: scale by min(w/W, h/H) (fits both), pad to w x h, image centred.
- ``fill``: scale each axis on its own to exactly w x h.
- ``inside``: scale by min(w/W, h/H); the result is at most w x h.
- ``outside``: scale by max(w/W, h/H); the result is at least w x h.

Scaled sides are rounded half up and never below 1. With one dimension given,
the other follows the aspect ratio whatever the fit (toolrun's rule: sharp's
``fill`` would leave the other side unchanged).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Fit = Literal["cover", "contain", "fill", "inside", "outside"]
FITS: tuple[Fit, ...] = ("cover", "contain", "fill", "inside", "outside")
Placement = Literal["none", "crop", "embed"]


@dataclass(frozen=True)
class ResizePlan:
    """Scale the source to ``scaled``; then crop or pad to ``width`` x ``height`` at (left, top).

    For ``crop``, (left, top) is the crop's corner in the scaled image; for
    ``embed``, the scaled image's corner on the canvas.
    """

    scaled_width: int
    scaled_height: int
    width: int
    height: int
    placement: Placement = "none"
    left: int = 0
    top: int = 0


def _side(value: float) -> int:
    return max(1, math.floor(value + 0.5))


def default_fit(width: int | None, height: int | None) -> Fit:
    """DESIGN §5: ``cover`` when both sides are given, else aspect-preserving (``inside``)."""
    return "cover" if width is not None and height is not None else "inside"


def plan_resize(
    source_width: int, source_height: int, width: int | None, height: int | None, fit: Fit
) -> ResizePlan:
    """Where a ``source_width`` x ``source_height`` image ends up; at least one side is given."""
    if width is None or height is None:
        return _plan_one_side(source_width, source_height, width, height)
    if fit == "fill":
        return ResizePlan(width, height, width, height)
    x_scale, y_scale = width / source_width, height / source_height
    grow = max(x_scale, y_scale) if fit in ("cover", "outside") else min(x_scale, y_scale)
    # The side whose ratio was chosen lands exactly on its target, free of float error.
    scaled_w = width if grow == x_scale else _side(source_width * grow)
    scaled_h = height if grow == y_scale else _side(source_height * grow)
    if fit == "cover":
        left = (scaled_w - width + 1) // 2
        top = (scaled_h - height + 1) // 2
        return ResizePlan(scaled_w, scaled_h, width, height, "crop", left, top)
    if fit == "contain":
        left = (width - scaled_w) // 2
        top = (height - scaled_h) // 2
        return ResizePlan(scaled_w, scaled_h, width, height, "embed", left, top)
    return ResizePlan(scaled_w, scaled_h, scaled_w, scaled_h)


def _plan_one_side(
    source_width: int, source_height: int, width: int | None, height: int | None
) -> ResizePlan:
    if width is not None:
        height = _side(source_height * width / source_width)
    elif height is not None:
        width = _side(source_width * height / source_height)
    else:
        raise ValueError("width or height is required")
    return ResizePlan(width, height, width, height)


def common_shrink(source_width: int, source_height: int, width: int, height: int) -> float:
    """The reduction both sides share when scaling to ``width`` x ``height`` (1 when enlarging)."""
    return max(1.0, min(source_width / width, source_height / height))


def jpeg_shrink_on_load(shrink: float) -> int:
    """The JPEG decode-time shrink (1, 2, 4 or 8) sharp picks for a ``common_shrink``.

    sharp (``fastShrinkOnLoad``) takes the largest factor not above the
    reduction, one step lower when the reduction's integer part is that factor
    (libjpeg's rounding would otherwise leave the result a pixel short).
    """
    factor = next((f for f in (8, 4, 2) if shrink >= f), 1)
    if factor > 1 and int(shrink) == factor:
        factor //= 2
    return factor
