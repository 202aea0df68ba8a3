"""End-to-end fixtures: real ``toolrun`` subprocesses on loopback ports, always killed at teardown.

Every child runs with ``cwd`` set to the test's own directory (so no ``.env``
of the checkout leaks in), ``TOOLRUN_*`` taken only from what the test gives,
and stdout/stderr in a log file whose tail goes into every failure message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

import asyncpg
import httpx
import pytest

T = TypeVar("T")

START_TIMEOUT_S = 40.0
CLI_TIMEOUT_S = 60.0
LOG_TAIL_CHARS = 3000


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(
    probe: Callable[[], T | None],
    *,
    timeout: float,
    message: Callable[[], str] | str,
    every: float = 0.1,
) -> T:
    """Call ``probe`` until it returns something truthy; fail with ``message`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            text = message() if callable(message) else message
            pytest.fail(f"timed out after {timeout:g} s: {text}")
        time.sleep(every)


@dataclass
class Proc:
    """One child process and its log."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]
    url: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def log(self) -> str:
        self.log_file.flush()
        return self.log_path.read_text(errors="replace")

    def tail(self) -> str:
        return (
            f"--- {self.name} (pid {self.pid}, exit {self.popen.poll()}) log tail ---\n"
            + self.log()[-LOG_TAIL_CHARS:]
        )

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            os.kill(self.pid, sig)

    def wait(self, timeout: float) -> int:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.name} did not exit within {timeout:g} s\n{self.tail()}")


class Spawner:
    """Starts ``python -m toolrun ...`` children; ``close`` kills whatever is still running."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.procs: list[Proc] = []
        self._counter = 0

    def env(self, **overrides: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
        base.update(
            {
                "TOOLRUN_DATA_DIR": str(self.workdir / "data"),
                "TOOLRUN_ALLOW_PRIVATE_NETWORKS": "true",
                "TOOLRUN_LOG_LEVEL": "INFO",
                "PYTHONUNBUFFERED": "1",
            }
        )
        base.update(overrides)
        return base

    def start(self, name: str, args: list[str], env: Mapping[str, str]) -> Proc:
        self._counter += 1
        log_path = self.workdir / f"{self._counter:02d}-{name}.log"
        log_file = log_path.open("wb")
        popen = subprocess.Popen(
            [sys.executable, "-m", "toolrun", *args],
            cwd=self.workdir,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        proc = Proc(name=name, popen=popen, log_path=log_path, log_file=log_file)
        self.procs.append(proc)
        return proc

    def serve(
        self, env: Mapping[str, str], *, job_workers: int | None = 0, name: str = "serve"
    ) -> Proc:
        port = free_port()
        args = ["serve", "--host", "127.0.0.1", "--port", str(port)]
        if job_workers is not None:
            args += ["--job-workers", str(job_workers)]
        proc = self.start(name, args, env)
        proc.url = f"http://127.0.0.1:{port}"
        return proc

    def wait_serving(self, proc: Proc) -> None:
        def ready() -> bool:
            if not proc.alive():
                pytest.fail(f"{proc.name} exited before serving\n{proc.tail()}")
            try:
                return httpx.get(f"{proc.url}/healthz", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(
            ready,
            timeout=START_TIMEOUT_S,
            message=lambda: f"{proc.name} not serving\n{proc.tail()}",
        )

    def worker(self, env: Mapping[str, str], *, concurrency: int = 2, name: str = "worker") -> Proc:
        return self.start(name, ["worker", "--concurrency", str(concurrency)], env)

    def wait_worker_started(self, proc: Proc) -> None:
        def started() -> bool:
            if not proc.alive():
                pytest.fail(f"{proc.name} exited before starting\n{proc.tail()}")
            return " started, concurrency " in proc.log()

        wait_until(
            started,
            timeout=START_TIMEOUT_S,
            message=lambda: f"{proc.name} not started\n{proc.tail()}",
        )

    def cli_json(self, env: Mapping[str, str], *args: str) -> dict[str, Any]:
        """Run one CLI command to completion and parse its one JSON line."""
        result = subprocess.run(
            [sys.executable, "-m", "toolrun", *args],
            cwd=self.workdir,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            check=False,
        )
        assert result.returncode == 0, f"toolrun {' '.join(args)} failed:\n{result.stderr}"
        data: dict[str, Any] = json.loads(result.stdout)
        return data

    def create_accounts(self, env: Mapping[str, str], count: int) -> list[dict[str, Any]]:
        """``accounts create --json`` ``count`` times, concurrently."""
        children = [
            subprocess.Popen(
                [sys.executable, "-m", "toolrun", "accounts", "create", "--json"],
                cwd=self.workdir,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(count)
        ]
        created = []
        for child in children:
            try:
                out, err = child.communicate(timeout=CLI_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.communicate()
                pytest.fail("toolrun accounts create --json hung")
            assert child.returncode == 0, f"accounts create failed:\n{err}"
            created.append(json.loads(out))
        return created

    def close(self) -> None:
        for proc in self.procs:
            if proc.alive():
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):  # a child ignoring SIGKILL
                proc.popen.wait(10)
            proc.log_file.close()

    def tails(self) -> str:
        return "\n".join(proc.tail() for proc in self.procs)


@pytest.fixture
def spawner(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Spawner]:
    """Children of one test; killed before the test's database is dropped."""
    if "database_url" in request.fixturenames:
        request.getfixturevalue("database_url")  # set up first, so torn down after the children
    workdir = tmp_path / "e2e"
    workdir.mkdir()
    spawned = Spawner(workdir)
    try:
        yield spawned
    finally:
        spawned.close()


# --- the database, read directly ------------------------------------------------------------


def pg_fetch(url: str, query: str, *args: Any) -> list[dict[str, Any]]:
    """Rows of one query on the test's PostgreSQL database, as dicts."""

    async def fetch() -> list[dict[str, Any]]:
        connection = await asyncpg.connect(url, timeout=10)
        try:
            return [dict(row) for row in await connection.fetch(query, *args)]
        finally:
            await connection.close()

    return asyncio.run(fetch())


def jobs_by_id(url: str) -> dict[str, dict[str, Any]]:
    rows = pg_fetch(
        url,
        "SELECT id, account_id, status, attempts, payload::text AS payload, result::text AS result,"
        " error_code, credits_refunded, reservation_id, worker_id FROM jobs",
    )
    for row in rows:
        row["payload"] = json.loads(row["payload"])
        row["result"] = json.loads(row["result"]) if row["result"] is not None else None
    return {row["id"]: row for row in rows}


def assert_money_invariant(url: str) -> None:
    """balance == sum(ledger) >= 0 per account; one reservation per job; one refund per failed or
    canceled job and none for the others; no job left running."""
    accounts = pg_fetch(
        url,
        "SELECT a.id, a.balance, COALESCE(SUM(l.amount), 0) AS total, COUNT(l.seq) AS entries"
        " FROM accounts a LEFT JOIN credit_ledger l ON l.account_id = a.id GROUP BY a.id, a.balance",
    )
    assert accounts, "no accounts in the database"
    for account in accounts:
        assert account["balance"] == account["total"], f"balance != sum(ledger): {account}"
        assert account["balance"] >= 0, f"negative balance: {account}"
    ledger = pg_fetch(url, "SELECT id, account_id, reason, amount, reference FROM credit_ledger")
    by_reference: dict[str, list[dict[str, Any]]] = {}
    for entry in ledger:
        by_reference.setdefault(entry["reference"], []).append(entry)
    for job in jobs_by_id(url).values():
        assert job["status"] != "running", f"job left running: {job}"
        reservations = [e for e in ledger if e["reference"] == f"job:{job['id']}"]
        assert len(reservations) == 1, f"job {job['id']} has {len(reservations)} reservations"
        reservation = reservations[0]
        assert reservation["id"] == job["reservation_id"]
        assert reservation["amount"] == -1
        assert reservation["reason"] == "tool_use"
        refunds = by_reference.get(f"refund:{job['reservation_id']}", [])
        if job["status"] in ("failed", "canceled"):
            assert len(refunds) == 1, f"{job['status']} job {job['id']} has {len(refunds)} refunds"
            assert refunds[0]["amount"] == 1
            assert refunds[0]["reason"] == "refund"
            assert job["credits_refunded"] is True
        else:
            assert refunds == [], f"{job['status']} job {job['id']} was refunded: {refunds}"
            assert job["credits_refunded"] is False
