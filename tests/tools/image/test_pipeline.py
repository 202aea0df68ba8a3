"""Every action end to end through ``process``: the file written is decoded back and checked."""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PIL import IcoImagePlugin
from pydantic import BaseModel, ValidationError

from tests.tools.image import samples
from toolrun.config import Settings
from toolrun.tools.image.errors import (
    DeadlinePassed,
    ImageCorrupt,
    ImageTooLarge,
    ImageUnsupported,
    RegionOutside,
)
from toolrun.tools.image.models import (
    CompressInput,
    ConvertInput,
    CropInput,
    IcoInput,
    ResizeInput,
)
from toolrun.tools.image.pipeline import process
from toolrun.tools.image.plans import WATCH_MIN_PIXELS
from toolrun.tools.image.vips import pyvips

FORMATS = ["png", "jpeg", "webp", "avif", "tiff"]
LOADERS = {
    "png": "pngload",
    "jpeg": "jpegload",
    "webp": "webpload",
    "avif": "heifload",
    "tiff": "tiffload",
}
MIMES = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "webp": "image/webp",
    "avif": "image/avif",
    "tiff": "image/tiff",
}

# (action, options for format fmt, expected size) for the 64x48 quadrants image
ACTIONS: dict[str, tuple[Callable[[Any], BaseModel], tuple[int, int]]] = {
    "convert": (lambda fmt: ConvertInput(taskId="t", format=fmt), (64, 48)),
    "compress": (lambda fmt: CompressInput(taskId="t", quality=70, format=fmt), (64, 48)),
    "resize": (lambda fmt: ResizeInput(taskId="t", width=40, height=30, format=fmt), (40, 30)),
    "crop": (
        lambda fmt: CropInput(taskId="t", left=4, top=4, width=20, height=10, format=fmt),
        (20, 10),
    ),
}


def decode(path: Path) -> Any:
    return pyvips.Image.new_from_file(str(path))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("action", list(ACTIONS))
async def test_every_action_in_every_format(
    quadrants_png, tmp_path, settings, deadline, action, fmt
):
    make_options, size = ACTIONS[action]
    dst = tmp_path / "out"
    out = await process(action, make_options(fmt), quadrants_png, dst, settings, deadline)
    image = decode(dst)
    assert image.get("vips-loader") == LOADERS[fmt]
    assert (image.width, image.height) == (out.width, out.height) == size
    assert (out.format, out.mime, out.size) == (fmt, MIMES[fmt], dst.stat().st_size)
    assert out.options["format"] == fmt
    lossy = fmt in ("jpeg", "webp", "avif") or action == "compress"
    tolerance = 60 if lossy else 0
    assert samples.close(image.getpoint(1, 1), samples.RED, tolerance)


@pytest.mark.parametrize(
    ("fit", "size"),
    [
        ("cover", (30, 30)),
        ("contain", (30, 30)),
        ("fill", (30, 30)),
        ("inside", (30, 23)),  # 64x48 -> 30x22.5, rounded up
        ("outside", (40, 30)),
    ],
)
async def test_resize_fits(quadrants_png, tmp_path, settings, deadline, fit, size):
    dst = tmp_path / "out.png"
    options = ResizeInput(taskId="t", width=30, height=30, fit=fit)
    out = await process("resize", options, quadrants_png, dst, settings, deadline)
    assert (decode(dst).width, decode(dst).height) == (out.width, out.height) == size
    assert out.options["fit"] == fit


@pytest.mark.parametrize(
    ("width", "height", "size"),
    [(32, None, (32, 24)), (None, 12, (16, 12)), (128, None, (128, 96))],
)
async def test_resize_one_side_keeps_aspect(
    quadrants_png, tmp_path, settings, deadline, width, height, size
):
    dst = tmp_path / "out.png"
    options = ResizeInput(taskId="t", width=width, height=height, fit="fill")
    out = await process("resize", options, quadrants_png, dst, settings, deadline)
    assert (out.width, out.height) == size


