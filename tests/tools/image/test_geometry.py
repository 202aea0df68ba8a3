"""Output sizes of every fit mode, checked against sizes sharp 0.35.5 (libvips 8.18.7) produced.

``sharp_fit_dims.json`` rows are [W, H, width, height, fit, outWidth, outHeight],
made with ``sharp({create: {width: W, height: H, ...}}).resize(width, height, {fit})``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolrun.tools.image.geometry import (
    ResizePlan,
    common_shrink,
    jpeg_shrink_on_load,
    plan_resize,
)

SHARP_TABLE = json.loads((Path(__file__).parent / "sharp_fit_dims.json").read_text())


def test_sharp_table_covers_every_fit():
    assert {row[4] for row in SHARP_TABLE} == {"cover", "contain", "fill", "inside", "outside"}
    assert len(SHARP_TABLE) > 400


@pytest.mark.parametrize("row", SHARP_TABLE, ids=lambda row: "-".join(map(str, row[:5])))
def test_plan_matches_sharp_output_size(row):
    source_w, source_h, width, height, fit, out_w, out_h = row
    plan = plan_resize(source_w, source_h, width, height, fit)
    assert (plan.width, plan.height) == (out_w, out_h)


@pytest.mark.parametrize(
    ("source", "target", "fit", "expected"),
    [
        # 200x100 into 100x100: the documented behaviour of each fit
        ((200, 100), (100, 100), "cover", ResizePlan(200, 100, 100, 100, "crop", 50, 0)),
        ((200, 100), (100, 100), "contain", ResizePlan(100, 50, 100, 100, "embed", 0, 25)),
        ((200, 100), (100, 100), "fill", ResizePlan(100, 100, 100, 100)),
        ((200, 100), (100, 100), "inside", ResizePlan(100, 50, 100, 50)),
        ((200, 100), (100, 100), "outside", ResizePlan(200, 100, 200, 100)),
        # odd overflow: sharp's centre crop rounds the offset up, contain's padding down
        ((101, 37), (33, 17), "cover", ResizePlan(46, 17, 33, 17, "crop", 7, 0)),
        ((101, 37), (33, 17), "contain", ResizePlan(33, 12, 33, 17, "embed", 0, 2)),
        # one side: the other keeps the aspect ratio, whatever the fit
        ((3000, 2000), (1000, None), "fill", ResizePlan(1000, 667, 1000, 667)),
        ((3000, 2000), (None, 1000), "cover", ResizePlan(1500, 1000, 1500, 1000)),
        ((1, 10), (None, 3), "inside", ResizePlan(1, 3, 1, 3)),
    ],
)
def test_plan_resize(source, target, fit, expected):
    assert plan_resize(source[0], source[1], target[0], target[1], fit) == expected


def test_plan_resize_needs_a_side():
    with pytest.raises(ValueError, match="width or height"):
        plan_resize(10, 10, None, None, "cover")


@pytest.mark.parametrize(
    ("source", "scaled", "factor"),
    [
        ((2725, 2225), (720, 588), 2),  # 3.78x: decode at 1/2
        ((8000, 6000), (1000, 750), 4),  # exactly 8x: one step lower (libjpeg rounding)
        ((8000, 6000), (900, 675), 4),  # 8.9x: the integer part is 8, so 4
        ((10000, 7500), (1000, 750), 8),
        ((400, 300), (300, 225), 1),
        ((400, 300), (800, 600), 1),  # enlargement
        ((1000, 100), (100, 100), 1),  # fill: the smaller reduction decides
    ],
)
def test_jpeg_shrink_on_load(source, scaled, factor):
    assert jpeg_shrink_on_load(common_shrink(*source, *scaled)) == factor
