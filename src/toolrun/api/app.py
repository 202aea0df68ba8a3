"""The application factory: one FastAPI app over one database, with its routes and handlers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Protocol

from fastapi import FastAPI

from toolrun.api import errors
from toolrun.api.agent_tools import mount_agent_tools
from toolrun.api.context import AppContext
from toolrun.api.metrics import HttpMetrics
from toolrun.api.middleware import RequestMiddleware
from toolrun.api.routes import credits, health, jobs, shares, tools, uploads
from toolrun.config import Settings
from toolrun.core import ratelimit
from toolrun.core.clock import Clock, system_clock
from toolrun.db.engine import Database
from toolrun.db.queue import Wakeup
from toolrun.storage import Storage, open_storage
from toolrun.tools.registry import Registry, default_registry

API_VERSION = "2.0.0"


class JobRunner(Protocol):
    """What the app needs of in-process workers: run until told to stop."""

    async def run(self) -> None: ...

    def stop(self) -> None: ...


HOUSEKEEPING_INTERVAL_S = 60.0
log = logging.getLogger("toolrun.api")


async def _housekeeping(context: AppContext) -> None:
    """Drop rate-limit counters of minutes that are over."""
    while True:
        await asyncio.sleep(HOUSEKEEPING_INTERVAL_S)
        try:
            async with context.db.write() as session:
                await ratelimit.purge_old_windows(session, now=context.clock())
        except Exception:
            log.exception("housekeeping failed")


def create_app(
    settings: Settings,
    *,
    clock: Clock = system_clock,
    registry: Registry | None = None,
    database: Database | None = None,
    job_runner: Callable[[AppContext], JobRunner] | None = None,
    storage: Storage | None = None,
) -> FastAPI:
    """Build the API; ``job_runner`` builds its in-process workers (when TOOLRUN_JOB_WORKERS > 0).

    ``database`` and ``storage`` let a caller share ones it owns (tests); else
    the app owns them and closes them when its lifespan ends.
    """
    owns_database = database is None
    owns_storage = storage is None
    db = database or Database(settings.resolved_database_url)
    blobs = storage or open_storage(settings)
    metrics = HttpMetrics()
    wakeup = Wakeup()
    context = AppContext(
        settings=settings,
        db=db,
        clock=clock,
        registry=registry or default_registry(),
        services={"metrics": metrics, "wakeup": wakeup, "storage": blobs},
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        background = [asyncio.create_task(_housekeeping(context))]
        worker = job_runner(context) if job_runner and settings.job_workers > 0 else None
        if worker is not None:
            background.append(asyncio.create_task(worker.run()))
        try:
            async with agent_tools.run():
                yield
        finally:
            if worker is not None:
                worker.stop()
                await background.pop()
            for task in background:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if owns_database:
                await db.dispose()
            if owns_storage:
                await blobs.aclose()

    app = FastAPI(
        title="toolrun",
        version=API_VERSION,
        description="Credit-metered website, domain and image tools as asynchronous jobs.",
        lifespan=lifespan,
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.context = context
    errors.install(app)
    app.include_router(health.router)
    app.include_router(credits.router)
    app.include_router(jobs.router)
    app.include_router(tools.build_router(context.registry))
    app.include_router(uploads.router)
    app.include_router(uploads.chunk_router)
    app.include_router(shares.router)
    app.include_router(shares.public_router)
    agent_tools = mount_agent_tools(app, context)
    app.add_middleware(RequestMiddleware, metrics=metrics, clock=clock)
    return app
