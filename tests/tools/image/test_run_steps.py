"""The step runner: order, explicit context, deadline between steps, libvips errors mapped."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.tools.image import samples
from toolrun.tools.image.context import Context, Step, image_step
from toolrun.tools.image.errors import DeadlinePassed, ImageCorrupt
from toolrun.tools.image.pipeline import run_steps
from toolrun.tools.image.vips import probe


@pytest.fixture
def context(quadrants_png: Path) -> Context:
    return Context(quadrants_png, probe(quadrants_png), datetime.now(UTC) + timedelta(seconds=30))


def test_steps_run_in_order_without_changing_their_input(context):
    seen: list[str] = []

    def mark(name: str) -> Step:
        def run(ctx: Context) -> Context:
            seen.append(name)
            return ctx

        return Step(name, run)

    start = Context(
        context.source, context.info, context.deadline, samples.solid(4, 4, samples.RED)
    )
    steps = [mark("a"), image_step("flip", lambda image: image.fliphor()), mark("b")]
    end = run_steps(start, steps)
    assert seen == ["a", "b"]
    assert end.image is not start.image
    assert start.image.width == 4


def test_deadline_checked_between_steps(context):
    ran: list[str] = []

    def slow(ctx: Context) -> Context:
        time.sleep(0.05)
        ran.append("slow")
        return ctx

    def never(ctx: Context) -> Context:
        ran.append("never")
        return ctx

    soon = Context(context.source, context.info, datetime.now(UTC) + timedelta(milliseconds=20))
    with pytest.raises(DeadlinePassed):
        run_steps(soon, [Step("slow", slow), Step("never", never)])
    assert ran == ["slow"]


def test_libvips_error_is_a_corrupt_image(context):
    bad = image_step("bad", lambda image: image.extract_area(0, 0, 10_000, 10_000))
    start = Context(
        context.source, context.info, context.deadline, samples.solid(4, 4, samples.RED)
    )
    with pytest.raises(ImageCorrupt):
        run_steps(start, [bad])
