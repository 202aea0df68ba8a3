"""Engines and transactions.

``Database.write()`` and ``Database.read()`` each open one transaction and are
the only way code gets a session. On SQLite every write transaction starts with
``BEGIN IMMEDIATE`` (writers queue on the database lock instead of failing with
"database is locked" half-way) and reads use a separate engine with plain
deferred transactions, so WAL readers never wait for writers.

The few statements every request runs skip SQLAlchemy's per-call work: on
PostgreSQL as a ``DriverStatement`` on asyncpg itself, on SQLite as a
``Database.sqlite_unit`` of ``SqliteStatement``s run in the connection's thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

from sqlalchemy import event
from sqlalchemy.dialects.postgresql import asyncpg as postgresql_asyncpg
from sqlalchemy.dialects.sqlite import aiosqlite as sqlite_aiosqlite
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.util import greenlet_spawn

SQLITE_BUSY_TIMEOUT_MS = 30_000
# Per process. Measured (bench.http_diagnose, docs/benchmarks.md): with 40 connections per
# process PostgreSQL spent ~3 ms of CPU per keyed request in contention, with 8 ~0.35 ms; past
# the pool, requests wait their turn in the process, which is cheaper than waiting in the server.
POSTGRES_POOL_SIZE = 8


class WriteSession(AsyncSession):
    """A session inside a transaction that commits when its ``Database.write()`` block ends."""


class ReadSession(AsyncSession):
    """A session inside a read-only transaction, rolled back when its block ends."""


Executor = AsyncConnection | AsyncSession
"""What runs a Core statement: a ``Database.statement`` connection or a session."""


def _sqlite_engine(url: str, *, begin: str, connections: int) -> AsyncEngine:
    engine = create_async_engine(url, pool_size=connections, max_overflow=0, pool_timeout=60)

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin)

    return engine


def ensure_sqlite_directory(url: str) -> None:
    """Create the folder of a SQLite database file (the default lives in TOOLRUN_DATA_DIR)."""
    if url.startswith("sqlite"):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)


_ASYNCPG_DIALECT = postgresql_asyncpg.dialect()  # type: ignore[no-untyped-call]


class DriverStatement:
    """A Core statement compiled once for asyncpg, run on the driver itself by ``fetch_one``.

    For the few statements every request runs: the driver's own prepared-statement
    cache and no per-call SQLAlchemy work (~0.8 ms of CPU less per statement, measured).
    Only for statements whose parameters and columns need no SQLAlchemy type
    processing (no JSON; datetimes aware, which asyncpg gives and takes as they are).
    """

    def __init__(self, statement: ClauseElement) -> None:
        compiled = cast(SQLCompiler, statement.compile(dialect=_ASYNCPG_DIALECT))
        self.sql = str(compiled)
        self.names = tuple(compiled.positiontup or ())

    def arguments(self, parameters: dict[str, Any]) -> list[Any]:
        return [parameters[name] for name in self.names]


_SQLITE_DIALECT = sqlite_aiosqlite.dialect()

T = TypeVar("T")


class SqliteStatement:
    """A Core statement compiled once for SQLite, run on the ``sqlite3`` connection itself
    inside a :meth:`Database.sqlite_unit` (SQLAlchemy's type processing applied by hand)."""

    def __init__(self, statement: ClauseElement) -> None:
        compiled = cast(SQLCompiler, statement.compile(dialect=_SQLITE_DIALECT))
        self.sql = str(compiled)
        binds = [compiled.binds[name] for name in compiled.positiontup or ()]
        self._binds = [
            (
                bind.key,
                bind.value,
                bind.type.dialect_impl(_SQLITE_DIALECT).bind_processor(_SQLITE_DIALECT),
            )
            for bind in binds
        ]
        columns = getattr(statement, "exported_columns", ())
        self._columns = [
            (
                column.key,
                column.type.dialect_impl(_SQLITE_DIALECT).result_processor(_SQLITE_DIALECT, None),
            )
            for column in columns
        ]

    def _arguments(self, parameters: Mapping[str, Any]) -> list[Any]:
        arguments = []
        for key, default, process in self._binds:
            value = parameters.get(key, default)
            arguments.append(value if process is None or value is None else process(value))
        return arguments

    def _row(self, values: tuple[Any, ...]) -> SqliteRow:
        return SqliteRow(
            (key, value if process is None else process(value))
            for (key, process), value in zip(self._columns, values, strict=True)
        )

    def first(self, connection: sqlite3.Connection, parameters: Mapping[str, Any]) -> Any:
        """The first row (a :class:`SqliteRow`), or None."""
        values = connection.execute(self.sql, self._arguments(parameters)).fetchone()
        return None if values is None else self._row(values)

    def scalar(self, connection: sqlite3.Connection, parameters: Mapping[str, Any]) -> Any:
        """The first column of the first row, or None."""
        row = self.first(connection, parameters)
        return None if row is None else next(iter(row.values()))

    def run(self, connection: sqlite3.Connection, parameters: Mapping[str, Any]) -> None:
        connection.execute(self.sql, self._arguments(parameters))


class SqliteRow(dict[str, Any]):
    """A row of a :class:`SqliteStatement`: ``row["name"]`` and ``row.name`` alike."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class Database:
    """The engines of one database URL and the transactions opened on them."""

    def __init__(
        self, url: str, *, pool_size: int = POSTGRES_POOL_SIZE, max_overflow: int = 0
    ) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            ensure_sqlite_directory(url)
            # SQLite has one writer at a time: with one write connection, writers of this
            # process queue in the pool (in order, no sleeping) instead of in busy_timeout's
            # back-off; WAL readers run beside it on their own connections.
            self.engine = _sqlite_engine(url, begin="BEGIN IMMEDIATE", connections=1)
            self.read_engine = _sqlite_engine(url, begin="BEGIN", connections=8)
        else:
            self.engine = create_async_engine(
                url, pool_size=pool_size, max_overflow=max_overflow, pool_pre_ping=False
            )
            self.read_engine = self.engine
        # the same pool; each checkout runs without BEGIN/COMMIT (asyncpg: a client-side flag)
        self._autocommit_engine = self.engine.execution_options(isolation_level="AUTOCOMMIT")
        self._write_sessions = async_sessionmaker(
            self.engine, class_=WriteSession, expire_on_commit=False
        )
        self._read_sessions = async_sessionmaker(
            self.read_engine, class_=ReadSession, expire_on_commit=False
        )

    @property
    def dialect(self) -> str:
        return "sqlite" if self.is_sqlite else "postgresql"

    @asynccontextmanager
    async def write(self) -> AsyncIterator[WriteSession]:
        """One transaction that commits at the end of the block, or rolls back on an exception."""
        async with self._write_sessions() as session, session.begin():
            yield session

    @asynccontextmanager
    async def read(self) -> AsyncIterator[ReadSession]:
        """A session whose transaction (begun by the first query) is rolled back at the end."""
        async with self._read_sessions() as session:
            yield session

    @asynccontextmanager
    async def statement(self, *, write: bool) -> AsyncIterator[AsyncConnection]:
        """A connection for work that is one SQL statement, on the hot path of every request.

        PostgreSQL: autocommit, so the statement is its own transaction: one round
        trip, and the row locks it takes are released the moment it ends. SQLite:
        a transaction like ``write()``/``read()`` (a write starts ``BEGIN IMMEDIATE``),
        where a few statements cost no round trips.
        """
        if not self.is_sqlite:
            async with self._autocommit_engine.connect() as connection:
                yield connection
            return
        engine = self.engine if write else self.read_engine
        async with engine.connect() as connection, connection.begin():
            yield connection

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncConnection]:
        """A write transaction on a bare connection, for a hot path of a few Core statements
        that must commit together (no ORM session: ~1 ms of CPU less per transaction)."""
        async with self.engine.connect() as connection, connection.begin():
            yield connection

    async def fetch_one(self, statement: DriverStatement, parameters: dict[str, Any]) -> Any:
        """Run one autocommit statement on a pooled PostgreSQL connection's driver; its first row.

        The connection is checked out of (and back into) the same pool as every other.
        """
        assert not self.is_sqlite, "DriverStatement is for PostgreSQL"
        pooled = await self.engine.raw_connection()
        driver: Any = pooled.driver_connection
        try:
            return await driver.fetchrow(statement.sql, *statement.arguments(parameters))
        finally:
            # the pool's reset on return awaits the driver, so it must run in SQLAlchemy's greenlet
            await greenlet_spawn(pooled.close)

    async def sqlite_unit(self, work: Callable[[sqlite3.Connection], T], *, write: bool) -> T:
        """Run ``work`` in one transaction on a pooled SQLite connection, in that connection's
        thread: one thread hop for the whole unit instead of one per DBAPI call."""
        engine = self.engine if write else self.read_engine
        pooled = await engine.raw_connection()
        driver: Any = pooled.driver_connection
        begin = "BEGIN IMMEDIATE" if write else "BEGIN"
        try:
            result = await driver._execute(_in_transaction, driver._conn, begin, work)
        except BaseException:
            await greenlet_spawn(pooled.close)
            raise
        # the unit ended its transaction: no rollback-on-return (a thread hop of its own)
        await greenlet_spawn(pooled._close_special, transaction_reset=True)
        return cast(T, result)

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()


def _in_transaction(
    connection: sqlite3.Connection, begin: str, work: Callable[[sqlite3.Connection], T]
) -> T:
    connection.execute(begin)
    try:
        result = work(connection)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return result
