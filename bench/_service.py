"""Shared plumbing of the service benchmarks: databases, processes, accounts and wrk.

Everything listens on and talks to 127.0.0.1 only. Every process started here is
stopped by its own pid (SIGTERM, then SIGKILL after a grace period), and every
PostgreSQL database created here is dropped at the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
TOOLRUN = str(VENV_BIN / "toolrun")
RESULTS_DIR = Path(__file__).parent / "results"
PG_ADMIN = ["psql", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres", "-v", "ON_ERROR_STOP=1"]
HUGE_RATE_LIMIT = "1000000000"
#: Benchmarks run with TOOLRUN_LOG_LEVEL=WARNING: no per-request access log line.
LOG_LEVEL = "WARNING"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def write_results(name: str, data: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


# --- databases -------------------------------------------------------------------------------


@dataclass
class Backend:
    """One database a run uses: its URL and the data folder next to it."""

    kind: str  # "postgresql" or "sqlite"
    url: str
    data_dir: Path


@contextlib.contextmanager
def postgres_backend(tag: str) -> Iterator[Backend]:
    """A fresh database ``toolrun_bench_<pid>_<tag>`` on the local server, dropped afterwards."""
    name = f"toolrun_bench_{os.getpid()}_{tag}"
    subprocess.run([*PG_ADMIN, "-q", "-c", f"CREATE DATABASE {name}"], check=True)
    data_dir = Path(tempfile.mkdtemp(prefix=f"toolrun-bench-{tag}-"))
    try:
        yield Backend("postgresql", f"postgresql://postgres@127.0.0.1:5432/{name}", data_dir)
    finally:
        subprocess.run(
            [*PG_ADMIN, "-q", "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], check=False
        )
        shutil.rmtree(data_dir, ignore_errors=True)


@contextlib.contextmanager
def sqlite_backend(tag: str) -> Iterator[Backend]:
    data_dir = Path(tempfile.mkdtemp(prefix=f"toolrun-bench-{tag}-"))
    try:
        yield Backend("sqlite", f"sqlite:///{data_dir / 'toolrun.db'}", data_dir)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def service_env(backend: Backend, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    env.update(
        TOOLRUN_DATA_DIR=str(backend.data_dir),
        TOOLRUN_DATABASE_URL=backend.url,
        TOOLRUN_RATE_LIMIT_PER_MINUTE=HUGE_RATE_LIMIT,
        TOOLRUN_LOG_LEVEL=LOG_LEVEL,
        TOOLRUN_ALLOW_PRIVATE_NETWORKS="true",
        PYTHONPATH=str(ROOT),
    )
    env.update(extra)
    return env


def create_account_cli(env: dict[str, str]) -> dict[str, str]:
    """``toolrun accounts create --json`` (also applies the migrations)."""
    out = subprocess.run(
        [TOOLRUN, "accounts", "create", "--json"], env=env, check=True, capture_output=True
    )
    data: dict[str, str] = json.loads(out.stdout)
    return data


async def create_accounts(
    env: dict[str, str], count: int, *, signup_credits: int | None = None
) -> list[str]:
    """``count`` more accounts (10 signup credits each, or ``signup_credits``) in-process;
    returns their API keys.

    Uses the same ``accounts.create_account`` the CLI calls, without a Python start-up each.
    """
    from toolrun.config import load_settings
    from toolrun.core import accounts
    from toolrun.core.clock import system_clock
    from toolrun.db.engine import Database

    extra = {} if signup_credits is None else {"signup_credits": signup_credits}
    settings = load_settings(
        database_url=env["TOOLRUN_DATABASE_URL"], data_dir=env["TOOLRUN_DATA_DIR"], **extra
    )
    database = Database(settings.resolved_database_url, pool_size=1, max_overflow=1)
    keys: list[str] = []
    try:
        for _ in range(count):
            async with database.write() as session:
                created = await accounts.create_account(
                    session, settings=settings, now=system_clock(), name=None, anonymous=False
                )
            keys.append(created.key.raw)
    finally:
        await database.dispose()
    return keys


# --- processes --------------------------------------------------------------------------------


class Process:
    """A child process (its own process group) that is stopped by pid on exit."""

    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.args = args
        self.log_path = log
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            args, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def stop(self, grace: float = 15.0) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._log.close()

    def tail(self, lines: int = 20) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def __enter__(self) -> Process:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_http(url: str, process: Process, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.proc.poll() is not None:
            raise RuntimeError(f"{process.args} exited early:\n{process.tail()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} not up after {timeout}s:\n{process.tail()}")


def start_toolrun_serve(
    env: dict[str, str], *, port: int, http_workers: int, job_workers: int, log: Path
) -> Process:
    args = [TOOLRUN, "serve", "--host", "127.0.0.1", "--port", str(port)]
    args += ["--http-workers", str(http_workers), "--job-workers", str(job_workers)]
    process = Process(args, env, log)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", process)
    except BaseException:
        process.stop()
        raise
    return process


def start_bare_app(
    port: int, *, http_workers: int, log: Path, floor: dict[str, str] | None = None
) -> Process:
    """bench.bare_app; ``floor`` gives its ``BARE_APP_*`` database settings for /floor/credits."""
    args = [sys.executable, "-m", "bench.bare_app", "--port", str(port)]
    args += ["--http-workers", str(http_workers)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(floor or {}))
    process = Process(args, env, log)
    try:
        wait_http(f"http://127.0.0.1:{port}/openapi/credits", process)
    except BaseException:
        process.stop()
        raise
    return process


# --- wrk --------------------------------------------------------------------------------------


def ensure_wrk() -> str:
    """The wrk binary; installs the Debian package if it is missing (apt-get update on failure)."""
    found = shutil.which("wrk")
    if found:
        return found
    install = ["apt-get", "install", "-y", "wrk"]
    if subprocess.run(install, check=False, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update"], check=True, capture_output=True)
        subprocess.run(install, check=True, capture_output=True)
    found = shutil.which("wrk")
    if not found:
        raise RuntimeError("wrk could not be installed")
    return found


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text.strip())
    if not match:
        raise ValueError(f"unparsable wrk duration {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


@dataclass
class WrkResult:
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    socket_errors: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def run_wrk(
    url: str,
    *,
    api_key: str | None,
    seconds: float,
    connections: int,
    threads: int,
    script: Path | None = None,
) -> WrkResult:
    """One bounded wrk run (``--timeout 10s``, ``-d seconds``), parsed."""
    args = [
        ensure_wrk(),
        f"-t{threads}",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--latency",
    ]
    args += ["--timeout", "10s"]
    if api_key:
        args += ["-H", f"Authorization: Bearer {api_key}"]
    if script is not None:
        args += ["-s", str(script)]
    args.append(url)
    out = subprocess.run(args, check=True, capture_output=True, text=True, timeout=seconds + 60)
    text = out.stdout
    if "Latency Distribution" not in text:
        raise RuntimeError(f"wrk got no responses from {url}:\n{text}")
    percentiles = dict(re.findall(r"^\s+(50|75|90|99)%\s+(\S+)\s*$", text, re.MULTILINE))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))  # type: ignore[union-attr]
    requests = int(re.search(r"(\d+) requests in", text).group(1))  # type: ignore[union-attr]
    non_2xx_match = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    errors_match = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text
    )
    return WrkResult(
        rps=rps,
        p50_ms=_ms(percentiles["50"]),
        p90_ms=_ms(percentiles["90"]),
        p99_ms=_ms(percentiles["99"]),
        requests=requests,
        non_2xx=int(non_2xx_match.group(1)) if non_2xx_match else 0,
        socket_errors=sum(int(g) for g in errors_match.groups()) if errors_match else 0,
    )


def run_async(coro: Any) -> Any:
    return asyncio.run(coro)
