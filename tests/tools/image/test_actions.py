"""The five ToolDefinitions' ``run`` against an in-test asset gateway over a temporary directory."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from toolrun.tools.base import ToolContext, ToolFailure
from toolrun.tools.image import DEFINITIONS
from toolrun.tools.image.actions import output_file_name
from toolrun.tools.image.assets import ImageAssets, SourceImage
from toolrun.tools.image.models import ImageJobResult
from toolrun.tools.image.pipeline import OutputInfo
from toolrun.tools.image.vips import pyvips
from toolrun.tools.registry import Registry


class DirectoryAssets:
    """Uploads and generated assets as files in one directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.uploads: dict[str, SourceImage] = {}
        self.saved_from: list[Path] = []

    def upload(self, task_id: str, path: Path, file_name: str) -> None:
        self.uploads[task_id] = SourceImage(path, file_name, "application/octet-stream")

    @asynccontextmanager
    async def source(self, task_id: str) -> AsyncIterator[SourceImage]:
        if task_id not in self.uploads:
            raise ToolFailure(400, "the source image does not exist or has expired")
        yield self.uploads[task_id]

    async def save_generated(
        self,
        *,
        source_task_id: str,
        path: Path,
        file_name: str,
        mime_type: str,
        extension: str,
        width: int,
        height: int,
    ) -> dict[str, Any]:
        task_id = f"gen{len(self.saved_from)}"
        stored = self.root / f"{task_id}.{extension}"
        shutil.copyfile(path, stored)
        self.saved_from.append(path)
        now = datetime.now(UTC)
        return {
            "taskId": task_id,
            "kind": "generated",
            "fileName": file_name,
            "mimeType": mime_type,
            "extension": extension,
            "size": stored.stat().st_size,
            "fileSize": stored.stat().st_size,
            "createdAt": now,
            "expiresAt": now + timedelta(days=1),
            "width": width,
            "height": height,
            "downloadPath": f"/openapi/uploads/tasks/{task_id}/file?download=1",
            "previewPath": f"/openapi/uploads/tasks/{task_id}/file",
        }


@pytest.fixture
def assets(tmp_path, quadrants_png) -> DirectoryAssets:
    gateway = DirectoryAssets(tmp_path)
    gateway.upload("upl_1", quadrants_png, "Holiday photo.PNG")
    return gateway


@pytest.fixture
def ctx(settings, deadline, assets) -> ToolContext:
    return ToolContext(
        settings=settings,
        job_id="job_1",
        account_id="acc_1",
        deadline_at=deadline,
        services={"assets": assets},
    )


def test_gateway_satisfies_protocol(assets):
    gateway: ImageAssets = assets
    assert gateway is assets


def test_definitions_register():
    registry = Registry(DEFINITIONS)
    assert [d.slug for d in registry] == [
        "image-convert",
        "image-compress",
        "image-resize",
        "image-crop",
        "image-ico",
    ]
    for definition in DEFINITIONS:
        assert (definition.kind, definition.category) == ("image", "image")
        assert definition.path == f"/openapi/image-tools/{definition.action}"
        assert definition.output_model is ImageJobResult
        definition.input_model.model_validate(definition.example)
        assert registry.by_action("image", definition.action) is definition


BY_ACTION = {d.action: d for d in DEFINITIONS}

CASES = [
    ("convert", {"format": "webp"}, "Holiday photo.webp", "image/webp", (64, 48)),
    (
        "compress",
        {"quality": 60, "format": "jpeg"},
        "Holiday photo-compressed.jpg",
        "image/jpeg",
        (64, 48),
    ),
    ("resize", {"width": 32}, "Holiday photo-32x24.png", "image/png", (32, 24)),
    (
        "crop",
        {"left": 0, "top": 0, "width": 10, "height": 8, "format": "avif"},
        "Holiday photo-cropped.avif",
        "image/avif",
        (10, 8),
    ),
    ("ico", {"sizes": [16, 32]}, "Holiday photo.ico", "image/x-icon", (32, 32)),
]


@pytest.mark.parametrize(("action", "fields", "file_name", "mime", "size"), CASES)
async def test_run_stores_generated_asset(
    assets, ctx, tmp_path, action, fields, file_name, mime, size
):
    definition = BY_ACTION[action]
    payload = definition.input_model.model_validate({"taskId": "upl_1", **fields})
    result = await definition.run(payload, ctx)
    assert isinstance(result, ImageJobResult)
    assert (result.kind, result.sourceTaskId, result.fileName, result.mimeType) == (
        "generated",
        "upl_1",
        file_name,
        mime,
    )
    assert (result.width, result.height) == size
    stored = tmp_path / f"{result.taskId}.{result.extension}"
    assert result.size == stored.stat().st_size
    if action != "ico":
        image = pyvips.Image.new_from_file(str(stored))
        assert (image.width, image.height) == size
    for key in fields:
        if key != "taskId":
            assert key in result.options
    assert not assets.saved_from[0].exists()  # the temporary output is gone
    dumped = result.model_dump(mode="json")
    assert dumped["options"] == result.options


async def test_run_failures_carry_codes(assets, ctx, tmp_path):
    crop = BY_ACTION["crop"]
    payload = crop.input_model.model_validate(
        {"taskId": "upl_1", "left": 60, "top": 0, "width": 10, "height": 10}
    )
    with pytest.raises(ToolFailure) as caught:
        await crop.run(payload, ctx)
    assert caught.value.code == 400
    junk = tmp_path / "junk"
    junk.write_bytes(b"not an image at all")
    assets.upload("upl_2", junk, "junk.png")
    convert = BY_ACTION["convert"]
    with pytest.raises(ToolFailure) as caught:
        await convert.run(
            convert.input_model.model_validate({"taskId": "upl_2", "format": "png"}), ctx
        )
    assert caught.value.code == 415
    with pytest.raises(ToolFailure) as caught:
        await convert.run(
            convert.input_model.model_validate({"taskId": "nope", "format": "png"}), ctx
        )
    assert caught.value.code == 400


@pytest.mark.parametrize(
    ("source", "action", "expected"),
    [
        ("a.png", "convert", "a.webp"),
        ("dir/../b.tar.png", "resize", "b.tar-10x20.webp"),
        ("", "crop", "image-cropped.webp"),
        (".png", "convert", ".png.webp"),
    ],
)
def test_output_file_name(source, action, expected):
    output = OutputInfo("webp", "image/webp", "webp", 10, 20, 1, {})
    assert output_file_name(source, action, output) == expected
