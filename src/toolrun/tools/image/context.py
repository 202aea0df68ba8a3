"""The explicit context the image steps pass along, the step type and a job's plan."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from toolrun.tools.image.vips import ImageInfo, VipsImage


@dataclass(frozen=True)
class Context:
    """What the steps pass along: the source, its header, and the image built so far."""

    source: Path
    info: ImageInfo
    deadline: datetime
    image: VipsImage = None


@dataclass(frozen=True)
class Step:
    """One named step; ``run`` returns the next context and never changes the one it got."""

    name: str
    run: Callable[[Context], Context]


def image_step(name: str, fn: Callable[[VipsImage], VipsImage]) -> Step:
    """A step that maps the current image through ``fn``."""

    def run(context: Context) -> Context:
        return replace(context, image=fn(context.image))

    return Step(name, run)


@dataclass(frozen=True)
class Plan:
    """The steps of one job and what they will produce."""

    steps: Sequence[Step]
    format: str  # a key of formats.FORMATS
    width: int
    height: int
    options: dict[str, Any] = field(default_factory=dict)  # the effective options
    keep_smaller_original: bool = False  # compress: the source is kept when not larger
