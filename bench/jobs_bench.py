"""Job dispatch latency (NOTIFY vs polling) and dns-lookup job throughput, on PostgreSQL.

    .venv/bin/python -m bench.jobs_bench [--dispatch-jobs 200] [--rate 20] [--jobs 2000]

Processes: one API process (``toolrun serve --http-workers 1 --job-workers 0``)
and one worker process (``toolrun worker --concurrency 4``) on a fresh
PostgreSQL database, jobs resolved against the loopback authoritative DNS server
of tests/servers/dns.py (TOOLRUN_DNS_NAMESERVERS), TOOLRUN_LOG_LEVEL=WARNING,
TOOLRUN_RATE_LIMIT_PER_MINUTE=1000000000. Accounts are created as needed (each
starts with the 10 signup credits; jobs are spread round-robin over their keys).

(a) Dispatch latency: ``--dispatch-jobs`` dns-lookup jobs submitted open-loop
    at ``--rate`` per second; per job ``started_at - created_at`` read from the
    job rows at the end (both server timestamps, microseconds). Run once with
    TOOLRUN_JOB_WAKEUP=notify and once with TOOLRUN_JOB_WAKEUP=poll and
    TOOLRUN_JOB_POLL_INTERVAL_S=0.05. Target: p50 <= 5 ms (notify).
(b) Throughput: ``--jobs`` dns-lookup jobs submitted with httpx.AsyncClient, at
    most ``--submit-concurrency`` requests in flight (notify wake-up); jobs/s =
    jobs / (last ``completed_at`` - first submit). Baseline: the same number of
    ``dns.asyncquery.udp`` A queries to the same server in this process, 4 at a
    time (as many as the worker's job slots), in the same run. Target >= 500 jobs/s.
    Run with NOTIFY and again with polling (``TOOLRUN_JOB_POLL_INTERVAL_S=0.05``):
    NOTIFY serialises the commits that send it, which polling never does.
    The same end to end with wrk as the client (as bench.http_bench uses): POSTs
    for ``--wrk-seconds`` from 2 threads over 32 connections, keys of 64 accounts
    with ample credits in turn; jobs/s = jobs / (last ``completed_at`` - first
    ``created_at``) once every job has finished. httpx costs the client about
    4 ms of CPU per job on these 2 cores the service shares, more than the API
    process spends on it; wrk measures the service.
    Also the drain rate: ``--drain-jobs`` jobs queued with no worker running,
    then the worker started; jobs / (last ``completed_at`` - first ``started_at``):
    the worker's rate without the API's submission cost.

Prints a table and writes bench/results/jobs.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import dns.asyncquery
import dns.message
import httpx

from bench._service import (
    TOOLRUN,
    Backend,
    Process,
    create_accounts,
    free_port,
    machine,
    postgres_backend,
    run_wrk,
    service_env,
    start_toolrun_serve,
    write_results,
)

WORKER_CONCURRENCY = 4
POLL_INTERVAL_S = 0.05
TARGET_DISPATCH_P50_MS = 5.0
TARGET_JOBS_PER_S = 500.0
CREDITS_PER_ACCOUNT = 10
BODY = {"domain": "example.test", "types": ["A"]}
FINISHED = ("succeeded", "failed", "canceled")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def pg_dsn(backend: Backend) -> str:
    return backend.url  # postgresql://postgres@127.0.0.1:5432/<db>, as asyncpg takes it


async def submit(client: httpx.AsyncClient, key: str) -> str:
    response = await client.post(
        "/openapi/tools/dns-lookup/execute",
        json=BODY,
        headers={"Authorization": f"Bearer {key}"},
    )
    if response.status_code != 202:
        raise RuntimeError(f"submit answered {response.status_code}: {response.text[:300]}")
    job_id: str = response.json()["data"]["id"]
    return job_id


async def wait_finished(dsn: str, ids: list[str], limit_s: float) -> list[asyncpg.Record]:
    """Poll the job rows every 0.25 s until all are finished (or the timeout); return the rows."""
    connection = await asyncpg.connect(dsn)
    try:
        deadline = time.monotonic() + limit_s
        while True:
            done = await connection.fetchval(
                "SELECT count(*) FROM jobs WHERE id = ANY($1::text[]) AND status = ANY($2::text[])",
                ids,
                list(FINISHED),
            )
            if done >= len(ids) or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.25)
        rows: list[asyncpg.Record] = await connection.fetch(
            "SELECT id, status, created_at, started_at, completed_at FROM jobs"
            " WHERE id = ANY($1::text[])",
            ids,
        )
        return rows
    finally:
        await connection.close()


async def dispatch_run(
    backend: Backend, env: dict[str, str], port: int, *, jobs: int, rate: float
) -> dict[str, Any]:
    warm_key, *keys = await create_accounts(env, 1 + -(-jobs // CREDITS_PER_ACCOUNT))
    ids: list[str] = []
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        await submit(client, warm_key)  # warm the API path and the worker's wake-up once
        await asyncio.sleep(1.0)
        start = time.monotonic()
        tasks = []
        for i in range(jobs):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(submit(client, keys[i % len(keys)])))
        ids = list(await asyncio.gather(*tasks))
    rows = await wait_finished(pg_dsn(backend), ids, limit_s=120)
    latencies = [
        (r["started_at"] - r["created_at"]).total_seconds() * 1000
        for r in rows
        if r["started_at"] is not None
    ]
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "jobs": jobs,
        "rate_per_s": rate,
        "started": len(latencies),
        "statuses": statuses,
        "p50_ms": round(percentile(latencies, 50), 2),
        "p90_ms": round(percentile(latencies, 90), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2),
        "mean_ms": round(statistics.fmean(latencies), 2),
    }


async def throughput_run(
    backend: Backend, env: dict[str, str], port: int, *, jobs: int, concurrency: int
) -> dict[str, Any]:
    keys = await create_accounts(env, -(-jobs // CREDITS_PER_ACCOUNT))
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=60, limits=limits
    ) as client:
        semaphore = asyncio.Semaphore(concurrency)

        async def one(i: int) -> str:
            async with semaphore:
                return await submit(client, keys[i % len(keys)])

        first_submit = datetime.now(UTC)
        t0 = time.monotonic()
        ids = list(await asyncio.gather(*(one(i) for i in range(jobs))))
        submit_s = time.monotonic() - t0
    rows = await wait_finished(pg_dsn(backend), ids, limit_s=600)
    finished = [r for r in rows if r["status"] in FINISHED and r["completed_at"] is not None]
    last = max(r["completed_at"] for r in finished)
    elapsed = (last - first_submit).total_seconds()
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "jobs": jobs,
        "submit_concurrency": concurrency,
        "statuses": statuses,
        "submit_seconds": round(submit_s, 3),
        "submit_per_s": round(jobs / submit_s, 1),
        "elapsed_seconds": round(elapsed, 3),
        "jobs_per_s": round(len(finished) / elapsed, 1),
    }


WRK_ACCOUNTS = 64
WRK_CONNECTIONS = 32
LUA_SUBMIT = """
keys = {%s}
counter = 0
wrk.method = "POST"
wrk.body = '%s'
wrk.headers["Content-Type"] = "application/json"
request = function()
  counter = counter + 1
  wrk.headers["Authorization"] = "Bearer " .. keys[(counter %% #keys) + 1]
  return wrk.format()
end
"""


async def all_finished(dsn: str, limit_s: float) -> list[asyncpg.Record]:
    """Every job row, once none is queued or running (or at the timeout)."""
    connection = await asyncpg.connect(dsn)
    try:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            pending = await connection.fetchval(
                "SELECT count(*) FROM jobs WHERE status <> ALL($1::text[])", list(FINISHED)
            )
            if pending == 0:
                break
            await asyncio.sleep(0.25)
        rows: list[asyncpg.Record] = await connection.fetch(
            "SELECT id, status, created_at, started_at, completed_at FROM jobs"
        )
        return rows
    finally:
        await connection.close()


def wrk_throughput_run(
    backend: Backend, env: dict[str, str], port: int, workdir: Path, *, seconds: float
) -> dict[str, Any]:
    keys = asyncio.run(create_accounts(env, WRK_ACCOUNTS, signup_credits=1_000_000))
    script = workdir / "submit.lua"
    body = json.dumps(BODY, separators=(",", ":"))
    script.write_text(LUA_SUBMIT % (", ".join(f'"{k}"' for k in keys), body))
    url = f"http://127.0.0.1:{port}/openapi/tools/dns-lookup/execute"
    submitted = run_wrk(
        url, api_key=None, seconds=seconds, connections=WRK_CONNECTIONS, threads=2, script=script
    )
    if submitted.non_2xx or submitted.socket_errors:
        raise RuntimeError(f"wrk submissions failed: {submitted}")
    rows = asyncio.run(all_finished(pg_dsn(backend), limit_s=600))
    finished = [r for r in rows if r["status"] in FINISHED and r["completed_at"] is not None]
    elapsed = (
        max(r["completed_at"] for r in finished) - min(r["created_at"] for r in rows)
    ).total_seconds()
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "client": f"wrk, 2 threads, {WRK_CONNECTIONS} connections, {WRK_ACCOUNTS} accounts",
        "jobs": len(rows),
        "statuses": statuses,
        "submit_per_s": submitted.rps,
        "submit_p50_ms": submitted.p50_ms,
        "submit_p99_ms": submitted.p99_ms,
        "elapsed_seconds": round(elapsed, 3),
        "jobs_per_s": round(len(finished) / elapsed, 1),
    }


async def submit_all(port: int, keys: list[str], jobs: int, concurrency: int) -> list[str]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", timeout=60, limits=limits
    ) as client:
        semaphore = asyncio.Semaphore(concurrency)

        async def one(i: int) -> str:
            async with semaphore:
                return await submit(client, keys[i % len(keys)])

        return list(await asyncio.gather(*(one(i) for i in range(jobs))))


def drain_run(
    backend: Backend, env: dict[str, str], workdir: Path, *, jobs: int, concurrency: int
) -> dict[str, Any]:
    """Queue ``jobs`` with no worker running, then start the worker: its rate alone."""
    port = free_port()
    api = start_toolrun_serve(
        env, port=port, http_workers=1, job_workers=0, log=workdir / "api-drain.log"
    )
    try:
        keys = asyncio.run(create_accounts(env, -(-jobs // CREDITS_PER_ACCOUNT)))
        ids = asyncio.run(submit_all(port, keys, jobs, concurrency))
    finally:
        api.stop()
    worker_start = datetime.now(UTC)
    worker = Process(
        [TOOLRUN, "worker", "--concurrency", str(WORKER_CONCURRENCY)],
        env,
        workdir / "worker-drain.log",
    )
    try:
        rows = asyncio.run(wait_finished(pg_dsn(backend), ids, limit_s=600))
    finally:
        worker.stop()
    finished = [r for r in rows if r["status"] in FINISHED and r["completed_at"] is not None]
    first_start = min(r["started_at"] for r in finished)
    last = max(r["completed_at"] for r in finished)
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    elapsed = (last - first_start).total_seconds()
    return {
        "jobs": jobs,
        "statuses": statuses,
        "worker_startup_seconds": round((first_start - worker_start).total_seconds(), 3),
        "elapsed_seconds": round(elapsed, 3),
        "jobs_per_s": round(len(finished) / elapsed, 1),
    }


async def bare_dns(address: str, count: int, concurrency: int) -> dict[str, Any]:
    host, port = address.rsplit(":", 1)
    semaphore = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with semaphore:
            query = dns.message.make_query("example.test", "A")
            await dns.asyncquery.udp(query, host, port=int(port), timeout=5)

    for _ in range(20):  # warm-up
        await one()
    t0 = time.monotonic()
    await asyncio.gather(*(one() for _ in range(count)))
    elapsed = time.monotonic() - t0
    return {
        "lookups": count,
        "concurrency": concurrency,
        "seconds": round(elapsed, 3),
        "per_s": round(count / elapsed, 1),
    }


def with_service(
    backend: Backend, env: dict[str, str], workdir: Path, tag: str
) -> tuple[Process, Process, int]:
    port = free_port()
    api = start_toolrun_serve(
        env, port=port, http_workers=1, job_workers=0, log=workdir / f"api-{tag}.log"
    )
    worker = Process(
        [TOOLRUN, "worker", "--concurrency", str(WORKER_CONCURRENCY)],
        env,
        workdir / f"worker-{tag}.log",
    )
    time.sleep(2.0)  # the worker applies migrations (none pending) and starts listening
    if worker.proc.poll() is not None:
        api.stop()
        raise RuntimeError(f"worker exited:\n{worker.tail()}")
    return api, worker, port


def main() -> None:
    from tests.servers.dns import EXAMPLE_ZONE, DnsServer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dispatch-jobs", type=int, default=200)
    parser.add_argument("--rate", type=float, default=20.0, help="dispatch submissions per s")
    parser.add_argument("--jobs", type=int, default=2000, help="jobs of the throughput run")
    parser.add_argument("--submit-concurrency", type=int, default=32)
    parser.add_argument("--drain-jobs", type=int, default=1000, help="jobs of the drain run")
    parser.add_argument("--wrk-seconds", type=float, default=5.0, help="wrk submission run")
    parser.add_argument(
        "--only-wrk", action="store_true", help="only the end-to-end run with wrk as the client"
    )
    args = parser.parse_args()

    result: dict[str, Any] = {
        "benchmark": "jobs",
        "command": ".venv/bin/python -m bench.jobs_bench",
        "machine": machine(),
        "setup": {
            "api": "toolrun serve --http-workers 1 --job-workers 0",
            "worker": f"toolrun worker --concurrency {WORKER_CONCURRENCY}",
            "poll_interval_s": POLL_INTERVAL_S,
            "log_level": "WARNING",
        },
        "targets": {"dispatch_p50_ms": TARGET_DISPATCH_P50_MS, "jobs_per_s": TARGET_JOBS_PER_S},
    }
    with (
        DnsServer(EXAMPLE_ZONE) as dns_server,
        tempfile.TemporaryDirectory(prefix="toolrun-jobs-bench-") as tmp,
    ):
        workdir = Path(tmp)
        with postgres_backend("jobs_wrk") as backend:
            env = service_env(
                backend, TOOLRUN_DNS_NAMESERVERS=dns_server.address, TOOLRUN_JOB_WAKEUP="notify"
            )
            api, worker, port = with_service(backend, env, workdir, "wrk")
            try:
                by_wrk = wrk_throughput_run(backend, env, port, workdir, seconds=args.wrk_seconds)
            finally:
                worker.stop()
                api.stop()
        print(
            f"throughput (wrk client) {by_wrk['jobs_per_s']:.1f} jobs/s ({by_wrk['statuses']},"
            f" submitted at {by_wrk['submit_per_s']:.1f}/s, p99 {by_wrk['submit_p99_ms']:.1f} ms)"
            f" | target {TARGET_JOBS_PER_S:.0f}",
            flush=True,
        )
        result["throughput_wrk"] = {
            **by_wrk,
            "target_met": by_wrk["jobs_per_s"] >= TARGET_JOBS_PER_S,
        }
        if args.only_wrk:
            print(f"wrote {write_results('jobs', result)}")
            return
        dispatch: dict[str, Any] = {}
        for mode in ("notify", "poll"):
            with postgres_backend(f"jobs_{mode}") as backend:
                extra = {"TOOLRUN_DNS_NAMESERVERS": dns_server.address, "TOOLRUN_JOB_WAKEUP": mode}
                if mode == "poll":
                    extra["TOOLRUN_JOB_POLL_INTERVAL_S"] = str(POLL_INTERVAL_S)
                env = service_env(backend, **extra)
                api, worker, port = with_service(backend, env, workdir, mode)
                try:
                    dispatch[mode] = asyncio.run(
                        dispatch_run(backend, env, port, jobs=args.dispatch_jobs, rate=args.rate)
                    )
                finally:
                    worker.stop()
                    api.stop()
            d = dispatch[mode]
            print(
                f"dispatch {mode:<6} {d['started']}/{d['jobs']} started  p50 {d['p50_ms']:.2f} ms"
                f"  p90 {d['p90_ms']:.2f} ms  p99 {d['p99_ms']:.2f} ms  max {d['max_ms']:.2f} ms",
                flush=True,
            )
        dispatch["target_met"] = dispatch["notify"]["p50_ms"] <= TARGET_DISPATCH_P50_MS
        result["dispatch"] = dispatch

        # NOTIFY takes a database-wide lock at commit (reference job-platform.md §2.3): the
        # throughput run with polling instead shows what that costs the submissions.
        throughput: dict[str, dict[str, Any]] = {}
        for mode in ("notify", "poll"):
            with postgres_backend(f"jobs_tput_{mode}") as backend:
                extra = {"TOOLRUN_DNS_NAMESERVERS": dns_server.address, "TOOLRUN_JOB_WAKEUP": mode}
                if mode == "poll":
                    extra["TOOLRUN_JOB_POLL_INTERVAL_S"] = str(POLL_INTERVAL_S)
                env = service_env(backend, **extra)
                api, worker, port = with_service(backend, env, workdir, f"tput-{mode}")
                try:
                    throughput[mode] = asyncio.run(
                        throughput_run(
                            backend, env, port, jobs=args.jobs, concurrency=args.submit_concurrency
                        )
                    )
                finally:
                    worker.stop()
                    api.stop()
        service = throughput["notify"]
        with postgres_backend("jobs_drain") as backend:
            env = service_env(
                backend, TOOLRUN_DNS_NAMESERVERS=dns_server.address, TOOLRUN_JOB_WAKEUP="notify"
            )
            drain = drain_run(
                backend, env, workdir, jobs=args.drain_jobs, concurrency=args.submit_concurrency
            )
        bare = asyncio.run(bare_dns(dns_server.address, args.jobs, WORKER_CONCURRENCY))
        ratio = service["jobs_per_s"] / bare["per_s"]
        result["throughput"] = {
            "service": service,
            "bare_dns": bare,
            "ratio": round(ratio, 4),
            "target_met": service["jobs_per_s"] >= TARGET_JOBS_PER_S,
            "drain": drain,
            "drain_ratio": round(drain["jobs_per_s"] / bare["per_s"], 4),
            "poll": throughput["poll"],
            "poll_ratio": round(throughput["poll"]["jobs_per_s"] / bare["per_s"], 4),
        }
        print(
            f"throughput {service['jobs_per_s']:.1f} jobs/s ({service['statuses']}, submit "
            f"{service['submit_per_s']:.1f}/s) | bare dnspython {bare['per_s']:.1f}/s"
            f" | ratio {ratio:.4f}",
            flush=True,
        )
        polled = throughput["poll"]
        print(
            f"throughput with polling every {POLL_INTERVAL_S} s {polled['jobs_per_s']:.1f} jobs/s"
            f" ({polled['statuses']}) | ratio {polled['jobs_per_s'] / bare['per_s']:.4f}",
            flush=True,
        )
        print(
            f"drain (pre-queued, worker only) {drain['jobs_per_s']:.1f} jobs/s "
            f"({drain['statuses']}) | ratio {drain['jobs_per_s'] / bare['per_s']:.4f}",
            flush=True,
        )
    print(f"wrote {write_results('jobs', result)}")


if __name__ == "__main__":
    main()
