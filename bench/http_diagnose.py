"""Where the time of a keyed GET /openapi/credits goes: CPU per request and commit waits.

    .venv/bin/python -m bench.http_diagnose [--seconds 8] [--profile]

A diagnostic companion of bench.http_bench (no target). On PostgreSQL with one
HTTP worker (``serve --job-workers 0``), wrk (2 threads, 64 connections, one key):

* CPU milliseconds per request of the server process (utime+stime from /proc,
  children included) and of all PostgreSQL backends, against the bare app —
  a figure the machine's other load inflates much less than req/s does;
* the same with ``ALTER DATABASE .. SET synchronous_commit = off`` on the bench
  database (no WAL flush wait while the rate-limit row is locked), alternated
  with the default twice;
* with ``--profile``: a py-spy raw profile of the server under load, summarised
  (inclusive share of selected frames, self time by top-level package) — needs ``py-spy`` in the venv.

Writes bench/results/http_diagnose.json.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from bench._service import (
    PG_ADMIN,
    Process,
    create_account_cli,
    ensure_wrk,
    free_port,
    machine,
    postgres_backend,
    run_wrk,
    service_env,
    start_bare_app,
    start_toolrun_serve,
    write_results,
)

HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / HZ


def tree(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    children = [int(p) for p in out.split()]
    return [pid] + [q for c in children for q in tree(c)]


def postgres_pids() -> list[int]:
    out = subprocess.run(["pgrep", "-u", "postgres"], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def cpu_per_request(process: Process, url: str, key: str | None, seconds: float) -> dict[str, Any]:
    run_wrk(url, api_key=key, seconds=2, connections=64, threads=2)  # warm-up
    pids = tree(process.proc.pid)
    own0, pg0 = cpu_seconds(pids), cpu_seconds(postgres_pids())
    result = run_wrk(url, api_key=key, seconds=seconds, connections=64, threads=2)
    own1, pg1 = cpu_seconds(pids), cpu_seconds(postgres_pids())
    return {
        "rps": result.rps,
        "p50_ms": result.p50_ms,
        "p99_ms": result.p99_ms,
        "requests": result.requests,
        "server_cpu_ms_per_request": round((own1 - own0) * 1000 / result.requests, 3),
        "postgres_cpu_ms_per_request": round((pg1 - pg0) * 1000 / result.requests, 3),
    }


def summarise_profile(raw: Path) -> dict[str, float]:
    interesting = {
        "threadpool (sync dependency, anyio worker thread)": ("run_in_threadpool", "run_sync"),
        "get_current_account (auth + rate limit)": ("get_current_account",),
        "route body (get_credits)": ("get_credits ",),
        "SQLAlchemy Session.execute": ("Session.execute",),
        "asyncpg execute": ("PreparedStatement.__do_execute", "Connection.execute (asyncpg"),
        "transaction begin/commit/rollback": ("_start_transaction", "commit (", "rollback ("),
        "fastapi solve_dependencies": ("solve_dependencies",),
        "RequestMiddleware": ("RequestMiddleware.__call__",),
    }
    total = 0
    counts: collections.Counter[str] = collections.Counter()
    packages: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue  # a frame name with a line break in it
        weight = int(n)
        total += weight
        leaf = stack.rsplit(";", 1)[-1]
        where = re.search(r"\(([^():]*)", leaf)
        path = where.group(1) if where else ""
        packages["self: " + (path.split("/")[0] if "/" in path else path or "native")] += weight
        for name, needles in interesting.items():
            if any(needle in stack for needle in needles):
                counts[name] += weight
    shares = {name: round(counts[name] / total, 3) for name in interesting}
    top = {name: round(n / total, 3) for name, n in packages.most_common(12)}
    return shares | top | {"samples": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    ensure_wrk()
    out: dict[str, Any] = {
        "benchmark": "http_diagnose",
        "command": ".venv/bin/python -m bench.http_diagnose"
        + (" --profile" if args.profile else ""),
        "machine": machine(),
    }
    with tempfile.TemporaryDirectory(prefix="toolrun-diag-") as tmp:
        workdir = Path(tmp)
        port = free_port()
        with start_bare_app(port, http_workers=1, log=workdir / "bare.log") as bare:
            out["bare"] = cpu_per_request(
                bare, f"http://127.0.0.1:{port}/openapi/credits", None, args.seconds
            )
        print("bare", out["bare"], flush=True)
        with postgres_backend("diag") as backend:
            env = service_env(backend)
            key = create_account_cli(env)["apiKey"]
            name = backend.url.rsplit("/", 1)[1]
            runs = []
            for setting in ("on", "off", "on", "off"):
                subprocess.run(
                    [
                        *PG_ADMIN,
                        "-q",
                        "-c",
                        f"ALTER DATABASE {name} SET synchronous_commit={setting}",
                    ],
                    check=True,
                )
                port = free_port()
                log = workdir / f"serve-{setting}.log"
                with start_toolrun_serve(
                    env, port=port, http_workers=1, job_workers=0, log=log
                ) as server:
                    url = f"http://127.0.0.1:{port}/openapi/credits"
                    run = {
                        "synchronous_commit": setting,
                        **cpu_per_request(server, url, key, args.seconds),
                    }
                    runs.append(run)
                    print("service", run, flush=True)
                    if args.profile and setting == "on" and len(runs) == 1:
                        out["profile"] = profile(server, url, key, workdir)
                        print("profile", out["profile"], flush=True)
            out["service"] = runs
    print(f"wrote {write_results('http_diagnose', out)}")


def profile(server: Process, url: str, key: str, workdir: Path) -> dict[str, float]:
    py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if py_spy is None:
        return {"error": "py-spy not installed"}  # type: ignore[dict-item]
    raw = workdir / "profile.txt"
    load = threading.Thread(
        target=run_wrk,
        args=(url,),
        kwargs={"api_key": key, "seconds": 12, "connections": 64, "threads": 2},
    )
    load.start()
    subprocess.run(
        [
            py_spy,
            "record",
            "-p",
            str(server.proc.pid),
            "-d",
            "8",
            "-r",
            "200",
            "-f",
            "raw",
            "-o",
            str(raw),
            "--nonblocking",
        ],
        check=False,
        capture_output=True,
        timeout=60,
    )
    load.join()
    return summarise_profile(raw)


if __name__ == "__main__":
    main()