@pytest.mark.parametrize("suffix", [".jpg", ".webp"])
async def test_resize_with_shrink_on_load_is_exact(tmp_path, settings, deadline, suffix):
    src = tmp_path / f"big{suffix}"
    src.write_bytes(samples.encode(samples.quadrants(1001, 799), suffix))
    dst = tmp_path / "out"
    options = ResizeInput(taskId="t", width=101, height=77)  # about 10x: JPEG decodes at 1/8
    out = await process("resize", options, src, dst, settings, deadline)
    image = decode(dst)
    assert (image.width, image.height) == (out.width, out.height) == (101, 77)
    assert samples.close(image.getpoint(10, 10), samples.RED, 40)
    assert samples.close(image.getpoint(90, 70), samples.WHITE, 40)


async def test_contain_into_jpeg_pads_white(tmp_path, settings, deadline):
    src = tmp_path / "wide.png"
    samples.solid(80, 20, samples.BLUE).pngsave(str(src))
    dst = tmp_path / "out.jpg"
    options = ResizeInput(taskId="t", width=40, height=40, fit="contain", format="jpeg")
    out = await process("resize", options, src, dst, settings, deadline)
    assert samples.close(decode(dst).getpoint(20, 2), samples.WHITE, 8)
    assert samples.close(decode(dst).getpoint(20, 20), samples.BLUE, 30)
    assert out.options["background"] == "#FFFFFF"


async def test_contain_background_colour(tmp_path, settings, deadline):
    src = tmp_path / "wide.png"
    samples.solid(80, 20, samples.BLUE).pngsave(str(src))
    dst = tmp_path / "out.png"
    options = ResizeInput(taskId="t", width=40, height=40, fit="contain", background="f00")
    out = await process("resize", options, src, dst, settings, deadline)
    assert decode(dst).getpoint(20, 2) == [255, 0, 0]
    assert out.options["background"] == "#FF0000"


async def test_crop_is_pixel_exact(quadrants_png, tmp_path, settings, deadline):
    dst = tmp_path / "out.png"
    options = CropInput(taskId="t", left=31, top=23, width=2, height=2)
    await process("crop", options, quadrants_png, dst, settings, deadline)
    image = decode(dst)
    assert [image.getpoint(x, y) for y in (0, 1) for x in (0, 1)] == [
        list(samples.RED),
        list(samples.GREEN),
        list(samples.BLUE),
        list(samples.WHITE),
    ]


@pytest.mark.parametrize(
    "region", [(0, 0, 65, 48), (60, 0, 5, 5), (0, 47, 1, 2), (1000, 1000, 1, 1)]
)
async def test_crop_outside_fails_400(quadrants_png, tmp_path, settings, deadline, region):
    left, top, width, height = region
    options = CropInput(taskId="t", left=left, top=top, width=width, height=height)
    with pytest.raises(RegionOutside) as caught:
        await process("crop", options, quadrants_png, tmp_path / "o", settings, deadline)
    assert caught.value.code == 400


async def test_crop_uses_upright_coordinates(tmp_path, settings, deadline):
    src = tmp_path / "rot.jpg"
    samples.write_rotated_jpeg(src, 6)  # upright 20x40, red top half
    dst = tmp_path / "out.png"
    await process(
        "crop",
        CropInput(taskId="t", left=0, top=30, width=20, height=10),
        src,
        dst,
        settings,
        deadline,
    )
    assert samples.close(decode(dst).getpoint(10, 5), samples.BLUE, 40)


@pytest.mark.parametrize(
    "sizes", [[16], [16, 32, 48, 64, 128, 256], [16, 24, 32, 48, 64, 128, 256, 512], [512, 300, 17]]
)
async def test_ico_read_by_pillow(quadrants_png, tmp_path, settings, deadline, sizes):
    dst = tmp_path / "out.ico"
    out = await process(
        "ico", IcoInput(taskId="t", sizes=sizes), quadrants_png, dst, settings, deadline
    )
    assert (out.format, out.mime, out.extension) == ("ico", "image/x-icon", "ico")
    ico = IcoImagePlugin.IcoFile(io.BytesIO(dst.read_bytes()))
    assert {ico.frame(i).size for i in range(len(ico.entry))} == {(size, size) for size in sizes}
    if 256 in sizes or max(sizes) < 256:
        # Pillow opens the largest entry the directory declares; above 256 the directory can only
        # say 256, so without a real 256 entry Pillow warns that the size differs (and still reads).
        assert samples.pil_open(dst.read_bytes()).format == "ICO"
    assert out.options["sizes"] == sorted(set(sizes))


