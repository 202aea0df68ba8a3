"""The small JSON file that lets an interrupted upload resume.

One file may hold several uploads, each under the key ``path|size|mtime_ns``:
a changed file gets a new key and therefore a fresh session. An entry records
the session and the chunk indexes the server has confirmed; it is removed when
the upload completes, and the file when no entry is left.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

STATE_SUFFIX = ".toolrun-upload.json"
STATE_VERSION = 1


@dataclass
class UploadState:
    """An upload in progress: its session and the chunks already accepted."""

    task_id: str
    chunk_size: int
    total_chunks: int
    expires_at: datetime
    done: set[int] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {
            "taskId": self.task_id,
            "chunkSize": self.chunk_size,
            "totalChunks": self.total_chunks,
            "expiresAt": self.expires_at.isoformat(),
            "done": sorted(self.done),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> UploadState:
        return cls(
            task_id=str(data["taskId"]),
            chunk_size=int(data["chunkSize"]),
            total_chunks=int(data["totalChunks"]),
            expires_at=datetime.fromisoformat(str(data["expiresAt"])),
            done={int(index) for index in data["done"]},
        )


def default_state_path(path: Path) -> Path:
    """``photo.png`` -> ``photo.png.toolrun-upload.json`` beside it."""
    return path.with_name(path.name + STATE_SUFFIX)


def file_key(path: Path) -> str:
    """Identifies one version of a file: absolute path, size and modification time."""
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


def _read(state_path: Path) -> dict[str, Any]:
    try:
        data = json.loads(state_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return {}
    uploads = data.get("uploads")
    return uploads if isinstance(uploads, dict) else {}


def _write(state_path: Path, uploads: dict[str, Any]) -> None:
    if not uploads:
        state_path.unlink(missing_ok=True)
        return
    scratch = state_path.with_name(state_path.name + ".tmp")
    text = json.dumps({"version": STATE_VERSION, "uploads": uploads}, indent=1)
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, state_path)


def load(state_path: Path, key: str, now: datetime) -> UploadState | None:
    """The recorded upload of this file version, unless missing, unreadable or expired."""
    entry = _read(state_path).get(key)
    if not isinstance(entry, dict):
        return None
    try:
        state = UploadState.from_json(entry)
    except (KeyError, TypeError, ValueError):
        return None
    return state if state.expires_at > now else None


def save(state_path: Path, key: str, state: UploadState) -> None:
    """Record (or update) the upload of this file version."""
    uploads = _read(state_path)
    uploads[key] = state.to_json()
    _write(state_path, uploads)


def forget(state_path: Path, key: str) -> None:
    """Drop the entry; the file goes when it was the last one."""
    uploads = _read(state_path)
    if uploads.pop(key, None) is not None or not uploads:
        _write(state_path, uploads)
