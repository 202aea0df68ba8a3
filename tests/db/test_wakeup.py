"""The LISTEN/NOTIFY wake-up of workers on PostgreSQL, including a lost LISTEN connection."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from tests.conftest import PG_HOST, PG_PORT, PG_USER
from toolrun.config import Settings
from toolrun.db.queue import CHANNEL, Wakeup


async def _notify(settings: Settings) -> None:
    connection = await asyncpg.connect(
        host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres"
    )
    try:
        await connection.execute(f"NOTIFY {CHANNEL}")
    finally:
        await connection.close()


async def _woken(wakeup: Wakeup, within_s: float) -> bool:
    started = asyncio.get_running_loop().time()
    await wakeup.wait(within_s)
    return asyncio.get_running_loop().time() - started < within_s * 0.9


async def _terminate(backend_pid: int) -> None:
    connection = await asyncpg.connect(
        host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres"
    )
    try:
        await connection.execute("SELECT pg_terminate_backend($1)", backend_pid)
    finally:
        await connection.close()


@pytest.fixture
def postgres_settings() -> Settings:
    return Settings(
        database_url=f"postgresql://{PG_USER}@{PG_HOST}:{PG_PORT}/postgres", _env_file=None
    )


async def test_a_notification_wakes_and_a_lost_listen_connection_is_replaced(
    postgres_settings: Settings,
) -> None:
    wakeup = Wakeup()
    await wakeup.listen(postgres_settings.resolved_database_url)
    try:
        await _notify(postgres_settings)
        assert await _woken(wakeup, 5)
        await _terminate(wakeup._connection.get_server_pid())  # this listener only
        assert await _woken(wakeup, 5), "a lost connection wakes the loop once"
        for _ in range(50):
            if not wakeup.listening:
                break
            await asyncio.sleep(0.05)
        assert not wakeup.listening
        await wakeup.keep_listening()
        assert wakeup.listening
        await _notify(postgres_settings)
        assert await _woken(wakeup, 5)
    finally:
        await wakeup.close()
