"""Image processing on libvips: convert, compress, resize, crop and ico.

Public surface: ``DEFINITIONS`` (the five catalog entries), ``probe`` (header
check used at upload completion), ``check_source`` with ``SourceSize`` (output
limits checked at job creation from the upload's recorded size), ``process``
(run one action on a local file) and the ``ImageAssets`` gateway protocol.
"""

from toolrun.tools.image.actions import DEFINITIONS
from toolrun.tools.image.admission import SourceSize, check_source
from toolrun.tools.image.assets import ImageAssets, SourceImage
from toolrun.tools.image.pipeline import OutputInfo, process
from toolrun.tools.image.vips import ImageInfo, probe

__all__ = [
    "DEFINITIONS",
    "ImageAssets",
    "ImageInfo",
    "OutputInfo",
    "SourceImage",
    "SourceSize",
    "check_source",
    "probe",
    "process",
]
