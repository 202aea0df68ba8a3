"""Apply Alembic migrations to the configured database (``toolrun migrate``; ``serve`` on start)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from toolrun.db.engine import ensure_sqlite_directory

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Any fixed number: it only has to be the same in every process that migrates.
MIGRATION_LOCK_ID = 0x7011_0001


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def _upgrade(connection: Connection, revision: str) -> None:
    if connection.dialect.name == "postgresql":
        # Several `serve` processes may start at once: one migrates, the others wait.
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK_ID})
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, revision)


async def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at ``url`` (an async SQLAlchemy URL) to ``revision``."""
    ensure_sqlite_directory(url)
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_upgrade, revision)
    finally:
        await engine.dispose()
