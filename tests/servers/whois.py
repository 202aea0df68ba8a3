"""WHOIS servers on loopback for tests (asyncio TCP, RFC 3912: one line in, text out, close).

A ``WhoisServer`` answers each query line from a table (exact query -> bytes), else
with a default answer. Behaviours for the caps: ``Behaviour.SILENT`` accepts and never
sends nor closes, ``Behaviour.STALL`` sends the answer and then keeps the connection
open, ``Behaviour.FLOOD`` sends bytes without end. ``queries`` records what arrived.

Referred servers share one port (``TOOLRUN_WHOIS_PORT``), so a chain lives on several
loopback addresses with one port: ``WhoisChain`` starts the root on 127.0.0.1 (any
port) and the referred servers on 127.0.0.2, 127.0.0.3, ... all on one port, plus the
``DnsServer`` zone that names them::

    async with WhoisChain({"whois.registry.test": registry, "whois.registrar.test": registrar},
                          root=root) as chain:
        settings = chain.settings()
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import Callable, Mapping
from types import TracebackType

from tests.servers.dns import DnsServer
from toolrun.config import Settings

FLOOD_CHUNK = b"% flood " + b"x" * 4088 + b"\n"


class Behaviour(enum.Enum):
    """How a server treats every connection."""

    ANSWER = "answer"
    SILENT = "silent"
    STALL = "stall"
    FLOOD = "flood"


Answer = bytes | str
Responder = Callable[[str], Answer]


def _bytes(answer: Answer) -> bytes:
    return answer.encode("utf-8") if isinstance(answer, str) else answer


class WhoisServer:
    """One WHOIS server on ``host``; ``port`` 0 picks a free port."""

    def __init__(
        self,
        answers: Mapping[str, Answer] | Responder | None = None,
        *,
        default: Answer = "No match for the query.\n",
        behaviour: Behaviour = Behaviour.ANSWER,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.answers = answers or {}
        self.default = default
        self.behaviour = behaviour
        self.host = host
        self.port = port
        self.queries: list[str] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    def answer_for(self, query: str) -> bytes:
        if callable(self.answers):
            return _bytes(self.answers(query))
        return _bytes(self.answers.get(query, self.default))

    async def start(self) -> WhoisServer:
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await task
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> WhoisServer:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            line = await reader.readline()
            query = line.decode("utf-8", "replace").rstrip("\r\n")
            self.queries.append(query)
            if self.behaviour is Behaviour.SILENT:
                await asyncio.Event().wait()
            if self.behaviour is Behaviour.FLOOD:
                while True:
                    writer.write(FLOOD_CHUNK)
                    await writer.drain()
            writer.write(self.answer_for(query))
            await writer.drain()
            if self.behaviour is Behaviour.STALL:
                await asyncio.Event().wait()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()


class WhoisChain:
    """A root server plus named referred servers sharing one port, and the DNS naming them."""

    def __init__(self, servers: Mapping[str, WhoisServer], *, root: WhoisServer) -> None:
        self.root = root
        self.servers = dict(servers)
        self.dns = DnsServer()
        self.port = 0

    async def start(self) -> WhoisChain:
        await self.root.start()
        for attempt in range(20):
            try:
                await self._start_referred()
                break
            except OSError:
                for server in self.servers.values():
                    await server.stop()
                if attempt == 19:
                    raise
        self.dns.start()
        for index, name in enumerate(self.servers, start=2):
            self.dns.add(f"{name}. 300 IN A 127.0.0.{index}")
        return self

    async def _start_referred(self) -> None:
        port = 0
        for index, server in enumerate(self.servers.values(), start=2):
            server.host, server.port = f"127.0.0.{index}", port
            await server.start()
            port = server.port
        self.port = port

    async def stop(self) -> None:
        for server in self.servers.values():
            await server.stop()
        await self.root.stop()
        self.dns.stop()

    def settings(self, **overrides: object) -> Settings:
        """Settings that start at the root and resolve the referred servers' names."""
        values: dict[str, object] = {
            "allow_private_networks": True,
            "whois_server": (self.root.host, self.root.port),
            "whois_port": self.port or 43,
            "dns_nameservers": [self.dns.nameserver],
            "http_timeout_s": 2.0,
            "_env_file": None,
        }
        values.update(overrides)
        return Settings(**values)  # type: ignore[arg-type]

    async def __aenter__(self) -> WhoisChain:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
