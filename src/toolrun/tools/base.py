"""What a tool is: the contract every tool and image action module fulfils.

A tool module defines its input and output pydantic models and one
``ToolDefinition``; ``tools/registry.py`` lists them. The registry alone feeds
the catalog, request validation, the execute routes, ``POST /openapi/jobs``,
the v1 aliases and the agent-tool server.

Exceptions::

    ToolError
    ├── ToolFailure   the job fails with error {code, message}; the credit is refunded
    └── InputRejected the request is refused at creation (400): no job, no charge
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from toolrun.config import Settings

Kind = Literal["tool", "image"]
Category = Literal["website", "domain", "image"]


class ToolError(Exception):
    """Base of the errors a tool raises on purpose."""


class ToolFailure(ToolError):
    """The tool ran and could not produce a result: the job fails with this code and message.

    ``code`` is one of DESIGN §5's job failure codes: 400 (target unreachable or
    unusable), 413 (over a size limit), 415 (unsupported image), 500 (internal).
    """

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class InputRejected(ToolError):
    """Input that passed the schema but is unusable (a private nameserver, a bad PEM key)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


ProgressCallback = Callable[[float, str], Awaitable[None]]


async def _no_progress(fraction: float, note: str) -> None:
    return None


@dataclass(frozen=True)
class ToolContext:
    """What a running tool may use: settings, its deadline and the services the worker wires in.

    ``deadline_at`` is on the wall clock (aware, UTC): tools compare it with ``datetime.now``.
    """

    settings: Settings
    job_id: str
    account_id: str
    deadline_at: datetime
    services: Mapping[str, Any] = field(default_factory=dict)
    progress: ProgressCallback = _no_progress


RunFunction = Callable[[Any, ToolContext], Awaitable[BaseModel]]
PrepareFunction = Callable[[Any, Settings], Awaitable[BaseModel]]
V1PayloadFunction = Callable[[Any], BaseModel]
V1ResultFunction = Callable[[Any, Any], BaseModel]


async def keep_input(payload: BaseModel, settings: Settings) -> BaseModel:
    """The default ``prepare``: the validated input is stored and run as it is."""
    return payload


@dataclass(frozen=True)
class ToolDefinition:
    """One action of the catalog.

    ``prepare`` runs at job creation, before any charge: it may raise
    ``InputRejected`` (400) and returns what is stored as the job's payload (a
    tool that must not keep a secret returns a model without it). ``run`` gets
    that stored payload back, validated against ``stored_model``.

    A tool whose v1 alias takes another body (dns: ``type`` instead of
    ``types``) sets ``v1_input_model`` and ``v1_to_input``; ``v1_result``
    turns its result into the v1 shape for jobs created that way.
    """

    slug: str
    kind: Kind
    action: str
    category: Category
    name: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    run: RunFunction
    example: Mapping[str, Any]
    aliases: tuple[str, ...] = ()
    stored_model: type[BaseModel] | None = None
    prepare: PrepareFunction = keep_input
    v1_input_model: type[BaseModel] | None = None
    v1_to_input: V1PayloadFunction | None = None
    v1_result: V1ResultFunction | None = None

    @property
    def payload_model(self) -> type[BaseModel]:
        return self.stored_model or self.input_model

    @property
    def path(self) -> str:
        if self.kind == "image":
            return f"/openapi/image-tools/{self.action}"
        return f"/openapi/tools/{self.slug}/execute"
