"""The worker: claims jobs up to its concurrency, renews their leases, reaps, shuts down gracefully.

Side tasks (lease renewal, reaper, maintenance) log and go on after an error;
the claim loop backs off for a second when the database is unreachable.
On stop it claims nothing more, lets running jobs finish within the grace
period, and puts the rest back in the queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any

from toolrun.config import Settings
from toolrun.core import jobs, ratelimit
from toolrun.core.clock import Clock, system_clock
from toolrun.db import queue
from toolrun.db.engine import Database
from toolrun.db.tables import Job
from toolrun.tools.registry import Registry
from toolrun.worker.runner import run_job

REAP_EVERY_S = 1.0
MAINTENANCE_EVERY_S = 60.0
RELISTEN_EVERY_S = 5.0
SHUTDOWN_GRACE_S = 20.0
ERROR_BACKOFF_S = 1.0
log = logging.getLogger("toolrun.worker")

MaintenanceTask = Callable[[], Awaitable[None]]


class Worker:
    def __init__(
        self,
        *,
        settings: Settings,
        db: Database,
        registry: Registry,
        concurrency: int,
        clock: Clock = system_clock,
        wakeup: queue.Wakeup | None = None,
        services: Mapping[str, Any] | None = None,
        listen: bool = True,
        poll_interval_s: float | None = None,
        shutdown_grace_s: float = SHUTDOWN_GRACE_S,
        maintenance: list[MaintenanceTask] | None = None,
    ) -> None:
        self.id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.settings = settings
        self.db = db
        self.registry = registry
        self.concurrency = max(1, concurrency)
        self.clock = clock
        self.wakeup = wakeup or queue.Wakeup()
        self.services = services or {}
        self.listen = listen
        self.poll_interval_s = poll_interval_s or settings.job_poll_interval_s
        self.shutdown_grace_s = shutdown_grace_s
        self.maintenance = maintenance or []
        self.lease = timedelta(seconds=settings.job_lease_s)
        self._running: dict[str, asyncio.Task[None]] = {}
        self._stopping = False

    def stop(self) -> None:
        """Claim nothing more; ``run`` returns once running jobs are finished or requeued."""
        self._stopping = True
        self.wakeup.notify_local()

    async def run(self) -> None:
        if self.listen and self.settings.job_wakeup == "notify" and not self.db.is_sqlite:
            await self.wakeup.listen(self.db.url)
        side_tasks = [
            asyncio.create_task(self._every(self.lease.total_seconds() / 3, self._renew)),
            asyncio.create_task(self._every(REAP_EVERY_S, self._reap)),
            asyncio.create_task(self._every(MAINTENANCE_EVERY_S, self._maintain)),
            asyncio.create_task(self._every(RELISTEN_EVERY_S, self.wakeup.keep_listening)),
        ]
        log.info("worker %s started, concurrency %d", self.id, self.concurrency)
        try:
            await self._claim_loop()
            await self._drain()
        finally:
            for task in side_tasks:
                task.cancel()
            await asyncio.gather(*side_tasks, return_exceptions=True)
            await self.wakeup.close()
            log.info("worker %s stopped", self.id)

    async def _claim_loop(self) -> None:
        while not self._stopping:
            if len(self._running) >= self.concurrency:
                await asyncio.wait(
                    list(self._running.values()),
                    timeout=self.poll_interval_s,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                continue
            try:
                job = await self._claim()
            except Exception:
                log.exception("claim failed; retrying in %s s", ERROR_BACKOFF_S)
                await asyncio.sleep(ERROR_BACKOFF_S)
                continue
            if job is None:
                await self.wakeup.wait(self.poll_interval_s)
                continue
            task = asyncio.create_task(self._run(job))
            self._running[job.id] = task
            task.add_done_callback(self._forget(job.id))

    def _forget(self, job_id: str) -> Callable[[asyncio.Task[None]], None]:
        def forget(_: asyncio.Task[None]) -> None:
            self._running.pop(job_id, None)

        return forget

    async def _claim(self) -> Job | None:
        async with self.db.statement(write=True) as connection:
            return await queue.claim(
                connection, worker_id=self.id, now=self.clock(), lease=self.lease
            )

    async def _run(self, job: Job) -> None:
        try:
            await run_job(
                job,
                worker_id=self.id,
                db=self.db,
                registry=self.registry,
                settings=self.settings,
                clock=self.clock,
                services=self.services,
            )
        except asyncio.CancelledError:
            await asyncio.shield(self._requeue(job.id))
            raise
        except Exception:
            log.exception("recording the outcome of job %s failed; the reaper will retry", job.id)

    async def _requeue(self, job_id: str) -> None:
        try:
            async with self.db.write() as session:
                await queue.requeue(session, job_id=job_id, worker_id=self.id)
                await queue.send_wakeup(session)
        except Exception:
            log.exception("could not requeue job %s; its lease will expire", job_id)

    async def _drain(self) -> None:
        if not self._running:
            return
        tasks = list(self._running.values())
        log.info("waiting up to %s s for %d running jobs", self.shutdown_grace_s, len(tasks))
        _, pending = await asyncio.wait(tasks, timeout=self.shutdown_grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    async def _every(self, seconds: float, action: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await action()
            except Exception:
                log.exception("%s failed", getattr(action, "__name__", "side task"))

    async def _renew(self) -> None:
        held = list(self._running)
        if not held:
            return
        async with self.db.write() as session:
            await queue.renew_leases(
                session, job_ids=held, worker_id=self.id, now=self.clock(), lease=self.lease
            )

    async def _reap(self) -> None:
        async with self.db.write() as session:
            reaped = await jobs.reap(session, now=self.clock(), settings=self.settings)
        if reaped.requeued:
            self.wakeup.notify_local()
        if reaped.timed_out or reaped.requeued or reaped.given_up:
            log.info(
                "reaper: %d past deadline, %d requeued, %d given up",
                reaped.timed_out,
                reaped.requeued,
                reaped.given_up,
            )

    async def _maintain(self) -> None:
        async with self.db.write() as session:
            now = self.clock()
            await jobs.purge_idempotency_keys(session, now=now)
            await ratelimit.purge_old_windows(session, now=now)
        for task in self.maintenance:
            await task()


async def run_until_stopped(worker: Worker, *, install_signals: bool = True) -> None:
    """Run a worker until SIGTERM or SIGINT (the ``toolrun worker`` command)."""
    import signal

    loop = asyncio.get_running_loop()
    if install_signals:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, worker.stop)
    await worker.run()
