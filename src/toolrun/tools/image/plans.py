"""Turn an action's options and the source header into the ordered steps of the job.

Every plan is decided from the header alone, so output limits and crop
regions are checked before any pixel is decoded. The step order is always:
load (with JPEG shrink-on-load when shrinking) -> orient -> colour -> geometry
-> background -> encode.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolrun.config import Settings
from toolrun.tools.image.colours import (
    TRANSPARENT,
    WHITE,
    Rgba,
    format_background,
    parse_background,
)
from toolrun.tools.image.context import Context, Plan, Step, image_step
from toolrun.tools.image.formats import DEFAULT_OUTPUT_FOR_INPUT, FORMATS
from toolrun.tools.image.geometry import (
    ResizePlan,
    common_shrink,
    default_fit,
    jpeg_shrink_on_load,
    plan_resize,
)
from toolrun.tools.image.limits import check_output
from toolrun.tools.image.models import (
    CompressInput,
    ConvertInput,
    CropInput,
    IcoInput,
    ResizeInput,
)
from toolrun.tools.image.steps.background import flatten
from toolrun.tools.image.steps.colour import to_srgb
from toolrun.tools.image.steps.crop import check_region, crop
from toolrun.tools.image.steps.encode import EncodeSpec, effective_quality, save
from toolrun.tools.image.steps.ico import icon_pngs, pack_ico, square
from toolrun.tools.image.steps.orient import orient
from toolrun.tools.image.steps.resize import apply_plan
from toolrun.tools.image.vips import ImageInfo, load, watch_deadline

WATCH_MIN_PIXELS = 8_000_000
"""Sources this large have libvips stop at the deadline mid-encode; below it a job takes well
under a second, and the per-tile callback (about 5% of a small job) is not worth it."""


def _load(shrink: float = 1.0) -> Step:
    """Load; a ``shrink`` (common reduction of both sides) above 1 decodes at reduced size."""

    def run(context: Context) -> Context:
        image = load(
            context.source,
            context.info,
            jpeg_shrink=jpeg_shrink_on_load(shrink),
            webp_scale=1 / shrink,
        )
        return replace(context, image=image)

    return Step("load", run)


def _watch(context: Context) -> None:
    if context.info.pixels >= WATCH_MIN_PIXELS:
        watch_deadline(context.image, context.deadline)


def _encode(dst: Path, spec: EncodeSpec) -> Step:
    def run(context: Context) -> Context:
        _watch(context)
        save(context.image, dst, spec)
        return context

    return Step("encode", run)


def _start(shrink: float = 1.0) -> list[Step]:
    return [_load(shrink), image_step("orient", orient), image_step("colour", to_srgb)]


def _finish(fmt: str, spec: EncodeSpec, under: Rgba, dst: Path) -> list[Step]:
    steps = []
    if not FORMATS[fmt].has_alpha:
        steps.append(image_step("background", lambda image: flatten(image, under)))
    return [*steps, _encode(dst, spec)]


def output_format(requested: str | None, source_format: str) -> str:
    """The format written: the one asked for, else the source's (GIF sources give PNG)."""
    return requested or DEFAULT_OUTPUT_FOR_INPUT[source_format]


def compress_plan(options: CompressInput, width: int, height: int) -> ResizePlan | None:
    """compress's scaling of an upright ``width`` x ``height`` source: only down, to ``maxWidth``."""
    if options.maxWidth is None or width <= options.maxWidth:
        return None
    return plan_resize(width, height, options.maxWidth, None, "inside")


def resize_plan(options: ResizeInput, width: int, height: int) -> ResizePlan:
    """resize's geometry for an upright ``width`` x ``height`` source (DESIGN §5 default fit)."""
    fit = options.fit or default_fit(options.width, options.height)
    return plan_resize(width, height, options.width, options.height, fit)


def _under(background: str | None) -> Rgba:
    """The colour painted beneath transparency when a format has no alpha."""
    return parse_background(background) if background else WHITE


def _reported_background(background: str | None, fmt: str, alpha: bool) -> str | None:
    if background:
        return background
    return format_background(WHITE) if alpha and not FORMATS[fmt].has_alpha else None


def _shrink(info: ImageInfo, width: int, height: int) -> float:
    return common_shrink(info.width, info.height, width, height)


def _resize_step(plan: ResizePlan, padding: Rgba) -> Step:
    return image_step("resize", lambda image: apply_plan(image, plan, padding))


def _convert(options: ConvertInput, info: ImageInfo, settings: Settings, dst: Path) -> Plan:
    fmt = options.format
    check_output(info.width, info.height, settings, fmt)
    spec = EncodeSpec(fmt, options.quality)
    steps = _start() + _finish(fmt, spec, _under(options.background), dst)
    effective = {
        "format": fmt,
        "quality": effective_quality(spec, info.has_alpha),
        "background": _reported_background(options.background, fmt, info.has_alpha),
    }
    return Plan(steps, fmt, info.width, info.height, effective)


