from __future__ import annotations

import pytest

from tests.tools.image import samples
from toolrun.tools.image.steps.orient import orient
from toolrun.tools.image.vips import pyvips

# Stored 40x20: red left half, blue right half. Where the red half is once upright:
RED_AT = {
    1: ((40, 20), (5, 10)),
    3: ((40, 20), (35, 10)),  # turned 180 degrees
    6: ((20, 40), (10, 5)),  # 90 clockwise: the left half goes to the top
    8: ((20, 40), (10, 35)),  # 90 anticlockwise: the left half goes to the bottom
}


@pytest.mark.parametrize(("orientation", "expected"), RED_AT.items())
def test_orient_turns_upright_and_drops_tag(tmp_path, orientation, expected):
    path = tmp_path / "rot.jpg"
    samples.write_rotated_jpeg(path, orientation)
    image = orient(pyvips.Image.new_from_file(str(path)))
    size, red = expected
    assert (image.width, image.height) == size
    assert samples.close(image.getpoint(*red), samples.RED, 40)
    out = tmp_path / "out.jpg"
    image.jpegsave(str(out))
    reread = pyvips.Image.new_from_file(str(out))
    assert reread.get("orientation") == 1 if reread.get_typeof("orientation") else True
