"""What the image actions need from the asset store; the worker wires an implementation in
``ToolContext.services["assets"]``."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class SourceImage:
    """An uploaded image made available as a local file for the duration of a job."""

    path: Path
    file_name: str
    mime_type: str


class ImageAssets(Protocol):
    """The asset gateway of image jobs."""

    def source(self, task_id: str) -> AbstractAsyncContextManager[SourceImage]:
        """The complete, unexpired upload ``task_id`` of the job's account as a local file,
        valid inside the ``async with``; a missing one raises ``ToolFailure(400, ...)``."""
        ...

    async def save_generated(
        self,
        *,
        source_task_id: str,
        path: Path,
        file_name: str,
        mime_type: str,
        extension: str,
        width: int,
        height: int,
    ) -> dict[str, Any]:
        """Store the file at ``path`` (copied or moved before returning: it is deleted
        afterwards) as a generated asset of ``source_task_id`` and return the asset in the
        upload-asset shape (taskId, kind "generated", fileName, ... previewPath)."""
        ...
