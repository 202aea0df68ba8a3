from __future__ import annotations

import io
import struct

from PIL import IcoImagePlugin

from tests.tools.image import samples
from toolrun.tools.image.steps.ico import icon_pngs, pack_ico, square


def test_square_pads_centred():
    out = square(samples.solid(40, 20, samples.RED), (0, 0, 255, 255))
    assert (out.width, out.height, out.bands) == (40, 40, 4)
    assert out.getpoint(20, 2) == [0, 0, 255, 255]
    assert out.getpoint(20, 20) == [255, 0, 0, 255]


def test_square_keeps_square_images():
    out = square(samples.solid(8, 8, samples.RED), (0, 0, 0, 0))
    assert (out.width, out.height, out.bands) == (8, 8, 4)


def test_pack_ico_directory():
    entries = icon_pngs(square(samples.quadrants(64, 48), (0, 0, 0, 0)), [48, 16, 512, 16, 256])
    assert [size for size, _ in entries] == [16, 48, 256, 512]
    data = pack_ico(entries)
    assert struct.unpack("<HHH", data[:6]) == (0, 1, 4)
    widths = [data[6 + 16 * i] for i in range(4)]
    assert widths == [16, 48, 0, 0]  # 256 and above are written as 0
    ico = IcoImagePlugin.IcoFile(io.BytesIO(data))
    assert {ico.frame(i).size for i in range(len(ico.entry))} == {
        (s, s) for s in (16, 48, 256, 512)
    }
    for index, (_, png) in enumerate(entries):
        entry = struct.unpack("<BBBBHHII", data[6 + 16 * index : 22 + 16 * index])
        length, offset = entry[6], entry[7]
        assert data[offset : offset + length] == png
        assert png.startswith(b"\x89PNG")
