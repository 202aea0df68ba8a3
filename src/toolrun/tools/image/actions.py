"""The five image actions of the catalog: convert, compress, resize, crop and ico.

Each ``run`` fetches the source through the ``ImageAssets`` gateway in
``ctx.services["assets"]``, processes it into a temporary file and stores that
as a generated asset. The job result is the asset plus ``sourceTaskId`` and
the effective options.
"""

from __future__ import annotations

import tempfile
from pathlib import Path, PurePath
from typing import Any, cast

from pydantic import BaseModel

from toolrun.tools.base import ToolContext, ToolDefinition
from toolrun.tools.image.admission import prepare_hook
from toolrun.tools.image.assets import ImageAssets
from toolrun.tools.image.models import (
    CompressInput,
    ConvertInput,
    CropInput,
    IcoInput,
    ImageJobResult,
    ResizeInput,
)
from toolrun.tools.image.pipeline import OutputInfo, process

_MAX_STEM = 100


def output_file_name(source_name: str, action: str, output: OutputInfo) -> str:
    """``photo.png`` -> ``photo.webp``, ``photo-compressed.jpg``, ``photo-720x588.jpg`` ..."""
    stem = PurePath(PurePath(source_name).name).stem.strip()[:_MAX_STEM] or "image"
    suffix = {
        "compress": "-compressed",
        "resize": f"-{output.width}x{output.height}",
        "crop": "-cropped",
    }.get(action, "")
    return f"{stem}{suffix}.{output.extension}"


async def _run(action: str, payload: Any, ctx: ToolContext) -> ImageJobResult:
    assets = cast(ImageAssets, ctx.services["assets"])
    async with assets.source(payload.taskId) as source:
        with tempfile.TemporaryDirectory(prefix="toolrun-image-") as work:
            output_path = Path(work) / "output"
            output = await process(
                action, payload, source.path, output_path, ctx.settings, ctx.deadline_at
            )
            asset = await assets.save_generated(
                source_task_id=payload.taskId,
                path=output_path,
                file_name=output_file_name(source.file_name, action, output),
                mime_type=output.mime,
                extension=output.extension,
                width=output.width,
                height=output.height,
            )
    return ImageJobResult.model_validate(
        {**asset, "sourceTaskId": payload.taskId, "options": output.options}
    )


async def run_convert(payload: ConvertInput, ctx: ToolContext) -> BaseModel:
    """Convert the uploaded image to ``payload.format``."""
    return await _run("convert", payload, ctx)


async def run_compress(payload: CompressInput, ctx: ToolContext) -> BaseModel:
    """Re-encode the uploaded image at ``payload.quality``."""
    return await _run("compress", payload, ctx)


async def run_resize(payload: ResizeInput, ctx: ToolContext) -> BaseModel:
    """Resize the uploaded image."""
    return await _run("resize", payload, ctx)


async def run_crop(payload: CropInput, ctx: ToolContext) -> BaseModel:
    """Crop the uploaded image."""
    return await _run("crop", payload, ctx)


async def run_ico(payload: IcoInput, ctx: ToolContext) -> BaseModel:
    """Make a multi-resolution ICO of the uploaded image."""
    return await _run("ico", payload, ctx)


def _definition(
    action: str, name: str, description: str, model: type[BaseModel], run: Any, example: Any
) -> ToolDefinition:
    return ToolDefinition(
        slug=f"image-{action}",
        kind="image",
        action=action,
        category="image",
        name=name,
        description=description,
        input_model=model,
        output_model=ImageJobResult,
        run=run,
        example=example,
        prepare=prepare_hook(),
    )


CONVERT = _definition(
    "convert",
    "Convert image",
    "Convert an uploaded image to PNG, JPEG, WebP, AVIF or TIFF; transparency is flattened "
    "onto `background` (default white) for JPEG.",
    ConvertInput,
    run_convert,
    {"taskId": "upl_0123456789", "format": "webp", "quality": 80},
)
COMPRESS = _definition(
    "compress",
    "Compress image",
    "Re-encode an uploaded image at a quality, optionally in another format, no wider than "
    "`maxWidth` and without EXIF/XMP/IPTC. When the result would be larger than the source and "
    "nothing but the encoding changes, the source is kept (`options.keptOriginal`).",
    CompressInput,
    run_compress,
    {"taskId": "upl_0123456789", "quality": 70, "maxWidth": 1600, "stripMetadata": True},
)
RESIZE = _definition(
    "resize",
    "Resize image",
    "Resize an uploaded image to a width and/or height; `fit` cover, contain, fill, inside or "
    "outside as in sharp. One side given: the other keeps the aspect ratio.",
    ResizeInput,
    run_resize,
    {"taskId": "upl_0123456789", "width": 720, "height": 588, "fit": "cover", "format": "jpeg"},
)
CROP = _definition(
    "crop",
    "Crop image",
    "Cut a region out of an uploaded image, in pixels of the upright image; a region outside "
    "the image fails the job with error 400.",
    CropInput,
    run_crop,
    {"taskId": "upl_0123456789", "left": 10, "top": 10, "width": 200, "height": 100},
)
ICO = _definition(
    "ico",
    "Make ICO icon",
    "Make one multi-resolution ICO (PNG-compressed entries, 16 to 512 px) from an uploaded "
    "image; non-square images are padded to a centred square of `background`.",
    IcoInput,
    run_ico,
    {"taskId": "upl_0123456789", "sizes": [16, 32, 48, 256]},
)

DEFINITIONS: tuple[ToolDefinition, ...] = (CONVERT, COMPRESS, RESIZE, CROP, ICO)
"""The image actions, in catalog order."""
