"""MCP progress notifications for the waits of one tool call.

The API client waits in two places: between polls (the job's ``pollAfterMs``)
and before retrying a 429 (``Retry-After``) or a 5xx. ``CallProgress.sleep`` is
the client's ``sleep``: it tells the caller what it waits for, then waits.
``observe`` is the client's job callback, so the message names the job's state.
Without a progress token in the request, the SDK sends nothing.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from toolrun.client import Job


class ProgressSink(Protocol):
    """Where progress goes: ``ServerSession.report_progress`` of the request being served."""

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None: ...


class CallProgress:
    """Counts one tool call's waits and reports each before it starts."""

    def __init__(self, sink: ProgressSink) -> None:
        self._sink = sink
        self._step = 0
        self._job: Job | None = None

    def observe(self, job: Job) -> None:
        """Remember the latest state of the call's job."""
        self._job = job

    def message(self, seconds: float) -> str:
        """What the call is waiting for."""
        if self._job is None:
            return f"waiting {seconds:g} s before trying again (rate limit or busy server)"
        return f"job {self._job.id} is {self._job.status}; checking again in {seconds:g} s"

    async def sleep(self, seconds: float) -> None:
        """Report the wait (progress counts waits: 1, 2, 3, ...), then wait."""
        self._step += 1
        await self._sink.report_progress(self._step, None, self.message(seconds))
        await asyncio.sleep(seconds)
