"""A real ``toolrun serve`` subprocess on a free loopback port, and accounts on it."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

START_TIMEOUT_S = 60.0
PYTHON = sys.executable


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def closed_udp_port() -> int:
    """A loopback UDP port nobody listens on (a nameserver that never answers)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True)
class Server:
    """A running server: where it listens and the environment it was started with."""

    base_url: str
    env: dict[str, str]

    def create_account(self, *, anonymous: bool = False) -> str:
        """A new account's API key (``toolrun accounts create --json``)."""
        args = [PYTHON, "-m", "toolrun", "accounts", "create", "--json"]
        if anonymous:
            args.append("--anonymous")
        done = subprocess.run(
            args, env=self.env, capture_output=True, text=True, timeout=60, check=True
        )
        key: str = json.loads(done.stdout)["apiKey"]
        return key


def _wait_ready(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"toolrun serve exited: {log.read_text()}")
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{base_url}/healthz", timeout=1.0).status_code == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"toolrun serve did not start: {log.read_text()}")


class AccountPool:
    """Accounts made ahead, ``accounts create`` running in the background while tests run."""

    def __init__(self, server: Server, ahead: int = 2) -> None:
        self._server = server
        self._ahead = ahead
        self._pending: collections.deque[subprocess.Popen[str]] = collections.deque()

    def _spawn(self) -> None:
        args = [PYTHON, "-m", "toolrun", "accounts", "create", "--json"]
        self._pending.append(
            subprocess.Popen(
                args,
                env=self._server.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )

    def take(self) -> str:
        """A new account's API key."""
        while len(self._pending) <= self._ahead:
            self._spawn()
        process = self._pending.popleft()
        out, err = process.communicate(timeout=120)
        if process.returncode != 0:
            raise RuntimeError(f"accounts create failed: {err}")
        key: str = json.loads(out)["apiKey"]
        return key

    def close(self) -> None:
        while self._pending:
            self._pending.popleft().communicate(timeout=120)


@contextlib.contextmanager
def running_server(data_dir: Path, **settings: str) -> Iterator[Server]:
    """``toolrun serve --job-workers 2`` with TOOLRUN_* ``settings`` (names without the prefix)."""
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    env = {
        **clean,
        "TOOLRUN_DATA_DIR": str(data_dir),
        "TOOLRUN_ALLOW_PRIVATE_NETWORKS": "true",
        **{f"TOOLRUN_{name.upper()}": value for name, value in settings.items()},
    }
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "serve.log"
    args = [PYTHON, "-m", "toolrun", "serve", "--port", str(port), "--job-workers", "2"]
    with log.open("wb") as output:
        process = subprocess.Popen(args, env=env, stdout=output, stderr=subprocess.STDOUT)
    try:
        _wait_ready(base_url, process, log)
        yield Server(base_url=base_url, env=env)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
