from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.tools.image import samples
from toolrun.config import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data")


@pytest.fixture
def deadline() -> datetime:
    return datetime.now(UTC) + timedelta(seconds=60)


@pytest.fixture
def quadrants_png(tmp_path: Path) -> Path:
    """A 64x48 four-colour PNG (see samples.quadrants)."""
    path = tmp_path / "quadrants.png"
    samples.quadrants(64, 48).pngsave(str(path))
    return path


@pytest.fixture
def photo_jpeg(tmp_path: Path) -> Path:
    """A 120x90 photo-like JPEG."""
    path = tmp_path / "photo.jpg"
    samples.photo(120, 90).jpegsave(str(path), Q=90)
    return path


@pytest.fixture
def alpha_png(tmp_path: Path) -> Path:
    """A 40x30 PNG: transparent, with an opaque red 20x30 left half."""
    path = tmp_path / "alpha.png"
    image = samples.solid(40, 30, (0, 0, 0, 0)).draw_rect([255, 0, 0, 255], 0, 0, 20, 30, fill=True)
    image.pngsave(str(path))
    return path


@pytest.fixture(scope="session")
def huge_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real 20000x20000 one-colour PNG (400 megapixels, about 4 MB on disk)."""
    from toolrun.tools.image.vips import pyvips

    path = tmp_path_factory.mktemp("huge") / "huge.png"
    pyvips.Image.black(20000, 20000).pngsave(str(path), compression=1)
    return path
