"""Keyed, rate-limited read throughput of the API against a bare FastAPI app, with wrk.

    .venv/bin/python -m bench.http_bench [--seconds 10] [--warmup 3]

Measures, each with wrk (2 threads — the machine has 2 cores, shared by wrk and
the server — 64 connections, ``--latency``) after a warm-up run:

(a) ``GET /openapi/credits`` with one API key on PostgreSQL, ``--http-workers 2``;
(b) the same on SQLite with ``--http-workers 1`` and ``--http-workers 2``;
(c) ``GET /openapi/jobs/{id}`` of one finished dns-lookup job on PostgreSQL,
    ``--http-workers 2``;
(d) (a) again with 64 API keys of 64 accounts in rotation (a wrk Lua script), to
    separate the cost of one hot rate-limit row from the cost of the request;
(e) floors, served by the bare app itself: its envelope with one database read
    per request (credits; jobs/{id}), and the jobs/{id} read with the least a
    keyed, rate-limited request needs (key hash checked, request counted, job
    read, in one statement). No implementation that reads or counts in the
    database per request can beat its floor.

Every keyed request authenticates the key and upserts the account's rate-limit
counter (TOOLRUN_RATE_LIMIT_PER_MINUTE=1000000000: the code path runs, nothing is
refused). ``serve --job-workers 0``; TOOLRUN_LOG_LEVEL=WARNING (no access log).
The baseline is bench/bare_app.py (constant envelopes, same uvicorn options, same
worker count), measured in the same run right before the service. The figure is
service req/s / bare req/s; targets: ratio >= 0.35 and p99 <= 50 ms. Prints a
table and writes bench/results/http.json.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench._service import (
    TOOLRUN,
    Backend,
    Process,
    WrkResult,
    create_account_cli,
    create_accounts,
    ensure_wrk,
    free_port,
    machine,
    postgres_backend,
    run_wrk,
    service_env,
    sqlite_backend,
    start_bare_app,
    start_toolrun_serve,
    wait_http,
    write_results,
)

CONNECTIONS = 64
THREADS = 2
TARGET_RATIO = 0.35
TARGET_P99_MS = 50.0
KEYS_FOR_ROTATION = 64

LUA_ROTATE = """
keys = {%s}
counter = 0
request = function()
  counter = counter + 1
  wrk.headers["Authorization"] = "Bearer " .. keys[(counter %% #keys) + 1]
  return wrk.format("GET", nil)
end
"""


def measure(
    url: str, *, api_key: str | None, seconds: float, warmup: float, script: Path | None = None
) -> WrkResult:
    common: dict[str, Any] = {"connections": CONNECTIONS, "threads": THREADS, "script": script}
    run_wrk(url, api_key=api_key, seconds=warmup, **common)
    return run_wrk(url, api_key=api_key, seconds=seconds, **common)


def finished_job(env: dict[str, str], base: str, api_key: str, workdir: Path) -> str:
    """Submit one dns-lookup job and let a short-lived worker finish it; returns its id."""
    from tests.servers.dns import EXAMPLE_ZONE, DnsServer

    with DnsServer(EXAMPLE_ZONE) as dns_server:
        worker_env = dict(env, TOOLRUN_DNS_NAMESERVERS=dns_server.address)
        headers = {"Authorization": f"Bearer {api_key}"}
        response = httpx.post(
            f"{base}/openapi/tools/dns-lookup/execute",
            json={"domain": "example.test", "types": ["A"]},
            headers=headers,
            timeout=10,
        )
        response.raise_for_status()
        job_id: str = response.json()["data"]["id"]
        with Process([TOOLRUN, "worker", "--concurrency", "1"], worker_env, workdir / "w.log"):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                job = httpx.get(f"{base}/openapi/jobs/{job_id}", headers=headers).json()["data"]
                if job["status"] in {"succeeded", "failed", "canceled"}:
                    break
                time.sleep(0.2)
            if job["status"] != "succeeded":
                raise RuntimeError(f"setup job did not succeed: {job}")
    return job_id


def row(
    name: str, service: WrkResult, bare: WrkResult, *, backend: str, workers: int
) -> dict[str, Any]:
    ratio = service.rps / bare.rps
    return {
        "name": name,
        "backend": backend,
        "http_workers": workers,
        "service": service.as_dict(),
        "bare": bare.as_dict(),
        "ratio": round(ratio, 4),
        "ratio_met": ratio >= TARGET_RATIO,
        "p99_met": service.p99_ms <= TARGET_P99_MS,
        "valid": service.non_2xx == 0 and service.socket_errors == 0,
    }


def bench_backend(
    backend: Backend, workers: int, args: argparse.Namespace, workdir: Path, rows: list[Any]
) -> None:
    env = service_env(backend)
    created = create_account_cli(env)
    key = created["apiKey"]
    bare_port, port = free_port(), free_port()
    bare_url, base = f"http://127.0.0.1:{bare_port}", f"http://127.0.0.1:{port}"
    floor = {
        "BARE_APP_DATABASE_URL": backend.url.replace("+aiosqlite", ""),
        "BARE_APP_ACCOUNT_ID": created["accountId"],
    }
    bare_log = workdir / f"bare{workers}.log"
    setup = f"{backend.kind}, {workers} HTTP worker(s)"

    def run(url: str, *, api_key: str | None = key, script: Path | None = None) -> WrkResult:
        return measure(
            url, api_key=api_key, seconds=args.seconds, warmup=args.warmup, script=script
        )

    def record(name: str, result: WrkResult, baseline: WrkResult) -> None:
        rows.append(row(name, result, baseline, backend=backend.kind, workers=workers))
        print_row(rows[-1])

    with start_bare_app(bare_port, http_workers=workers, log=bare_log, floor=floor):
        bare = run(f"{bare_url}/openapi/credits")
        record(f"floor: bare + 1 read, {setup}", run(f"{bare_url}/floor/credits"), bare)
        bare_job = run(f"{bare_url}/openapi/jobs/x") if backend.kind == "postgresql" else None
    log = workdir / f"serve-{backend.kind}-{workers}.log"
    with start_toolrun_serve(env, port=port, http_workers=workers, job_workers=0, log=log) as srv:
        wait_http(f"{base}/healthz", srv)
        record(f"credits, {setup}, 1 key", run(f"{base}/openapi/credits"), bare)
        if bare_job is None:
            return
        job_id = finished_job(env, base, key, workdir)
        record(f"jobs/{{id}}, {setup}, 1 key", run(f"{base}/openapi/jobs/{job_id}"), bare_job)
        with start_bare_app(bare_port, http_workers=workers, log=bare_log, floor=floor):
            floor_job = run(f"{bare_url}/floor/jobs/{job_id}")
            floor_keyed = run(f"{bare_url}/floor/keyed/jobs/{job_id}")
        record(f"floor: bare jobs/{{id}} + 1 read, {setup}", floor_job, bare_job)
        record(f"floor: + key and count, 1 statement, {setup}", floor_keyed, bare_job)
        keys = asyncio.run(create_accounts(env, KEYS_FOR_ROTATION))
        script = workdir / "rotate.lua"
        script.write_text(LUA_ROTATE % ", ".join(f'"{k}"' for k in keys))
        many = run(f"{base}/openapi/credits", api_key=None, script=script)
        record(f"credits, {setup}, {len(keys)} keys", many, bare)


def print_row(r: dict[str, Any]) -> None:
    s, b = r["service"], r["bare"]
    print(
        f"{r['name']:<66} {s['rps']:>8.0f} req/s  p50 {s['p50_ms']:>7.2f} ms  "
        f"p99 {s['p99_ms']:>8.2f} ms | bare {b['rps']:>8.0f} req/s  p99 {b['p99_ms']:>6.2f} ms"
        f" | ratio {r['ratio']:.3f}{'' if r['valid'] else '  (errors!)'}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per measurement")
    parser.add_argument("--warmup", type=float, default=3.0, help="wrk warm-up before each")
    args = parser.parse_args()
    ensure_wrk()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolrun-http-bench-") as tmp:
        workdir = Path(tmp)
        with postgres_backend("http") as backend:
            bench_backend(backend, 2, args, workdir, rows)
        for workers in (1, 2):
            with sqlite_backend(f"http{workers}") as backend:
                try:
                    bench_backend(backend, workers, args, workdir, rows)
                except (RuntimeError, subprocess.SubprocessError) as exc:
                    print(f"SQLite with {workers} HTTP worker(s) failed: {exc}", flush=True)
                    rows.append({"name": f"credits, sqlite, {workers}", "error": str(exc)})
    result = {
        "benchmark": "http",
        "command": ".venv/bin/python -m bench.http_bench",
        "machine": machine(),
        "wrk": {
            "threads": THREADS,
            "connections": CONNECTIONS,
            "seconds": args.seconds,
            "warmup_seconds": args.warmup,
        },
        "targets": {"ratio": TARGET_RATIO, "p99_ms": TARGET_P99_MS},
        "log_level": "WARNING",
        "rows": rows,
    }
    print(f"wrote {write_results('http', result)}")


if __name__ == "__main__":
    main()