async def test_ico_default_sizes_and_square_padding(tmp_path, settings, deadline):
    src = tmp_path / "wide.png"
    samples.solid(64, 32, samples.RED).pngsave(str(src))
    dst = tmp_path / "out.ico"
    out = await process(
        "ico", IcoInput(taskId="t", background="#00f"), src, dst, settings, deadline
    )
    assert out.options == {"sizes": [16, 32, 48, 64, 128, 256], "background": "#0000FF"}
    icon = samples.pil_open(dst.read_bytes())
    largest = icon.ico.getimage((256, 256)).convert("RGBA")  # type: ignore[attr-defined]
    assert largest.getpixel((128, 10)) == (0, 0, 255, 255)
    assert largest.getpixel((128, 128)) == (255, 0, 0, 255)


# Difficult inputs


async def test_exif_orientation_applied(tmp_path, settings, deadline):
    src = tmp_path / "rot.jpg"
    samples.write_rotated_jpeg(src, 6)
    dst = tmp_path / "out.jpg"
    out = await process(
        "convert", ConvertInput(taskId="t", format="jpeg"), src, dst, settings, deadline
    )
    image = decode(dst)
    assert (image.width, image.height) == (out.width, out.height) == (20, 40)
    assert samples.close(image.getpoint(10, 5), samples.RED, 40)
    orientation = image.get("orientation") if image.get_typeof("orientation") else 1
    assert orientation == 1


async def test_cmyk_jpeg_converts_to_srgb(tmp_path, settings, deadline):
    src = tmp_path / "cmyk.jpg"
    samples.write_cmyk_jpeg(src)
    dst = tmp_path / "out.png"
    await process("convert", ConvertInput(taskId="t", format="png"), src, dst, settings, deadline)
    image = decode(dst)
    assert (image.interpretation, image.bands) == ("srgb", 3)
    red, green, blue = image.getpoint(4, 4)
    assert red > 200
    assert max(green, blue) < 90


async def test_icc_profile_kept_as_srgb(tmp_path, settings, deadline):
    src = tmp_path / "cmyk-icc.jpg"
    samples.solid(8, 8, samples.RED).icc_export(output_profile="cmyk").jpegsave(str(src))
    dst = tmp_path / "out.jpg"
    options = CompressInput(taskId="t", quality=90, stripMetadata=True)
    await process("compress", options, src, dst, settings, deadline)
    image = decode(dst)
    assert image.interpretation == "srgb"
    assert image.get_typeof("icc-profile-data") != 0
    assert samples.close(image.getpoint(4, 4), samples.RED, 40)


async def test_16bit_png(tmp_path, settings, deadline):
    src = tmp_path / "rgb16.png"
    samples.write_16bit_png(src)
    dst = tmp_path / "out.png"
    await process("resize", ResizeInput(taskId="t", width=12), src, dst, settings, deadline)
    image = decode(dst)
    assert image.format == "uchar"
    assert samples.close(image.getpoint(6, 6), (255, 128, 0), 1)


async def test_grey_input(tmp_path, settings, deadline):
    src = tmp_path / "grey.jpg"
    samples.write_grey_jpeg(src)
    dst = tmp_path / "out.webp"
    out = await process(
        "convert", ConvertInput(taskId="t", format="webp"), src, dst, settings, deadline
    )
    assert (out.width, out.height) == (16, 16)
    assert abs(decode(dst).getpoint(8, 8)[0] - 100) < 6


async def test_palette_png_keeps_transparency(tmp_path, settings, deadline):
    src = tmp_path / "pal.png"
    samples.write_palette_png(src)
    dst = tmp_path / "out.webp"
    await process(
        "convert",
        ConvertInput(taskId="t", format="webp", quality=100),
        src,
        dst,
        settings,
        deadline,
    )
    image = decode(dst)
    assert image.bands == 4
    assert image.getpoint(2, 5)[3] == 0
    assert samples.close(image.getpoint(15, 5), (*samples.RED, 255), 8)


