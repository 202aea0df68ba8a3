"""What the API needs at run time, built once by the app factory and kept on ``app.state``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolrun.config import Settings
from toolrun.core.clock import Clock
from toolrun.db.engine import Database
from toolrun.tools.registry import Registry


@dataclass
class AppContext:
    settings: Settings
    db: Database
    clock: Clock
    registry: Registry
    services: dict[str, Any] = field(default_factory=dict)
