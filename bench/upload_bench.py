"""Upload and download throughput of a real ``toolrun serve`` (SQLite + files) on loopback.

    .venv/bin/python -m bench.upload_bench [--mib 256] [--parallel 1]

A PNG of about 256 MiB (random pixels stored uncompressed, so the size is
real) goes through the API in 8 MiB chunks, then complete (fsync, sniff,
header probe, publish); then it is downloaded whole. Each chunk is a
multipart request sent, by default, from a kept-alive socket with the chunk's
bytes streamed from the file by ``sendfile`` (as curl sends a file);
``--client httpx`` builds the requests with httpx instead, which costs the
client about as much CPU as the server spends on the chunk. Both are set against plain loops
over the same bytes on the same disk in the same run: writing them in 8 MiB
pieces and fsyncing once (the upload target ratio is >= 0.5), and reading the
file back (for the download). The server's peak RSS increase during each phase
comes from /proc/<pid>/status (VmHWM, reset through clear_refs before each
phase; psutil is not needed), and the CPU seconds each phase cost the server
and this client from /proc/<pid>/stat and os.times(), to tell CPU from I/O.
Prints a table and writes bench/results/upload.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import httpx

RESULTS = Path(__file__).parent / "results" / "upload.json"
MIB = 1024 * 1024
CHUNK = 8 * MIB
WIDTH = 8192  # pixels; a row is 1 + 3 * WIDTH bytes


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def write_png(path: Path, target_bytes: int) -> int:
    """An RGB PNG of random pixels, zlib level 0 (stored), about ``target_bytes`` long."""
    row_bytes = 1 + 3 * WIDTH
    height = target_bytes // row_bytes
    compressor = zlib.compressobj(0)
    with path.open("wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n")
        out.write(_png_chunk(b"IHDR", struct.pack(">IIBBBBB", WIDTH, height, 8, 2, 0, 0, 0)))
        rows_per_piece = 256
        for first in range(0, height, rows_per_piece):
            count = min(rows_per_piece, height - first)
            raw = b"".join(b"\x00" + os.urandom(3 * WIDTH) for _ in range(count))
            data = compressor.compress(raw)
            if data:
                out.write(_png_chunk(b"IDAT", data))
        out.write(_png_chunk(b"IDAT", compressor.flush()))
        out.write(_png_chunk(b"IEND", b""))
    return path.stat().st_size


def plain_write(source: Path, target: Path) -> float:
    """Seconds to write ``source``'s bytes to ``target`` in 8 MiB pieces, fsynced once."""
    started = time.perf_counter()
    with source.open("rb") as src, target.open("wb") as out:
        while piece := src.read(CHUNK):
            out.write(piece)
        out.flush()
        os.fsync(out.fileno())
    elapsed = time.perf_counter() - started
    target.unlink()
    return elapsed


