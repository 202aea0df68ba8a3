"""DNS questions of one check run: asked at most once each, concurrently.

Every check reads from the same ``Lookups``: the first ``get(name, type)`` starts
the query, later ones await the same task, so independent checks ask in parallel
and nothing is asked twice.
"""

from __future__ import annotations

import asyncio

from toolrun.config import Settings
from toolrun.net.dns import NXDOMAIN, DnsAnswer, InvalidName, query

QUERY_TIMEOUT_S = 4.0


def question_key(name: str, rtype: str) -> tuple[str, str]:
    """``(name, type)`` as answers are filed: lower case, no trailing dot, upper-case type."""
    return name.lower().rstrip("."), rtype.upper()


class Lookups:
    """A per-run cache of DNS answers."""

    def __init__(self, settings: Settings, *, timeout: float = QUERY_TIMEOUT_S) -> None:
        self.settings = settings
        self.timeout = timeout
        self._tasks: dict[tuple[str, str], asyncio.Task[DnsAnswer]] = {}

    def start(self, name: str, rtype: str) -> asyncio.Task[DnsAnswer]:
        """The task answering ``(name, rtype)``, started on the first call."""
        key = question_key(name, rtype)
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.ensure_future(self._ask(*key))
            self._tasks[key] = task
        return task

    async def _ask(self, name: str, rtype: str) -> DnsAnswer:
        try:
            return await query(name, rtype, self.settings, timeout=self.timeout)
        except InvalidName:
            # a name from a record (an SPF include, an MX host) that cannot exist in DNS
            return DnsAnswer(rtype, NXDOMAIN, [], "not asked: invalid name", False)

    async def get(self, name: str, rtype: str) -> DnsAnswer:
        """The answer for ``(name, rtype)``, asked once per run."""
        return await self.start(name, rtype)

    async def many(self, questions: list[tuple[str, str]]) -> list[DnsAnswer]:
        return list(await asyncio.gather(*(self.get(n, t) for n, t in questions)))

    def answers(self) -> dict[tuple[str, str], DnsAnswer]:
        """Every answer received so far, by ``(name, type)`` as ``question_key`` writes them."""
        return {
            key: task.result()
            for key, task in self._tasks.items()
            if task.done() and not task.cancelled() and task.exception() is None
        }

    @property
    def asked(self) -> int:
        return len(self._tasks)

    async def aclose(self) -> None:
        """Cancel what is still running (a check that failed early)."""
        pending = [t for t in self._tasks.values() if not t.done()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
