"""Request and result shapes of the five image actions, with SPEC's field names.

Unknown fields are refused (400), so a misspelt option is never silently
ignored. ``background`` is accepted in any letter case, with or without
``#``, and stored normalised (``#RRGGBB`` or ``#RRGGBBAA``, upper case).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from toolrun.tools.image.colours import BACKGROUND_PATTERN, normalize_background
from toolrun.tools.image.formats import OutputFormat
from toolrun.tools.image.geometry import Fit
from toolrun.tools.image.limits import MAX_OUTPUT_EDGE
from toolrun.tools.image.steps.ico import DEFAULT_SIZES

TaskId = Annotated[
    str, Field(min_length=1, max_length=128, description="Id of an upload asset (its taskId).")
]
Quality = Annotated[
    int,
    Field(ge=1, le=100, description="Encoder quality, 1 to 100; the format's default if omitted."),
]
Background = Annotated[
    str,
    Field(
        pattern=BACKGROUND_PATTERN,
        description="Hex colour #RGB, #RGBA, #RRGGBB or #RRGGBBAA (# optional, any case).",
    ),
    AfterValidator(normalize_background),
]
Side = Annotated[int, Field(ge=1, le=MAX_OUTPUT_EDGE)]
IcoSize = Annotated[int, Field(ge=16, le=512)]

_FORMAT_TEXT = "Output format; the source's format when omitted (GIF sources give PNG)."
_BACKGROUND_TEXT = "Colour painted under transparency when the format has no alpha (JPEG)."


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConvertInput(_Input):
    """Re-encode an uploaded image in another format."""

    taskId: TaskId
    format: OutputFormat = Field(description="Output format.")
    quality: Quality | None = None
    background: Background | None = Field(default=None, description=_BACKGROUND_TEXT)


class CompressInput(_Input):
    """Re-encode at a given quality, optionally narrower and without metadata."""

    taskId: TaskId
    quality: Quality = Field(description="Encoder quality, 1 to 100.")
    format: OutputFormat | None = Field(default=None, description=_FORMAT_TEXT)
    maxWidth: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="Scale down (never up) to at most this width."
    )
    background: Background | None = Field(default=None, description=_BACKGROUND_TEXT)
    stripMetadata: bool = Field(
        default=False, description="Drop EXIF, XMP and IPTC; the ICC profile is kept."
    )


class ResizeInput(_Input):
    """Scale to a width and/or height; with both, ``fit`` says how (sharp's semantics)."""

    taskId: TaskId
    width: Side | None = None
    height: Side | None = None
    fit: Fit | None = Field(
        default=None,
        description="cover (default with both sides), contain, fill, inside or outside.",
    )
    format: OutputFormat | None = Field(default=None, description=_FORMAT_TEXT)
    quality: Quality | None = None
    background: Background | None = Field(
        default=None,
        description="Padding colour for contain (default transparent) and the colour under "
        "transparency for JPEG (default white).",
    )

    @model_validator(mode="after")
    def _one_side_at_least(self) -> ResizeInput:
        if self.width is None and self.height is None:
            raise ValueError("width or height is required")
        return self


class CropInput(_Input):
    """Cut out the region (left, top, width, height), in pixels of the upright image."""

    taskId: TaskId
    left: Annotated[int, Field(ge=0)]
    top: Annotated[int, Field(ge=0)]
    width: Annotated[int, Field(ge=1)]
    height: Annotated[int, Field(ge=1)]
    format: OutputFormat | None = Field(default=None, description=_FORMAT_TEXT)
    quality: Quality | None = None
    background: Background | None = Field(default=None, description=_BACKGROUND_TEXT)


class IcoInput(_Input):
    """Make one multi-resolution ICO; non-square sources are padded to a centred square."""

    taskId: TaskId
    sizes: list[IcoSize] = Field(
        default_factory=lambda: list(DEFAULT_SIZES),
        min_length=1,
        max_length=32,
        description="Icon sizes in pixels, each 16 to 512.",
    )
    background: Background | None = Field(
        default=None, description="Colour of the square padding (default transparent)."
    )


ImageInput = ConvertInput | CompressInput | ResizeInput | CropInput | IcoInput


class ImageJobResult(BaseModel):
    """The generated asset (upload-asset shape), its source and the options actually used."""

    model_config = ConfigDict(extra="allow")

    taskId: str
    kind: Literal["generated"] = "generated"
    fileName: str
    mimeType: str
    extension: str
    size: int
    fileSize: int
    createdAt: datetime
    expiresAt: datetime
    width: int
    height: int
    downloadPath: str
    previewPath: str
    sourceTaskId: str
    options: dict[str, Any]
