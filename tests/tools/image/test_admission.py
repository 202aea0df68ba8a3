"""Output limits at job creation: from the request alone, and from the upload's recorded size,
in agreement with the worker's plans (what creation accepts, the plan accepts too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from toolrun.config import Settings
from toolrun.tools.base import InputRejected
from toolrun.tools.image.admission import SourceSize, check_request, check_source
from toolrun.tools.image.errors import ImageTooLarge
from toolrun.tools.image.models import CompressInput, ConvertInput, CropInput, ResizeInput
from toolrun.tools.image.plans import build
from toolrun.tools.image.vips import ImageInfo

SETTINGS = Settings(_env_file=None)
MODELS: dict[str, type[BaseModel]] = {
    "convert": ConvertInput,
    "compress": CompressInput,
    "resize": ResizeInput,
    "crop": CropInput,
}


def options(action: str, **fields: Any) -> BaseModel:
    return MODELS[action].model_validate({"taskId": "t", **fields})


def info(width: int, height: int, fmt: str = "png") -> ImageInfo:
    return ImageInfo(
        format=fmt, mime=f"image/{fmt}", width=width, height=height, pages=1, has_alpha=False,
        interpretation="srgb", bands=3, bits=8, orientation=1, has_icc=False,
        loader=f"{fmt}load", stored_width=width, stored_height=height,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("action", "fields", "field"),
    [
        ("resize", {"width": 16384, "format": "webp"}, "width"),
        ("resize", {"height": 16384, "format": "webp"}, "height"),
        ("resize", {"width": 100, "height": 16384, "format": "webp"}, "height"),
        ("resize", {"width": 16384, "height": 100, "fit": "outside", "format": "webp"}, "width"),
        ("resize", {"width": 16384, "height": 16384, "fit": "inside", "format": "webp"}, "width"),
        ("resize", {"width": 10001, "height": 10000}, "width"),  # over 100 megapixels
        ("crop", {"left": 0, "top": 0, "width": 16384, "height": 1, "format": "webp"}, "width"),
        ("crop", {"left": 0, "top": 0, "width": 1, "height": 65536}, "height"),
    ],
)
def test_request_alone_over_the_limits(action: str, fields: dict[str, Any], field: str) -> None:
    with pytest.raises(InputRejected) as raised:
        check_request(options(action, **fields), SETTINGS)
    assert raised.value.field == field
    assert raised.value.message.startswith(f"{field}: ")


@pytest.mark.parametrize(
    ("action", "fields"),
    [
        ("resize", {"width": 16383, "format": "webp"}),
        ("resize", {"width": 16384, "height": 100, "fit": "inside", "format": "webp"}),
        ("resize", {"width": 20000}),  # PNG, or the source's format: decided by the source
        ("resize", {"width": 10000, "height": 10000}),
        ("crop", {"left": 0, "top": 0, "width": 16383, "height": 6000, "format": "webp"}),
        ("convert", {"format": "webp"}),
        ("compress", {"quality": 50, "format": "webp"}),
    ],
)
def test_request_alone_within_the_limits(action: str, fields: dict[str, Any]) -> None:
    check_request(options(action, **fields), SETTINGS)


@pytest.mark.parametrize(
    ("source", "action", "fields", "field"),
    [
        ((20000, 30), "convert", {"format": "webp"}, "format"),
        ((30, 20000), "convert", {"format": "webp"}, "format"),
        ((20000, 30), "convert", {"format": "png"}, None),
        ((20000, 30), "compress", {"quality": 60, "format": "webp"}, "format"),
        ((20000, 30), "compress", {"quality": 60, "format": "webp", "maxWidth": 16383}, None),
        ((20000, 30), "compress", {"quality": 60}, None),  # stays PNG
        ((30, 20000), "compress", {"quality": 60, "format": "webp", "maxWidth": 20}, None),
        ((20000, 30), "resize", {"width": 16000, "format": "webp"}, None),
        ((20000, 30), "resize", {"height": 60, "format": "webp"}, "height"),
        ((30, 20000), "resize", {"width": 60, "format": "webp"}, "width"),
        ((20000, 30), "resize", {"width": 100, "height": 100}, "width"),  # scaled to 66667x100
        ((20000, 30), "resize", {"width": 100, "height": 100, "fit": "inside"}, None),
        ((100, 10), "resize", {"width": 65535, "height": 10}, "width"),  # cover's intermediate
        ((100, 10), "resize", {"width": 65535, "height": 10, "fit": "contain"}, None),
        ((100, 100), "resize", {"width": 20000, "fit": "outside"}, "width"),  # 400 megapixels
        ((100, 100), "resize", {"width": 10000, "fit": "outside"}, None),
        ((10, 100), "resize", {"width": 1000, "format": "webp"}, None),
        ((10, 100), "resize", {"width": 2000, "format": "webp"}, "width"),  # 2000x20000
        ((10, 100), "resize", {"width": 2000, "height": 1, "fit": "outside"}, None),
        ((100, 10), "resize", {"width": 4000, "height": 200, "fit": "outside"}, None),
        (
            (10, 10000),
            "resize",
            {"width": 100, "height": 100, "fit": "outside", "format": "webp"},
            "height",  # 100x100000
        ),
        ((100, 10), "resize", {"width": 4000, "height": 4000, "fit": "outside"}, "width"),
        ((3000, 3000), "crop", {"left": 0, "top": 0, "width": 3000, "height": 3000}, None),
    ],
)
def test_source_checks_agree_with_the_plan(
    tmp_path: Path,
    source: tuple[int, int],
    action: str,
    fields: dict[str, Any],
    field: str | None,
) -> None:
    request = options(action, **fields)
    check_request(request, SETTINGS)
    size = SourceSize(*source, "png")
    if field is None:
        check_source(request, size, SETTINGS)
        build(action, request, info(*source), SETTINGS, tmp_path / "out")
        return
    with pytest.raises(InputRejected) as raised:
        check_source(request, size, SETTINGS)
    assert raised.value.field == field
    with pytest.raises(ImageTooLarge):  # the worker refuses it as well
        build(action, request, info(*source), SETTINGS, tmp_path / "out")


@pytest.mark.parametrize(
    ("width", "height", "mime", "expected"),
    [
        (10, 20, "image/png", SourceSize(10, 20, "png")),
        (10, 20, "image/jpeg", SourceSize(10, 20, "jpeg")),
        (None, 20, "image/png", None),
        (10, 20, "image/x-icon", None),  # a generated ICO: the worker decides
    ],
)
def test_source_size_of_an_asset_row(
    width: int | None, height: int | None, mime: str, expected: SourceSize | None
) -> None:
    assert SourceSize.of(width, height, mime) == expected
