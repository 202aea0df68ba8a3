"""Image processing on libvips: convert, compress, resize, crop and ico.

Public surface: ``DEFINITIONS`` (the five catalog entries), ``probe`` (header
check used at upload completion), ``process`` (run one action on a local file)
and the ``ImageAssets`` gateway protocol.
"""

from toolrun.tools.image.actions import DEFINITIONS
from toolrun.tools.image.assets import ImageAssets, SourceImage
from toolrun.tools.image.pipeline import OutputInfo, process
from toolrun.tools.image.vips import ImageInfo, probe

__all__ = [
    "DEFINITIONS",
    "ImageAssets",
    "ImageInfo",
    "OutputInfo",
    "SourceImage",
    "probe",
    "process",
]
