from __future__ import annotations

import pytest
from pydantic import ValidationError

from toolrun.tools.image.models import (
    CompressInput,
    ConvertInput,
    CropInput,
    IcoInput,
    ResizeInput,
)


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (ConvertInput, {"taskId": "t"}),  # format required
        (ConvertInput, {"taskId": "t", "format": "gif"}),
        (ConvertInput, {"taskId": "t", "format": "JPEG"}),
        (ConvertInput, {"taskId": "t", "format": "png", "quality": 0}),
        (ConvertInput, {"taskId": "t", "format": "png", "quality": 101}),
        (ConvertInput, {"taskId": "t", "format": "png", "quality": 50.5}),
        (ConvertInput, {"taskId": "t", "format": "png", "background": "#ggg"}),
        (ConvertInput, {"taskId": "t", "format": "png", "background": "#12345"}),
        (ConvertInput, {"taskId": "t", "format": "png", "colour": "#fff"}),  # unknown field
        (ConvertInput, {"taskId": "", "format": "png"}),
        (CompressInput, {"taskId": "t"}),  # quality required
        (CompressInput, {"taskId": "t", "quality": 50, "maxWidth": 0}),
        (ResizeInput, {"taskId": "t"}),  # no side
        (ResizeInput, {"taskId": "t", "width": 0}),
        (ResizeInput, {"taskId": "t", "width": 10, "fit": "stretch"}),
        (ResizeInput, {"taskId": "t", "width": 100_000, "height": 100_000}),
        (CropInput, {"taskId": "t", "left": 0, "top": 0, "width": 10}),  # height required
        (CropInput, {"taskId": "t", "left": -1, "top": 0, "width": 10, "height": 10}),
        (CropInput, {"taskId": "t", "left": 0, "top": 0, "width": 0, "height": 10}),
        (IcoInput, {"taskId": "t", "sizes": []}),
        (IcoInput, {"taskId": "t", "sizes": [15]}),
        (IcoInput, {"taskId": "t", "sizes": [16, 513]}),
    ],
)
def test_invalid_input_rejected(model, data):
    with pytest.raises(ValidationError):
        model.model_validate(data)


@pytest.mark.parametrize(
    ("value", "stored"),
    [("#FFF", "#FFFFFF"), ("fff", "#FFFFFF"), ("#abcd", "#AABBCCDD"), ("12345678", "#12345678")],
)
def test_background_any_case_stored_normalised(value, stored):
    model = ConvertInput.model_validate({"taskId": "t", "format": "png", "background": value})
    assert model.background == stored


def test_defaults():
    assert IcoInput(taskId="t").sizes == [16, 32, 48, 64, 128, 256]
    compress = CompressInput(taskId="t", quality=60)
    assert (compress.format, compress.maxWidth, compress.stripMetadata) == (None, None, False)
    assert ResizeInput(taskId="t", height=5).fit is None


def test_json_schema_names_spec_fields():
    schema = CropInput.model_json_schema()
    assert set(schema["required"]) == {"taskId", "left", "top", "width", "height"}
    background = ConvertInput.model_json_schema()["properties"]["background"]["anyOf"][0]
    assert background["pattern"].startswith("^#?([0-9A-Fa-f]{3}")
    assert ConvertInput.model_json_schema()["properties"]["format"]["enum"] == [
        "png",
        "jpeg",
        "webp",
        "avif",
        "tiff",
    ]
