"""Every table of the service: accounts, keys, ledger, check-ins, rate limits, jobs, idempotency,
upload assets and their chunks, diagram shares."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column
from sqlalchemy.types import JSON

from toolrun.db.base import Base, UTCDateTime, id_column_type, new_id

SEQUENCE = BigInteger().with_variant(Integer(), "sqlite")
JSON_TYPE = JSON().with_variant(JSONB(), "postgresql")


class Account(Base):
    __tablename__ = "accounts"
    __table_args__ = (
        CheckConstraint("balance >= 0", name="balance_not_negative"),
        CheckConstraint("anonymous_spent >= 0", name="anonymous_spent_not_negative"),
    )

    id: Mapped[str] = mapped_column(id_column_type(), primary_key=True, default=new_id)
    name: Mapped[str | None] = mapped_column(String(200))
    is_anonymous: Mapped[bool] = mapped_column(Boolean, default=False)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    balance: Mapped[int] = mapped_column(Integer, default=0)
    anonymous_spent: Mapped[int] = mapped_column(Integer, default=0)
    anonymous_limit: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    registered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(id_column_type(), primary_key=True, default=new_id)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class LedgerEntry(Base):
    """Append-only: a row is never updated or deleted. ``reference`` is unique (exactly-once)."""

    __tablename__ = "credit_ledger"
    __table_args__ = (
        CheckConstraint("balance_after >= 0", name="balance_after_not_negative"),
        Index("ix_credit_ledger_account_seq", "account_id", "seq"),
    )

    seq: Mapped[int] = mapped_column(SEQUENCE, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(id_column_type(), unique=True, default=new_id)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    reason: Mapped[str] = mapped_column(String(32))
    amount: Mapped[int] = mapped_column(Integer)
    balance_after: Mapped[int] = mapped_column(Integer)
    reference: Mapped[str] = mapped_column(String(200), unique=True)
    operation: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class CheckIn(Base):
    """One row per account per Beijing calendar day: the primary key makes check-in once a day."""

    __tablename__ = "check_ins"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class RateLimitWindow(Base):
    """Requests an account made in one UTC calendar minute."""

    __tablename__ = "rate_limit_windows"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELED = "canceled"


class Job(Base):
    """One asynchronous job; the table is also the queue (claimed oldest first)."""

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_account_created", "account_id", "created_at"),
        Index("ix_jobs_status_created", "status", "created_at"),
        Index("ix_jobs_status_deadline", "status", "deadline_at"),
        Index("ix_jobs_status_lease", "status", "lease_expires_at"),
    )

    id: Mapped[str] = mapped_column(id_column_type(), primary_key=True, default=new_id)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    kind: Mapped[str] = mapped_column(String(16))
    action: Mapped[str] = mapped_column(String(128))
    variant: Mapped[str | None] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON_TYPE)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON_TYPE)
    error_code: Mapped[int | None] = mapped_column(Integer)
    error_message: Mapped[str | None] = mapped_column(String(1000))
    credit_cost: Mapped[int] = mapped_column(Integer)
    credits_refunded: Mapped[bool] = mapped_column(Boolean, default=False)
    reservation_id: Mapped[str] = mapped_column(id_column_type())
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker_id: Mapped[str | None] = mapped_column(String(64))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    deadline_at: Mapped[datetime] = mapped_column(UTCDateTime())


class IdempotencyKey(Base):
    """A client's Idempotency-Key, per account, kept 24 hours: it names the job it created."""

    __tablename__ = "idempotency_keys"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), primary_key=True)
    key: Mapped[str] = mapped_column(String(128), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    job_id: Mapped[str] = mapped_column(id_column_type())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class AssetKind(StrEnum):
    UPLOADED = "uploaded"
    GENERATED = "generated"


class AssetStatus(StrEnum):
    PENDING = "pending"
    COMPLETE = "complete"
    EXPIRED = "expired"


class Asset(Base):
    """An upload session and the asset it becomes, or a generated asset; ``id`` is the taskId.

    ``mime_type``/``extension`` are the client's until completion, then the type
    found in the bytes. ``size`` is the declared byte length, ``file_size`` the
    stored one (equal once complete).
    """

    __tablename__ = "assets"
    __table_args__ = (
        Index("ix_assets_status_expires", "status", "expires_at"),
        Index("ix_assets_account_created", "account_id", "created_at"),
    )

    id: Mapped[str] = mapped_column(id_column_type(), primary_key=True, default=new_id)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"))
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    file_name: Mapped[str] = mapped_column(String(255))
    mime_type: Mapped[str] = mapped_column(String(127))
    extension: Mapped[str] = mapped_column(String(16))
    size: Mapped[int] = mapped_column(BigInteger)
    file_size: Mapped[int | None] = mapped_column(BigInteger)
    chunk_size: Mapped[int] = mapped_column(Integer)
    total_chunks: Mapped[int] = mapped_column(Integer)
    width: Mapped[int | None] = mapped_column(Integer)
    height: Mapped[int | None] = mapped_column(Integer)
    storage_key: Mapped[str] = mapped_column(String(1024))
    source_id: Mapped[str | None] = mapped_column(id_column_type())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class UploadChunk(Base):
    """One received chunk of an upload session: one row per (session, index), so parallel
    chunks of one session never update a shared row."""

    __tablename__ = "upload_chunks"

    asset_id: Mapped[str] = mapped_column(
        ForeignKey("assets.id", ondelete="CASCADE"), primary_key=True
    )
    chunk_index: Mapped[int] = mapped_column(Integer, primary_key=True)
    size: Mapped[int] = mapped_column(Integer)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Share(Base):
    """A diagram share: its code and where its image is stored. Shares do not expire."""

    __tablename__ = "shares"

    id: Mapped[str] = mapped_column(id_column_type(), primary_key=True, default=new_id)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id"), index=True)
    code: Mapped[str] = mapped_column(Text)
    image_key: Mapped[str] = mapped_column(String(1024))
    mime_type: Mapped[str] = mapped_column(String(127))
    extension: Mapped[str] = mapped_column(String(16))
    size: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


def table_of(model: type[Base]) -> Table:
    """The Core table of a model, for statements that skip the ORM on hot paths."""
    return cast(Table, model.__table__)
