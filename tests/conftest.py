"""Shared fixtures: a fresh migrated database per test on SQLite *and* PostgreSQL, the app, a clock.

PostgreSQL: one template database per test process, migrated once, cloned per
test with ``CREATE DATABASE .. TEMPLATE``. SQLite: a migrated file copied per
test. A PostgreSQL server that cannot be reached fails the run; it never skips.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from toolrun.api.app import create_app
from toolrun.config import Settings
from toolrun.db.engine import Database
from toolrun.db.migrate import upgrade

PG_HOST = os.environ.get("TOOLRUN_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("TOOLRUN_TEST_PG_PORT", "5432"))
PG_USER = os.environ.get("TOOLRUN_TEST_PG_USER", "postgres")
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
TEMPLATE_DB = f"toolrun_tpl_{WORKER}_{os.getpid()}"
_counter = itertools.count()


def pg_url(database: str) -> str:
    return f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/{database}"


async def _pg_admin(*statements: str) -> None:
    try:
        connection = await asyncpg.connect(
            host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres", timeout=10
        )
    except (OSError, asyncpg.PostgresError) as exc:
        raise RuntimeError(
            f"PostgreSQL at {PG_HOST}:{PG_PORT} is required for the test suite: {exc}"
        ) from exc
    try:
        for statement in statements:
            await connection.execute(statement)
    finally:
        await connection.close()


class Clock:
    """A clock tests set and move by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "toolrun.db"
    asyncio.run(upgrade(f"sqlite+aiosqlite:///{path}"))
    return path


@pytest.fixture(scope="session")
def pg_template() -> Iterator[str]:
    asyncio.run(
        _pg_admin(
            f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}" WITH (FORCE)',
            f'CREATE DATABASE "{TEMPLATE_DB}"',
        )
    )
    asyncio.run(upgrade(Settings(database_url=pg_url(TEMPLATE_DB)).resolved_database_url))
    yield TEMPLATE_DB
    asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}" WITH (FORCE)'))


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A plain database URL (as TOOLRUN_DATABASE_URL takes it) of a fresh, migrated database."""
    if request.param == "sqlite":
        path = tmp_path / "toolrun.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    template = request.getfixturevalue("pg_template")
    name = f"toolrun_t_{WORKER}_{os.getpid()}_{next(_counter)}"
    asyncio.run(_pg_admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
    yield pg_url(name)
    asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture
def clock() -> Clock:
    return Clock(datetime(2026, 3, 2, 4, 0, 30, tzinfo=UTC))


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        rate_limit_per_minute=1000,
        allow_private_networks=True,
        _env_file=None,
    )


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Database]:
    database = Database(settings.resolved_database_url)
    yield database
    await database.dispose()


@pytest.fixture
def app(settings: Settings, db: Database, clock: Clock) -> FastAPI:
    from tests.jobkit import test_registry

    return create_app(settings, clock=clock, database=db, registry=test_registry())


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://toolrun.test") as client:
        yield client
