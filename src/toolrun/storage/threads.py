"""A private thread pool for a backend's blocking calls (file I/O, boto3)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class ThreadRunner:
    """Runs blocking functions in the backend's own pool.

    An own pool, not the loop's default executor, so storage I/O and image
    work (which also runs in threads) cannot starve each other.
    """

    def __init__(self, max_workers: int, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix=name)

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """Return ``function(*args)`` run in the pool.

        A thread cannot be stopped: if the caller is cancelled, wait for the
        call to end before re-raising, so the caller's cleanup (closing or
        deleting a temporary file) never races a write still in flight.
        """
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, functools.partial(function, *args))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            await asyncio.wait({future})
            if not future.cancelled():
                future.exception()  # mark retrieved: the cancellation is what propagates
            raise

    async def close(self) -> None:
        """Wait for running calls, then stop the threads."""
        await asyncio.to_thread(self._executor.shutdown, wait=True)
