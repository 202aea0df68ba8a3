"""API keys: generated with high entropy, shown once, stored only as a SHA-256 hash.

A key looks like ``trk_`` + 43 URL-safe characters (256 random bits). Lookup is
by the hash through a unique index: no table scan, and the comparison happens
on a digest, so response time says nothing about how close a guess was.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select, update

from toolrun.core.errors import InvalidInput, NotFound
from toolrun.db.engine import ReadSession, WriteSession
from toolrun.db.tables import Account, ApiKey

KEY_PREFIX = "trk_"
KEY_PATTERN = re.compile(r"^trk_[A-Za-z0-9_-]{43}$")
SHOWN_PREFIX_LENGTH = 10


def hash_key(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


@dataclass(frozen=True)
class NewKey:
    key: ApiKey
    raw: str


async def create_key(
    session: WriteSession, *, account_id: str, now: datetime, expires_in_days: int | None = None
) -> NewKey:
    if expires_in_days is not None and expires_in_days < 1:
        raise InvalidInput("expires-in-days must be at least 1", field="expiresInDays")
    if await session.get(Account, account_id) is None:
        raise NotFound(f"account {account_id} not found")
    raw = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(
        account_id=account_id,
        key_hash=hash_key(raw),
        prefix=raw[:SHOWN_PREFIX_LENGTH],
        created_at=now,
        expires_at=now + timedelta(days=expires_in_days) if expires_in_days else None,
    )
    session.add(key)
    await session.flush()
    return NewKey(key=key, raw=raw)


def refusal(
    *, revoked_at: datetime | None, expires_at: datetime | None, disabled: bool, now: datetime
) -> str | None:
    """Why a key (and its account's ``disabled``) is refused at ``now``, if it is."""
    if revoked_at is not None:
        return "API key has been revoked"
    if expires_at is not None and expires_at <= now:
        return "API key has expired"
    if disabled:
        return "account is disabled"
    return None


async def list_keys(session: ReadSession, *, account_id: str) -> list[ApiKey]:
    if await session.get(Account, account_id) is None:
        raise NotFound(f"account {account_id} not found")
    result = await session.scalars(
        select(ApiKey).where(ApiKey.account_id == account_id).order_by(ApiKey.created_at)
    )
    return list(result)


async def revoke_key(session: WriteSession, *, key_id: str, now: datetime) -> ApiKey:
    key = await session.get(ApiKey, key_id)
    if key is None:
        raise NotFound(f"key {key_id} not found")
    if key.revoked_at is None:
        await session.execute(update(ApiKey).where(ApiKey.id == key_id).values(revoked_at=now))
        key.revoked_at = now
    return key
