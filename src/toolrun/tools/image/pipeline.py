"""Run an image operation: limits first, then an ordered list of steps, the deadline checked between.

``process`` is the entry point: it checks the file size, reads the header
(no pixels), checks the pixel limit, asks ``plans.build`` for the steps and
runs them in the image thread pool. libvips evaluates lazily, so most of the
decoding and resampling happens inside the final encode step, streamed.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolrun.config import Settings
from toolrun.tools.image.context import Context, Step
from toolrun.tools.image.errors import DeadlinePassed, ImageCorrupt
from toolrun.tools.image.formats import FORMATS
from toolrun.tools.image.limits import check_file_size, check_source
from toolrun.tools.image.plans import build
from toolrun.tools.image.vips import VipsError, probe, run_in_pool

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class OutputInfo:
    """The written file: its format and dimensions, its size in bytes, the options used."""

    format: str
    mime: str
    extension: str
    width: int
    height: int
    size: int
    options: dict[str, Any]


def check_deadline(deadline: datetime) -> None:
    """DeadlinePassed once ``deadline`` (naive means UTC) is behind us."""
    if deadline.tzinfo is None:
        deadline = deadline.replace(tzinfo=UTC)
    if datetime.now(UTC) > deadline:
        raise DeadlinePassed()


def run_steps(context: Context, steps: Sequence[Step]) -> Context:
    """Run ``steps`` in order, checking ``context.deadline`` before each; a libvips error in any
    of them means the image is unusable (or, past the deadline, that evaluation was stopped)."""
    for step in steps:
        check_deadline(context.deadline)
        try:
            context = step.run(context)
        except VipsError as exc:
            check_deadline(context.deadline)  # evaluation killed by watch_deadline
            logger.info("image step %s failed: %s", step.name, str(exc).strip())
            raise ImageCorrupt() from exc
    return context


def process_sync(
    action: str,
    options: Any,
    src_path: Path,
    dst_path: Path,
    settings: Settings,
    deadline: datetime,
) -> OutputInfo:
    """``process`` in the calling thread (blocking)."""
    check_deadline(deadline)
    source_size = check_file_size(src_path, settings)
    info = probe(src_path)
    check_source(info, settings)
    plan = build(action, options, info, settings, dst_path)
    run_steps(Context(src_path, info, deadline), plan.steps)
    size = dst_path.stat().st_size
    effective = dict(plan.options)
    if plan.keep_smaller_original and size >= source_size:
        shutil.copyfile(src_path, dst_path)
        size = source_size
        effective["keptOriginal"] = True
    spec = FORMATS[plan.format]
    return OutputInfo(
        plan.format, spec.mime, spec.extension, plan.width, plan.height, size, effective
    )


async def process(
    action: str,
    options: Any,
    src_path: Path,
    dst_path: Path,
    settings: Settings,
    deadline: datetime,
) -> OutputInfo:
    """Apply ``action`` (convert, compress, resize, crop, ico) with ``options`` (its input model)
    to the image at ``src_path``, writing the result to ``dst_path``.

    Raises the ``ToolFailure``s of ``toolrun.tools.image.errors``.
    """
    return await run_in_pool(process_sync, action, options, src_path, dst_path, settings, deadline)
