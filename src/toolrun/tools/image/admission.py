"""Output limits checked when an image job is created: 400 naming the field, no job, no charge.

Two moments, both before any charge:

- :func:`check_request` (the definitions' ``prepare``): what the request alone
  decides. resize's ``width``/``height`` where the result has that side exactly
  or at least (one side given; ``cover``, ``contain``, ``fill``, ``outside``;
  ``inside`` when both sides are over), and crop's ``width``/``height``: each
  side against the named ``format``'s limit (16383 for WebP, else 65535), the
  area against TOOLRUN_MAX_IMAGE_PIXELS.
- :func:`check_source`: the arithmetic of the worker's plan (``plans``) on the
  upright size and the type the upload's header probe recorded on its asset
  row; job creation calls it with that row. It catches convert and compress to
  WebP of a source over 16383 a side, and resize results and intermediates
  over the limits that depend on the source's shape.

The worker checks the same limits again from the file's header
(``limits.check_output``: a failed job, 413, refunded); after these checks that
only happens when the limits were lowered between creation and run. A crop
region outside the image stays a failed job (400, refunded), as SPEC says.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from toolrun.config import Settings
from toolrun.tools.base import InputRejected, PrepareFunction
from toolrun.tools.image.formats import INPUT_MIME
from toolrun.tools.image.limits import FORMAT_MAX_EDGE, MAX_OUTPUT_EDGE, output_problem
from toolrun.tools.image.models import CompressInput, ConvertInput, CropInput, ResizeInput
from toolrun.tools.image.plans import compress_plan, output_format, resize_plan

_FORMAT_OF_MIME = {mime: name for name, mime in INPUT_MIME.items()}


@dataclass(frozen=True)
class SourceSize:
    """An uploaded image as its asset row describes it: upright size and format (probe name)."""

    width: int
    height: int
    format: str

    @classmethod
    def of(cls, width: int | None, height: int | None, mime_type: str) -> SourceSize | None:
        """From an asset's width, height and MIME type; None when it is not a readable image
        with a recorded size (then only the run-time checks apply)."""
        fmt = _FORMAT_OF_MIME.get(mime_type)
        if width is None or height is None or fmt is None:
            return None
        return cls(width, height, fmt)


def _edge(fmt: str | None) -> tuple[int, str]:
    """The longest side allowed for ``fmt`` (None: not known yet) and how to say it."""
    if fmt in FORMAT_MAX_EDGE:
        edge = FORMAT_MAX_EDGE[fmt]
        return edge, f"each side of a {fmt.upper()} image may be at most {edge}"
    return MAX_OUTPUT_EDGE, f"each side of a result may be at most {MAX_OUTPUT_EDGE}"


def _check_sides(
    options: ResizeInput | CropInput, fields: tuple[str, ...], settings: Settings
) -> None:
    """Each named side is exact or a lower bound of the result; with both, so is the area."""
    edge, rule = _edge(options.format)
    for field in fields:
        value: int = getattr(options, field)
        if value > edge:
            raise InputRejected(field, f"{field}: {value} is too large; {rule}")
    if len(fields) == 2 and options.width is not None and options.height is not None:
        area = options.width * options.height
        if area > settings.max_image_pixels:
            raise InputRejected(
                "width",
                f"width: a {options.width}x{options.height} result would have {area} pixels; "
                f"at most {settings.max_image_pixels} pixels are produced",
            )


def check_request(options: BaseModel, settings: Settings) -> None:
    """InputRejected (400) when the request alone puts the result over the output limits."""
    if isinstance(options, CropInput):
        _check_sides(options, ("width", "height"), settings)
    if not isinstance(options, ResizeInput):
        return
    if options.width is None or options.height is None:  # the given side is exact
        _check_sides(options, ("width",) if options.width is not None else ("height",), settings)
    elif options.fit != "inside":  # cover, contain, fill: exact; outside: at least
        _check_sides(options, ("width", "height"), settings)
    else:  # inside: the result fits the box, and one of its sides lands on the box's
        edge, rule = _edge(options.format)
        if min(options.width, options.height) > edge:
            raise InputRejected(
                "width",
                f"width: with fit inside a {options.width}x{options.height} box, one side of "
                f"the result would be at least {min(options.width, options.height)}; {rule}",
            )


def check_source(options: BaseModel, source: SourceSize, settings: Settings) -> None:
    """InputRejected (400) when this source would give a result over the output limits."""
    if isinstance(options, ConvertInput | CompressInput):
        fmt = output_format(options.format, source.format)
        plan = (
            compress_plan(options, source.width, source.height)
            if isinstance(options, CompressInput)
            else None
        )
        width, height = (plan.width, plan.height) if plan else (source.width, source.height)
        problem = output_problem(width, height, settings, fmt)
        if problem is not None:
            remedy = (
                "resize it first or choose another format"
                if isinstance(options, ConvertInput)
                else "give a maxWidth or another format"
            )
            raise InputRejected(
                "format",
                f"format: {problem} (the upload is {source.width}x{source.height}; {remedy})",
            )
    elif isinstance(options, ResizeInput):
        plan = resize_plan(options, source.width, source.height)
        fmt = output_format(options.format, source.format)
        problem = output_problem(plan.width, plan.height, settings, fmt)
        if problem is None and plan.placement == "crop":  # cover scales past the box first
            problem = output_problem(
                plan.scaled_width,
                plan.scaled_height,
                settings,
                "intermediate",
                subject=f"the upload ({source.width}x{source.height}) scaled to cover the box",
            )
        if problem is not None:
            edge, _ = _edge(fmt)
            both = options.width is not None and options.height is not None
            height_over = both and plan.height > edge >= plan.width
            field = "height" if options.width is None or height_over else "width"
            raise InputRejected(field, f"{field}: {problem}")


def prepare_hook() -> PrepareFunction:
    """The ``prepare`` of the image definitions: :func:`check_request`, the payload kept as is."""

    async def prepare(payload: BaseModel, settings: Settings) -> BaseModel:
        check_request(payload, settings)
        return payload

    return prepare