async def test_alpha_into_jpeg_flattens_on_background(tmp_path, settings, deadline, alpha_png):
    white, green = tmp_path / "w.jpg", tmp_path / "g.jpg"
    out = await process(
        "convert", ConvertInput(taskId="t", format="jpeg"), alpha_png, white, settings, deadline
    )
    assert out.options["background"] == "#FFFFFF"
    options = ConvertInput(taskId="t", format="jpeg", background="#00ff00")
    await process("convert", options, alpha_png, green, settings, deadline)
    assert samples.close(decode(white).getpoint(35, 15), samples.WHITE, 8)
    assert samples.close(decode(green).getpoint(35, 15), samples.GREEN, 8)
    assert samples.close(decode(green).getpoint(5, 15), samples.RED, 30)


async def test_animated_gif_gives_first_frame_as_png(tmp_path, settings, deadline):
    src = tmp_path / "anim.gif"
    samples.write_animated_gif(src)
    dst = tmp_path / "out"
    out = await process("resize", ResizeInput(taskId="t", width=8), src, dst, settings, deadline)
    assert out.format == "png"  # GIF is not written: PNG by default
    image = decode(dst)
    assert image.get_typeof("n-pages") == 0 or image.get("n-pages") == 1
    assert samples.close(image.getpoint(4, 4), samples.RED, 10)


# compress


async def test_compress_keeps_smaller_original(tmp_path, settings, deadline):
    src = tmp_path / "small.jpg"
    samples.photo(120, 90).jpegsave(str(src), Q=20)
    dst = tmp_path / "out.jpg"
    options = CompressInput(taskId="t", quality=95)
    out = await process("compress", options, src, dst, settings, deadline)
    assert out.options["keptOriginal"] is True
    assert dst.read_bytes() == src.read_bytes()
    assert out.size == src.stat().st_size


async def test_compress_shrinks(photo_jpeg, tmp_path, settings, deadline):
    dst = tmp_path / "out.jpg"
    options = CompressInput(taskId="t", quality=30, maxWidth=60, stripMetadata=True)
    out = await process("compress", options, photo_jpeg, dst, settings, deadline)
    assert out.options["keptOriginal"] is False
    assert (out.width, out.height) == (60, 45)
    assert out.size < photo_jpeg.stat().st_size


async def test_compress_max_width_never_enlarges(photo_jpeg, tmp_path, settings, deadline):
    dst = tmp_path / "out.webp"
    options = CompressInput(taskId="t", quality=50, maxWidth=5000, format="webp")
    out = await process("compress", options, photo_jpeg, dst, settings, deadline)
    assert (out.width, out.height) == (120, 90)


async def test_strip_metadata_drops_exif(tmp_path, settings, deadline):
    src = tmp_path / "exif.jpg"
    image = samples.photo(32, 32).copy()
    image.set_type(pyvips.GValue.gstr_type, "exif-ifd0-Artist", "someone")
    image.jpegsave(str(src))
    kept, stripped = tmp_path / "k.jpg", tmp_path / "s.jpg"
    await process("compress", CompressInput(taskId="t", quality=50), src, kept, settings, deadline)
    options = CompressInput(taskId="t", quality=50, stripMetadata=True)
    await process("compress", options, src, stripped, settings, deadline)
    assert decode(kept).get_typeof("exif-data") != 0
    assert decode(stripped).get_typeof("exif-data") == 0


# refusals


async def test_truncated_file_fails_400(tmp_path, settings, deadline):
    data = samples.encode(samples.photo(300, 200), ".jpg")
    src = tmp_path / "cut.jpg"
    src.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(ImageCorrupt) as caught:
        await process(
            "convert",
            ConvertInput(taskId="t", format="png"),
            src,
            tmp_path / "o",
            settings,
            deadline,
        )
    assert caught.value.code == 400


