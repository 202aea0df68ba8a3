"""``Database.sqlite_unit`` and ``SqliteStatement``: a whole unit of SQLite work in one thread hop,
with the same values, transactions and pooling as the SQLAlchemy path."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import bindparam, insert, select

from tests.factories import create_account
from toolrun.config import Settings
from toolrun.db.engine import Database, SqliteStatement
from toolrun.db.tables import RateLimitWindow

WINDOW = datetime(2026, 3, 2, 4, 0, tzinfo=UTC)

_window = RateLimitWindow.__table__
_INSERT = SqliteStatement(
    insert(RateLimitWindow).values(
        account_id=bindparam("account_id"), window_start=bindparam("window_start"), count=7
    )
)
_READ = SqliteStatement(
    select(_window.c.window_start, _window.c.count).where(
        _window.c.account_id == bindparam("account_id")
    )
)


class Boom(Exception):
    pass


@pytest.fixture
async def sqlite_db(sqlite_template: Path, tmp_path: Path) -> AsyncIterator[Database]:
    path = tmp_path / "unit.db"
    shutil.copy(sqlite_template, path)
    database = Database(f"sqlite+aiosqlite:///{path}")
    yield database
    await database.dispose()


async def _account(db: Database) -> str:
    settings = Settings(database_url=db.url)
    return (await create_account(db, settings)).id


async def test_values_round_trip_through_the_column_types(sqlite_db: Database) -> None:
    account_id = await _account(sqlite_db)
    parameters = {"account_id": account_id, "window_start": WINDOW}
    await sqlite_db.sqlite_unit(lambda c: _INSERT.run(c, parameters), write=True)

    row = await sqlite_db.sqlite_unit(lambda c: _READ.first(c, parameters), write=False)
    assert row["window_start"] == WINDOW
    assert row["window_start"].tzinfo is not None
    assert row.count == 7  # rows read by key and by attribute alike
    async with sqlite_db.read() as session:  # stored as the ORM stores it
        stored = await session.scalar(select(RateLimitWindow.window_start))
    assert stored == WINDOW


async def test_a_failing_unit_rolls_back_and_returns_its_connection(sqlite_db: Database) -> None:
    account_id = await _account(sqlite_db)
    parameters = {"account_id": account_id, "window_start": WINDOW}

    def insert_then_fail(connection: sqlite3.Connection) -> None:
        _INSERT.run(connection, parameters)
        raise Boom()

    with pytest.raises(Boom):
        await sqlite_db.sqlite_unit(insert_then_fail, write=True)
    # the one write connection is back in the pool, with no transaction left open
    read = await asyncio.wait_for(
        sqlite_db.sqlite_unit(lambda c: _READ.first(c, parameters), write=True), timeout=10
    )
    assert read is None
    async with sqlite_db.write() as session:
        session.add(RateLimitWindow(account_id=account_id, window_start=WINDOW, count=1))
    assert await sqlite_db.sqlite_unit(lambda c: _READ.scalar(c, parameters), write=False) == WINDOW


async def test_concurrent_write_units_each_see_the_one_before(sqlite_db: Database) -> None:
    account_id = await _account(sqlite_db)
    parameters = {"account_id": account_id, "window_start": WINDOW}
    count = SqliteStatement(
        select(_window.c.count).where(_window.c.account_id == bindparam("account_id"))
    )
    await sqlite_db.sqlite_unit(lambda c: _INSERT.run(c, parameters), write=True)

    def increment(connection: sqlite3.Connection) -> int:
        seen: int = count.scalar(connection, parameters)
        connection.execute("UPDATE rate_limit_windows SET count = ?", (seen + 1,))
        return seen

    seen = await asyncio.gather(*(sqlite_db.sqlite_unit(increment, write=True) for _ in range(40)))
    assert sorted(seen) == list(range(7, 47))
    assert await sqlite_db.sqlite_unit(lambda c: count.scalar(c, parameters), write=False) == 47