def _compress(options: CompressInput, info: ImageInfo, settings: Settings, dst: Path) -> Plan:
    fmt = output_format(options.format, info.format)
    spec = EncodeSpec(fmt, options.quality, strip=options.stripMetadata)
    steps = _start()
    width, height = info.width, info.height
    plan = compress_plan(options, info.width, info.height)
    if plan is not None:
        width, height = plan.width, plan.height
        steps = [*_start(_shrink(info, width, height)), _resize_step(plan, TRANSPARENT)]
    check_output(width, height, settings, fmt)
    steps += _finish(fmt, spec, _under(options.background), dst)
    unchanged_pixels = (
        fmt == info.format
        and (width, height) == (info.width, info.height)
        and not options.stripMetadata
        and info.orientation == 1
        and info.pages == 1
        and info.bits == 8
        and info.interpretation in ("srgb", "b-w")
        and not info.has_icc
    )
    effective = {
        "format": fmt,
        "quality": effective_quality(spec, info.has_alpha),
        "maxWidth": options.maxWidth,
        "background": _reported_background(options.background, fmt, info.has_alpha),
        "stripMetadata": options.stripMetadata,
        "keptOriginal": False,
    }
    return Plan(steps, fmt, width, height, effective, keep_smaller_original=unchanged_pixels)


def _resize(options: ResizeInput, info: ImageInfo, settings: Settings, dst: Path) -> Plan:
    fmt = output_format(options.format, info.format)
    fit = options.fit or default_fit(options.width, options.height)
    plan = resize_plan(options, info.width, info.height)
    check_output(plan.scaled_width, plan.scaled_height, settings, "intermediate")
    check_output(plan.width, plan.height, settings, fmt)
    alpha_format = FORMATS[fmt].has_alpha
    padding: Rgba = (
        parse_background(options.background)
        if options.background
        else (TRANSPARENT if alpha_format else WHITE)
    )
    spec = EncodeSpec(fmt, options.quality)
    steps = _start(_shrink(info, plan.scaled_width, plan.scaled_height))
    steps += [_resize_step(plan, padding)]
    steps += _finish(fmt, spec, _under(options.background), dst)
    padded = plan.placement == "embed" and (plan.scaled_width, plan.scaled_height) != (
        plan.width,
        plan.height,
    )
    alpha = info.has_alpha or (padded and padding[3] < 255)
    background = _reported_background(options.background, fmt, alpha)
    if padded and background is None:
        background = format_background(padding)
    effective = {
        "width": options.width,
        "height": options.height,
        "fit": fit,
        "format": fmt,
        "quality": effective_quality(spec, alpha),
        "background": background,
    }
    return Plan(steps, fmt, plan.width, plan.height, effective)


def _crop(options: CropInput, info: ImageInfo, settings: Settings, dst: Path) -> Plan:
    fmt = output_format(options.format, info.format)
    check_region(info.width, info.height, options.left, options.top, options.width, options.height)
    check_output(options.width, options.height, settings, fmt)
    spec = EncodeSpec(fmt, options.quality)
    region = (options.left, options.top, options.width, options.height)
    steps = [
        _load(),
        image_step("orient", orient),
        image_step("crop", lambda image: crop(image, *region)),
        image_step("colour", to_srgb),
        *_finish(fmt, spec, _under(options.background), dst),
    ]
    effective = {
        "left": options.left,
        "top": options.top,
        "width": options.width,
        "height": options.height,
        "format": fmt,
        "quality": effective_quality(spec, info.has_alpha),
        "background": _reported_background(options.background, fmt, info.has_alpha),
    }
    return Plan(steps, fmt, options.width, options.height, effective)


def _ico(options: IcoInput, info: ImageInfo, settings: Settings, dst: Path) -> Plan:
    sizes = sorted(set(options.sizes))
    largest = sizes[-1]
    colour = parse_background(options.background) if options.background else TRANSPARENT
    side = max(info.width, info.height)
    content = (max(1, info.width * largest // side), max(1, info.height * largest // side))

    def write(context: Context) -> Context:
        _watch(context)
        dst.write_bytes(pack_ico(icon_pngs(context.image, sizes)))
        return context

    steps = [
        *_start(_shrink(info, *content)),
        image_step("square", lambda image: square(image, colour)),
        Step("encode", write),
    ]
    effective = {"sizes": sizes, "background": format_background(colour)}
    return Plan(steps, "ico", largest, largest, effective)


_BUILDERS: dict[str, tuple[type[Any], Callable[..., Plan]]] = {
    "convert": (ConvertInput, _convert),
    "compress": (CompressInput, _compress),
    "resize": (ResizeInput, _resize),
    "crop": (CropInput, _crop),
    "ico": (IcoInput, _ico),
}


def build(action: str, options: Any, info: ImageInfo, settings: Settings, dst: Path) -> Plan:
    """The plan of ``action`` for a source described by ``info``, writing to ``dst``.

    Raises ImageTooLarge (413) for outputs over the limits and RegionOutside
    (400) for a crop region outside the image.
    """
    model, builder = _BUILDERS[action]
    if not isinstance(options, model):
        raise TypeError(f"{action} takes {model.__name__}, not {type(options).__name__}")
    return builder(options, info, settings, dst)
