"""Alembic environment: runs migrations over the async engine handed in by toolrun.db.migrate."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from toolrun.db import tables  # noqa: F401  (registers every table on the metadata)
from toolrun.db.base import Base

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("toolrun migrations run through `toolrun migrate`")
_run(connection)
