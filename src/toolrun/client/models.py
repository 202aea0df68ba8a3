"""What the API answers, as typed models (SPEC "Resources and their fields").

Attributes are snake_case; ``model_validate`` reads the API's camelCase JSON and
``model_dump(by_alias=True)`` writes it back. Unknown fields are kept
(``extra="allow"``), so a newer server does not break an older client.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

JobStatus = Literal["queued", "running", "succeeded", "failed", "canceled"]
TERMINAL_STATUSES: frozenset[str] = frozenset({"succeeded", "failed", "canceled"})


class ApiModel(BaseModel):
    """Base: camelCase aliases, names usable too, extra fields kept."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class JobError(ApiModel):
    """Why a job failed or was canceled (400, 413, 415, 500, 504; 409 for a cancel)."""

    code: int
    message: str


class Job(ApiModel):
    """An asynchronous job; poll ``status_url`` no sooner than ``poll_after_ms``."""

    id: str
    kind: str
    action: str
    status: JobStatus
    result: dict[str, Any] | None = None
    error: JobError | None = None
    credit_cost: int = 1
    credits_refunded: bool = False
    attempts: int = 0
    created_at: datetime | None = None
    started_at: datetime | None = None
    completed_at: datetime | None = None
    deadline_at: datetime
    poll_after_ms: int = 6000
    status_url: str

    @property
    def is_terminal(self) -> bool:
        """True once the job is succeeded, failed or canceled."""
        return self.status in TERMINAL_STATUSES


class CreditSummary(ApiModel):
    """The account's balance and check-in state."""

    balance: int
    is_anonymous: bool = False
    anonymous_spent: int = 0
    anonymous_spend_limit: int = 0
    anonymous_remaining: int | None = None
    registration_required: bool = False
    checked_in_today: bool
    daily_reward: int | None = None
    signup_reward: int | None = None
    tool_cost: int | None = None
    next_check_in_at: datetime
    time_zone: str | None = None


class CheckIn(CreditSummary):
    """A check-in answer: the summary plus whether credits were granted this time."""

    granted: bool


class LedgerEntry(ApiModel):
    """One movement of credits."""

    id: str
    user_id: str
    reason: str
    amount: int
    balance_after: int
    reference: str
    operation: str | None = None
    created_at: datetime


class LedgerPage(ApiModel):
    """A page of the credit history, newest first, at most 20 entries."""

    items: list[LedgerEntry]
    has_more: bool
    page: int


class Tool(ApiModel):
    """A catalog entry: a tool or an image action with its JSON Schemas."""

    slug: str
    name: str
    category: str
    description: str = ""
    credit_cost: int = 1
    method: str = "POST"
    path: str
    input_schema: dict[str, Any] = Field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    example: dict[str, Any] | None = None


class UploadSession(ApiModel):
    """An open upload: split the file by ``chunk_size`` into ``total_chunks`` chunks."""

    task_id: str
    chunk_size: int
    total_chunks: int
    expires_at: datetime


class ChunkProgress(ApiModel):
    """The answer to one chunk."""

    task_id: str
    chunk_index: int
    uploaded_chunks: int
    total_chunks: int


class Asset(ApiModel):
    """An uploaded or generated image asset; ``task_id`` is what image jobs take."""

    task_id: str
    kind: str
    file_name: str
    mime_type: str
    extension: str
    size: int
    file_size: int
    created_at: datetime
    expires_at: datetime
    width: int | None = None
    height: int | None = None
    download_path: str
    preview_path: str


class Share(ApiModel):
    """A diagram share; ``code`` is present when read back."""

    id: str
    image_url: str
    code: str | None = None
