"""Damaged files of every readable format fail as a job error (400, 413 or 415), never otherwise.

413: damage to the header may declare other dimensions, which the limits then refuse."""

from __future__ import annotations

import random

import pytest

from tests.tools.image import samples
from toolrun.tools.base import ToolFailure
from toolrun.tools.image.models import ResizeInput
from toolrun.tools.image.pipeline import process

SUFFIXES = [".jpg", ".png", ".webp", ".gif", ".tif", ".avif"]


def _damaged(data: bytes, rng: random.Random) -> bytes:
    damaged = bytearray(data)
    kind = rng.randrange(3)
    if kind == 0:  # flip bytes after the signature
        for _ in range(rng.randint(1, 8)):
            damaged[rng.randrange(12, len(damaged))] = rng.randrange(256)
        return bytes(damaged)
    if kind == 1:  # cut anywhere
        return bytes(damaged[: rng.randrange(1, len(damaged))])
    start = rng.randrange(12, len(damaged) - 1)  # zero a run
    damaged[start : start + rng.randint(1, 64)] = bytes(min(64, len(damaged) - start))
    return bytes(damaged)


@pytest.mark.parametrize("suffix", SUFFIXES)
async def test_damaged_inputs_fail_cleanly(tmp_path, settings, deadline, suffix):
    source = samples.encode(samples.photo(48, 32), suffix)
    rng = random.Random(suffix)
    options = ResizeInput(taskId="t", width=20, format="png")
    codes = []
    for index in range(25):
        path = tmp_path / f"damaged{index}"
        path.write_bytes(_damaged(source, rng))
        try:
            await process("resize", options, path, tmp_path / f"out{index}", settings, deadline)
            codes.append(200)  # some damage is harmless (metadata, padding)
        except ToolFailure as failure:
            codes.append(failure.code)
    assert set(codes) <= {200, 400, 413, 415}
    assert set(codes) & {400, 415}