@pytest.mark.parametrize("suffix", [".png", ".webp", ".tif", ".avif"])
async def test_truncated_formats_fail(tmp_path, settings, deadline, suffix):
    data = samples.encode(samples.photo(200, 150), suffix)
    src = tmp_path / f"cut{suffix}"
    src.write_bytes(data[: len(data) // 2])
    with pytest.raises((ImageCorrupt, ImageUnsupported)) as caught:
        await process(
            "convert",
            ConvertInput(taskId="t", format="jpeg"),
            src,
            tmp_path / "o",
            settings,
            deadline,
        )
    assert caught.value.code in (400, 415)


async def test_garbage_fails_415(tmp_path, settings, deadline):
    src = tmp_path / "junk.jpg"
    src.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(ImageUnsupported) as caught:
        await process(
            "convert",
            ConvertInput(taskId="t", format="png"),
            src,
            tmp_path / "o",
            settings,
            deadline,
        )
    assert caught.value.code == 415


async def test_declared_bomb_refused_before_decoding(tmp_path, settings, deadline):
    src = tmp_path / "bomb.png"
    src.write_bytes(samples.png_header_only(100_000, 100_000))
    with pytest.raises(ImageTooLarge) as caught:
        await process(
            "resize", ResizeInput(taskId="t", width=10), src, tmp_path / "o", settings, deadline
        )
    assert caught.value.code == 413


async def test_real_huge_png_refused_quickly(huge_png, tmp_path, settings, deadline):
    started = datetime.now(UTC)
    with pytest.raises(ImageTooLarge):
        await process(
            "resize",
            ResizeInput(taskId="t", width=10),
            huge_png,
            tmp_path / "o",
            settings,
            deadline,
        )
    assert datetime.now(UTC) - started < timedelta(seconds=1)


async def test_file_bytes_limit(photo_jpeg, tmp_path, deadline):
    settings = Settings(max_upload_bytes=100)
    with pytest.raises(ImageTooLarge):
        await process(
            "convert",
            ConvertInput(taskId="t", format="png"),
            photo_jpeg,
            tmp_path / "o",
            settings,
            deadline,
        )


@pytest.mark.parametrize(
    "options",
    [
        ResizeInput(taskId="t", width=60000, height=60000),
        ResizeInput(taskId="t", width=20000, height=10, fit="fill", format="webp"),
        ResizeInput(taskId="t", height=60000),  # width follows: 80000
        ResizeInput(taskId="t", width=1, height=20000, fit="cover"),  # 26667x20000 before the crop
    ],
)
async def test_output_over_limits_refused(quadrants_png, tmp_path, settings, deadline, options):
    with pytest.raises(ImageTooLarge) as caught:
        await process("resize", options, quadrants_png, tmp_path / "o", settings, deadline)
    assert caught.value.code == 413


def test_resize_beyond_max_edge_refused_by_schema():
    with pytest.raises(ValidationError):
        ResizeInput(taskId="t", width=100_000, height=100_000)


async def test_deadline_passed(quadrants_png, tmp_path, settings):
    past = datetime.now(UTC) - timedelta(seconds=1)
    with pytest.raises(DeadlinePassed) as caught:
        await process(
            "convert",
            ConvertInput(taskId="t", format="png"),
            quadrants_png,
            tmp_path / "o",
            settings,
            past,
        )
    assert caught.value.code == 504


async def test_deadline_stops_a_running_encode(tmp_path, settings, deadline):
    assert WATCH_MIN_PIXELS <= 4000 * 3000  # large enough to be watched while encoding
    noise = pyvips.Image.gaussnoise(4000, 3000, sigma=60).cast("uchar")
    src = tmp_path / "noise.jpg"
    noise.bandjoin([noise, noise]).copy(interpretation="srgb").jpegsave(str(src), Q=70)
    options = ConvertInput(taskId="t", format="png")
    started = datetime.now(UTC)
    await process("convert", options, src, tmp_path / "full.png", settings, deadline)
    full = datetime.now(UTC) - started
    started = datetime.now(UTC)
    soon = started + full / 5
    with pytest.raises(DeadlinePassed):
        await process("convert", options, src, tmp_path / "o.png", settings, soon)
    assert datetime.now(UTC) - started < full / 2
