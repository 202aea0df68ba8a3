"""Several image jobs at once share the thread pool and stay within a memory bound."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from tests.tools.image import samples
from toolrun.tools.image.models import ConvertInput, ResizeInput
from toolrun.tools.image.pipeline import process
from toolrun.tools.image.vips import pyvips

MIB = 1024 * 1024


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class PeakRss:
    """Samples the resident set size every few milliseconds in a thread."""

    def __init__(self) -> None:
        self.peak = _rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, _rss())

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def test_eight_concurrent_jobs_bounded_memory(tmp_path, settings, deadline):
    src = tmp_path / "photo.jpg"
    samples.photo(3000, 2000).jpegsave(str(src), Q=85)
    png = tmp_path / "photo.png"
    samples.photo(2000, 1500).pngsave(str(png), compression=1)
    jobs = []
    for index in range(8):
        if index % 2:
            resize = ResizeInput(taskId="t", width=600, height=400, format="webp")
            jobs.append(process("resize", resize, src, tmp_path / f"o{index}", settings, deadline))
        else:
            convert = ConvertInput(taskId="t", format="jpeg")
            jobs.append(
                process("convert", convert, png, tmp_path / f"o{index}", settings, deadline)
            )
    baseline = _rss()
    with PeakRss() as rss:
        outputs = await asyncio.gather(*jobs)
    assert [(o.width, o.height) for o in outputs] == [(2000, 1500), (600, 400)] * 4
    for index in range(8):
        image = pyvips.Image.new_from_file(str(tmp_path / f"o{index}"))
        assert image.width in (2000, 600)
    # Decoded, the inputs are 18 MB and 9 MB each (8 at once: 108 MB); streamed, far less is held.
    assert rss.peak - baseline < 100 * MIB, f"{(rss.peak - baseline) / MIB:.1f} MiB"
