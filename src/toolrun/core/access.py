"""Who is calling and may they: the API key check and the request count, in one round trip.

Every keyed request runs this before anything else. On PostgreSQL it is one
statement (a data-modifying CTE) in autocommit: the key is looked up by its
hash through the unique index, and only a key that is usable counts a request
in the account's window of the current UTC minute. On SQLite the same two steps
run as two statements inside ``BEGIN IMMEDIATE``. Both are atomic: concurrent
requests of one account each get their own count.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select, text
from sqlalchemy.dialects import sqlite

from toolrun.core.errors import Unauthenticated
from toolrun.core.keys import KEY_PATTERN, hash_key, refusal
from toolrun.core.ratelimit import WINDOW, RateLimitStatus, window_start
from toolrun.db.base import UTCDateTime
from toolrun.db.engine import Database, DriverStatement, SqliteStatement
from toolrun.db.tables import Account, ApiKey, RateLimitWindow

_ACCOUNT_COLUMNS = (
    "id",
    "name",
    "is_anonymous",
    "disabled",
    "balance",
    "anonymous_spent",
    "anonymous_limit",
    "created_at",
    "registered_at",
)

_POSTGRES_CTE = text(
    f"""
    WITH caller AS (
        SELECT {", ".join(f"a.{name}" for name in _ACCOUNT_COLUMNS)},
               k.revoked_at, k.expires_at
        FROM api_keys AS k JOIN accounts AS a ON a.id = k.account_id
        WHERE k.key_hash = :key_hash
    ), counted AS (
        INSERT INTO rate_limit_windows (account_id, window_start, count)
        SELECT id, :window_start, 1 FROM caller
        WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > :now) AND NOT disabled
        ON CONFLICT (account_id, window_start)
        DO UPDATE SET count = rate_limit_windows.count + 1
        RETURNING count
    )
    SELECT caller.*, (SELECT count FROM counted) AS request_count FROM caller
    """
).bindparams(
    bindparam("window_start", type_=UTCDateTime()),
    bindparam("now", type_=UTCDateTime()),
)
_POSTGRES_CHECK_AND_COUNT = DriverStatement(_POSTGRES_CTE)

_KEY_AND_ACCOUNT = (
    select(
        *(Account.__table__.c[name] for name in _ACCOUNT_COLUMNS),
        ApiKey.revoked_at,
        ApiKey.expires_at,
    )
    .join_from(ApiKey, Account, Account.id == ApiKey.account_id)
    .where(ApiKey.key_hash == bindparam("key_hash"))
)

_window = RateLimitWindow.__table__
_SQLITE_COUNT = (
    sqlite.insert(RateLimitWindow)
    .values(account_id=bindparam("account_id"), window_start=bindparam("window_start"), count=1)
    .on_conflict_do_update(
        index_elements=[_window.c.account_id, _window.c.window_start],
        set_={"count": _window.c.count + 1},
    )
    .returning(_window.c.count)
)


_SQLITE_KEY_AND_ACCOUNT = SqliteStatement(_KEY_AND_ACCOUNT)
_SQLITE_COUNT_STATEMENT = SqliteStatement(_SQLITE_COUNT)


@dataclass(frozen=True)
class Caller:
    """The account behind a usable key, and its request count in this minute."""

    account: Account
    rate_limit: RateLimitStatus


async def check_and_count(db: Database, raw_key: str, *, now: datetime, limit: int) -> Caller:
    """The caller of ``raw_key`` with one more request counted; ``Unauthenticated`` otherwise.

    A refused key counts nothing. The caller decides what an exceeded limit means.
    """
    if not KEY_PATTERN.match(raw_key):
        raise Unauthenticated("API key is malformed: expected trk_ followed by 43 characters")
    start = window_start(now)
    key_hash = hash_key(raw_key)
    if db.is_sqlite:
        row, count = await _sqlite_check_and_count(db, key_hash, start, now)
    else:
        row = await db.fetch_one(
            _POSTGRES_CHECK_AND_COUNT, {"key_hash": key_hash, "window_start": start, "now": now}
        )
        count = None if row is None else row["request_count"]
    if row is None:
        raise Unauthenticated("API key is not valid")
    reason = _refusal(row, now)
    if reason is not None or count is None:
        raise Unauthenticated(reason or "API key is not valid")
    account = Account(**{name: row[name] for name in _ACCOUNT_COLUMNS})
    return Caller(
        account=account,
        rate_limit=RateLimitStatus(limit=limit, count=count, reset_at=start + WINDOW),
    )


def _refusal(row: Any, now: datetime) -> str | None:
    return refusal(
        revoked_at=row["revoked_at"],
        expires_at=row["expires_at"],
        disabled=row["disabled"],
        now=now,
    )


async def _sqlite_check_and_count(
    db: Database, key_hash: str, start: datetime, now: datetime
) -> tuple[Any, int | None]:
    def work(connection: Any) -> tuple[Any, int | None]:
        row = _SQLITE_KEY_AND_ACCOUNT.first(connection, {"key_hash": key_hash})
        if row is None or _refusal(row, now) is not None:
            return row, None
        counted = _SQLITE_COUNT_STATEMENT.first(
            connection, {"account_id": row["id"], "window_start": start}
        )
        return row, counted["count"]

    return await db.sqlite_unit(work, write=True)