def plain_read(source: Path) -> float:
    started = time.perf_counter()
    with source.open("rb") as src:
        while src.read(CHUNK):
            pass
    return time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def reset_peak(pid: int) -> int:
    """Reset the process's peak RSS to its current RSS; return that RSS in KiB."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    return _status_kib(pid, "VmRSS")


def peak_increase_mib(pid: int, baseline_kib: int) -> float:
    return (_status_kib(pid, "VmHWM") - baseline_kib) / 1024


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads) so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def toolrun(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "toolrun", *args]
    return subprocess.run(command, env=env, check=True, capture_output=True, text=True)


def wait_ready(base: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("toolrun serve exited")
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("toolrun serve did not become ready")


BOUNDARY = "toolrun-bench-7d1f0c"


class ChunkSender:
    """Chunk requests over one kept-alive loopback connection, each chunk's bytes sent from
    the source file with ``socket.sendfile`` as curl streams a file: the figure is then the
    server's, not a Python client's multipart encoding (httpx spends about as much CPU on
    it as the server spends receiving and storing the chunk)."""

    def __init__(self, base: str, authorization: str) -> None:
        host, port = base.removeprefix("http://").rsplit(":", 1)
        self.address = (host, int(port))
        self.authorization = authorization
        self.sock: socket.socket | None = None

    def send(self, path: str, index: int, source: BinaryIO, offset: int, length: int) -> None:
        preamble = (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="index"\r\n\r\n{index}\r\n'
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="chunk"; filename="chunk"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        closing = f"\r\n--{BOUNDARY}--\r\n".encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.address[0]}:{self.address[1]}\r\n"
            f"Authorization: {self.authorization}\r\n"
            f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
            f"Content-Length: {len(preamble) + length + len(closing)}\r\n\r\n"
        ).encode()
        if self.sock is None:
            self.sock = socket.create_connection(self.address)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.sendall(head + preamble)
        self.sock.sendfile(source, offset, length)
        self.sock.sendall(closing)
        response = http.client.HTTPResponse(self.sock)
        response.begin()
        body = response.read()
        if response.status != 201:
            raise RuntimeError(f"chunk {index}: {response.status} {body[:300]!r}")
        if response.will_close:
            self.close()

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def upload(
    client: httpx.Client, source: Path, size: int, parallel: int, *, raw: bool
) -> dict[str, Any]:
    session = client.post(
        "/openapi/uploads/tasks",
        json={"fileName": "bench.png", "mimeType": "image/png", "size": size, "chunkSize": CHUNK},
    )
    session.raise_for_status()
    task = session.json()["data"]
    total = task["totalChunks"]

    path = f"/openapi/uploads/tasks/{task['taskId']}/chunks"
    local = threading.local()
    opened: list[tuple[ChunkSender, BinaryIO]] = []

    def send(index: int) -> None:
        if raw:
            if not hasattr(local, "sender"):
                base = str(client.base_url).rstrip("/")
                local.sender = ChunkSender(base, client.headers["authorization"])
                local.source = source.open("rb")
                opened.append((local.sender, local.source))
            length = min(CHUNK, size - index * CHUNK)
            local.sender.send(path, index, local.source, index * CHUNK, length)
            return
        with source.open("rb") as src:
            src.seek(index * CHUNK)
            piece = src.read(CHUNK)
        response = client.post(
            path,
            data={"index": str(index)},
            files={"chunk": ("chunk", piece, "application/octet-stream")},
        )
        response.raise_for_status()

    started = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(send, range(total)))
    chunks_s = time.perf_counter() - started
    for sender, file in opened:
        sender.close()
        file.close()
    done = client.post(
        f"/openapi/uploads/tasks/{task['taskId']}/complete", json={"totalChunks": total}
    )
    done.raise_for_status()
    total_s = time.perf_counter() - started
    return {"asset": done.json()["data"], "chunks_s": chunks_s, "total_s": total_s}


def download(client: httpx.Client, path: str, size: int) -> float:
    started = time.perf_counter()
    received = 0
    with client.stream("GET", path) as response:
        response.raise_for_status()
        for piece in response.iter_bytes(1024 * 1024):
            received += len(piece)
    if received != size:
        raise RuntimeError(f"downloaded {received} bytes of {size}")
    return time.perf_counter() - started


def one_round(
    client: httpx.Client, pid: int, root: Path, source: Path, size: int, parallel: int, raw: bool
) -> dict[str, float]:
    """Plain loops, then the upload and the download through the API, back to back."""
    write_s = min(plain_write(source, root / "plain.bin") for _ in range(2))
    read_s = min(plain_read(source) for _ in range(2))
    rss_before = reset_peak(pid)
    server_cpu, client_cpu = cpu_seconds(pid), own_cpu_seconds()
    up = upload(client, source, size, parallel, raw=raw)
    up_cpu = (cpu_seconds(pid) - server_cpu, own_cpu_seconds() - client_cpu)
    up_rss = peak_increase_mib(pid, rss_before)
    rss_before = reset_peak(pid)
    server_cpu, client_cpu = cpu_seconds(pid), own_cpu_seconds()
    down_s = download(client, up["asset"]["downloadPath"], size)
    down_cpu = (cpu_seconds(pid) - server_cpu, own_cpu_seconds() - client_cpu)
    down_rss = peak_increase_mib(pid, rss_before)
    mb = size / 1e6
    return {
        "plainWriteMBps": round(mb / write_s, 1),
        "plainReadMBps": round(mb / read_s, 1),
        "uploadChunksMBps": round(mb / up["chunks_s"], 1),
        "uploadWithCompleteMBps": round(mb / up["total_s"], 1),
        "uploadRatio": round(write_s / up["total_s"], 3),
        "uploadChunksRatio": round(write_s / up["chunks_s"], 3),
        "completeSeconds": round(up["total_s"] - up["chunks_s"], 2),
        "uploadPeakRssIncreaseMiB": round(up_rss, 1),
        "uploadServerCpuSeconds": round(up_cpu[0], 2),
        "uploadClientCpuSeconds": round(up_cpu[1], 2),
        "downloadMBps": round(mb / down_s, 1),
        "downloadRatioToPlainRead": round(read_s / down_s, 3),
        "downloadRatioToPlainWrite": round(write_s / down_s, 3),
        "downloadPeakRssIncreaseMiB": round(down_rss, 1),
        "downloadServerCpuSeconds": round(down_cpu[0], 2),
        "downloadClientCpuSeconds": round(down_cpu[1], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--parallel", type=int, default=1, help="chunks in flight")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--client",
        choices=("sendfile", "httpx"),
        default="sendfile",
        help="send chunks from a socket with sendfile (default) or with httpx",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="toolrun-upload-bench-") as tmp:
        root = Path(tmp)
        source = root / "source.png"
        size = write_png(source, args.mib * MIB)
        port = free_port()
        env = {
            **os.environ,
            "TOOLRUN_DATA_DIR": str(root / "data"),
            "TOOLRUN_RATE_LIMIT_PER_MINUTE": "100000",
            "TOOLRUN_MAX_UPLOAD_BYTES": str(size + MIB),
            "TOOLRUN_LOG_LEVEL": "WARNING",
        }
        for name in ("TOOLRUN_DATABASE_URL", "TOOLRUN_STORAGE_URL", "TOOLRUN_PUBLIC_BASE_URL"):
            env.pop(name, None)
        created = json.loads(toolrun("accounts", "create", "--json", env=env).stdout)
        server = subprocess.Popen(
            [sys.executable, "-m", "toolrun", "serve", "--port", str(port), "--job-workers", "0"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(base, server)
            headers = {"Authorization": f"Bearer {created['apiKey']}"}
            with httpx.Client(base_url=base, headers=headers, timeout=300) as client:
                small = root / "warm.png"
                write_png(small, 64 * 1024)
                raw = args.client == "sendfile"
                upload(client, small, small.stat().st_size, 1, raw=raw)  # imports, first probe
                rounds = [
                    one_round(client, server.pid, root, source, size, args.parallel, raw)
                    for _ in range(args.rounds)
                ]
        finally:
            server.terminate()
            server.wait(timeout=30)

    best = max(rounds, key=lambda r: r["uploadRatio"])
    result: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": "python -m bench.upload_bench " + " ".join(sys.argv[1:]),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}",
        "loadAverage1m": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "fileBytes": size,
        "chunkBytes": CHUNK,
        "parallelChunks": args.parallel,
        "client": args.client,
        "best": best,
        "medianUploadRatio": sorted(r["uploadRatio"] for r in rounds)[len(rounds) // 2],
        "maxPeakRssIncreaseMiB": max(
            max(r["uploadPeakRssIncreaseMiB"], r["downloadPeakRssIncreaseMiB"]) for r in rounds
        ),
        "rounds": rounds,
        "targets": {"uploadRatio": ">= 0.5", "peakRssIncreaseMiB": "<= 64"},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    for key, value in result.items():
        if key != "rounds":
            print(f"{key:<22}  {value}")


if __name__ == "__main__":
    main()
