from __future__ import annotations

import pytest

from toolrun.tools.image.colours import format_background, normalize_background, parse_background


@pytest.mark.parametrize(
    ("value", "normalized", "rgba"),
    [
        ("#FFF", "#FFFFFF", (255, 255, 255, 255)),
        ("fff", "#FFFFFF", (255, 255, 255, 255)),
        ("#0f08", "#00FF0088", (0, 255, 0, 136)),
        ("#1a2B3c", "#1A2B3C", (26, 43, 60, 255)),
        ("1A2B3C00", "#1A2B3C00", (26, 43, 60, 0)),
    ],
)
def test_background_forms(value, normalized, rgba):
    assert normalize_background(value) == normalized
    assert parse_background(value) == rgba


@pytest.mark.parametrize("value", ["", "#", "#ff", "#fffff", "#ggg", "red", "##fff", "#fffffffff"])
def test_background_rejects_malformed(value):
    with pytest.raises(ValueError, match="hex colour"):
        normalize_background(value)


def test_format_background_drops_opaque_alpha():
    assert format_background((1, 2, 3, 255)) == "#010203"
    assert format_background((1, 2, 3, 0)) == "#01020300"
