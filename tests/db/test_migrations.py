from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from toolrun.db.base import Base
from toolrun.db.engine import Database
from toolrun.db.migrate import upgrade


def _diff(connection: Connection) -> list[object]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


async def test_migrated_schema_equals_the_models(db: Database) -> None:
    async with db.engine.connect() as connection:
        diff = await connection.run_sync(_diff)
    assert diff == []


async def test_upgrade_is_idempotent(db: Database) -> None:
    await upgrade(db.url)
    async with db.engine.connect() as connection:
        tables = await connection.run_sync(lambda c: set(inspect(c).get_table_names()))
    assert {"accounts", "api_keys", "credit_ledger", "check_ins", "rate_limit_windows"} <= tables
