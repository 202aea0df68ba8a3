"""Engines and transactions.

``Database.write()`` and ``Database.read()`` each open one transaction and are
the only way code gets a session. On SQLite every write transaction starts with
``BEGIN IMMEDIATE`` (writers queue on the database lock instead of failing with
"database is locked" half-way) and reads use a separate engine with plain
deferred transactions, so WAL readers never wait for writers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from sqlalchemy import event
from sqlalchemy.dialects.postgresql import asyncpg as postgresql_asyncpg
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

    async def dispose(self) -> None:
        await self.engine.dispose()
        if self.read_engine is not self.engine:
            await self.read_engine.dispose()
