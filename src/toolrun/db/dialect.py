"""Statements whose SQL differs between SQLite and PostgreSQL, chosen by the session's dialect."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession


def dialect_name(session: AsyncSession) -> str:
    return session.get_bind().dialect.name


def upsert_insert(session: AsyncSession, table: Any) -> Any:
    """An INSERT that supports ``on_conflict_do_nothing`` / ``on_conflict_do_update``."""
    return upsert_insert_for(dialect_name(session), table)


def upsert_insert_for(dialect: str, table: Any) -> Any:
    """:func:`upsert_insert` for a dialect named ``postgresql`` or ``sqlite``."""
    if dialect == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)
