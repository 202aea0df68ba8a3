"""domain-setup-checker wall time against the same DNS queries asked one after another.

    .venv/bin/python -m bench.domain_bench [--latency-ms 20 [2 ...]] [--rounds 5]

The loopback authoritative DNS server of tests/servers/dns.py serves a well-configured
fixture domain from a process of its own (as a resolver is another process, usually
another machine: its CPU time is not the checker's) and holds every UDP answer back
``--latency-ms``, each answer on its own clock, so concurrent queries overlap as they
would against a real resolver. Each round runs the checker, then replays every query the
server received during that run one after another with dnspython (UDP, same server,
same latency). The figure is checker wall time / sequential DNS time, the medians over
the rounds; the target is <= 0.4. The web checks point at a closed port (they fail at
once and add no DNS but the fetcher's own A/AAAA lookup). The checker's CPU time (this
process) is reported beside it. Prints a table and writes bench/results/domain.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import platform
import statistics
import time
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path
from types import TracebackType
from typing import Any

import dns.asyncquery
import dns.message
import dns.rdatatype
from tests.servers.dns import DnsServer

from toolrun.config import Settings
from toolrun.tools.base import ToolContext
from toolrun.tools.domain.models import DomainInput
from toolrun.tools.domain.setup_checker import run

RESULTS = Path(__file__).parent / "results" / "domain.json"
TARGET_RATIO = 0.4

ZONE = """\
$ORIGIN bench.test.
$TTL 300
@        IN SOA   ns1.bench.test. hostmaster.bench.test. 2026112201 7200 900 1209600 3600
@        IN NS    ns1.bench.test.
@        IN NS    ns2.bench.test.
ns1      IN A     127.0.0.1
ns2      IN A     127.0.0.1
@        IN A     127.0.0.1
@        IN AAAA  ::1
www      IN CNAME bench.test.
@        IN MX    10 mail.bench.test.
@        IN MX    20 mail2.bench.test.
mail     IN A     192.0.2.25
mail2    IN A     192.0.2.26
@        IN TXT   "v=spf1 mx include:_spf.provider.test include:_spf.other.test -all"
_spf.provider.test. IN TXT "v=spf1 include:_netblocks.provider.test ~all"
_netblocks.provider.test. IN TXT "v=spf1 ip4:192.0.2.0/24 ~all"
_spf.other.test. IN TXT "v=spf1 a:relay.other.test ~all"
relay.other.test. IN A 192.0.2.77
_dmarc   IN TXT   "v=DMARC1; p=reject; rua=mailto:dmarc@reports.test"
bench.test._report._dmarc.reports.test. IN TXT "v=DMARC1"
_mta-sts IN TXT   "v=STSv1; id=2026112201"
_smtp._tls IN TXT "v=TLSRPTv1; rua=mailto:tls@bench.test"
selector1._domainkey IN TXT "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA18SgvpmeasN4BHkkv0SBjAzIc4grYLjiAXRtNiBUiGUDMeTzQrKTsWvy9NuxU1dIHCZy9o1CrKNg5EzLIZLNyMfI6qiXnM"
@        IN CAA   0 issue "letsencrypt.org"
@        IN DS    12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
@        IN DNSKEY 257 3 13 AwEAAQ==
"""


def _serve(control: Connection, zone: str, latency: float) -> None:
    """The server process: serve ``zone``, answer "queries" and "clear", end on "stop"."""
    with DnsServer(zone, latency=latency) as server:
        control.send(server.port)
        while (command := control.recv()) != "stop":
            if command == "clear":
                server.queries.clear()
            control.send([(q.name, q.type, q.transport) for q in server.queries])


class RemoteDnsServer:
    """A ``DnsServer`` with ``latency`` seconds per UDP answer, in a child process."""

    def __init__(self, zone: str, *, latency: float) -> None:
        self.host = "127.0.0.1"
        context = multiprocessing.get_context("spawn")
        self._control, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, zone, latency), daemon=True)
        self.port = 0

    def __enter__(self) -> RemoteDnsServer:
        self._process.start()
        self.port = self._control.recv()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._control.send("stop")
        self._process.join(10)
        self._control.close()

    def clear(self) -> None:
        self._control.send("clear")
        self._control.recv()

    def udp_questions(self) -> list[tuple[str, str]]:
        """The questions received over UDP since the last ``clear``, in arrival order."""
        self._control.send("queries")
        return [
            (name, rtype) for name, rtype, transport in self._control.recv() if transport == "udp"
        ]


def _context(settings: Settings, dns_port: int) -> ToolContext:
    return ToolContext(
        settings=settings,
        job_id="bench",
        account_id="bench",
        deadline_at=datetime.now(UTC) + timedelta(seconds=60),
        services={"dns_port": dns_port, "web_ports": {"http": 9, "https": 9}},
    )


async def _sequential(server: RemoteDnsServer, questions: list[tuple[str, str]]) -> float:
    """Seconds to ask ``questions`` one after another with dnspython."""
    started = time.perf_counter()
    for name, rtype in questions:
        message = dns.message.make_query(
            name, dns.rdatatype.from_text(rtype), use_edns=0, payload=1232
        )
        await dns.asyncquery.udp(message, server.host, port=server.port, timeout=5)
    return time.perf_counter() - started


async def _round(server: RemoteDnsServer, settings: Settings) -> dict[str, Any]:
    server.clear()
    started, cpu = time.perf_counter(), time.process_time()
    result = await run(DomainInput(domain="bench.test"), _context(settings, server.port))
    checker, checker_cpu = time.perf_counter() - started, time.process_time() - cpu
    questions = server.udp_questions()
    sequential = await _sequential(server, questions)
    return {
        "checker": checker,
        "cpu": checker_cpu,
        "sequential": sequential,
        "queries": len(questions),
        "status": result.summary.status,
    }


async def measure(server: RemoteDnsServer, rounds: int) -> list[dict[str, Any]]:
    settings = Settings(
        dns_nameservers=[(server.host, server.port)],
        allow_private_networks=True,
        http_timeout_s=5,
        _env_file=None,
    )
    await _round(server, settings)  # warm-up: imports, the shared TLS context
    return [await _round(server, settings) for _ in range(rounds)]


def report(latency_ms: float, samples: list[dict[str, Any]]) -> dict[str, Any]:
    checker = statistics.median(s["checker"] for s in samples)
    sequential = statistics.median(s["sequential"] for s in samples)
    ratio = statistics.median(s["checker"] / s["sequential"] for s in samples)
    return {
        "latencyMs": latency_ms,
        "rounds": len(samples),
        "queries": samples[-1]["queries"],
        "checkerMs": round(checker * 1000, 1),
        "checkerCpuMs": round(statistics.median(s["cpu"] for s in samples) * 1000, 1),
        "sequentialDnsMs": round(sequential * 1000, 1),
        "ratio": round(ratio, 3),
        "target": TARGET_RATIO,
        "meetsTarget": ratio <= TARGET_RATIO,
        "checkerStatus": samples[-1]["status"],
    }


def main(latencies_ms: list[float], rounds: int) -> dict[str, Any]:
    runs = []
    for latency_ms in latencies_ms:
        with RemoteDnsServer(ZONE, latency=latency_ms / 1000) as server:
            runs.append(report(latency_ms, asyncio.run(measure(server, rounds))))
    return {
        "benchmark": "domain-setup-checker wall time / the same DNS queries asked sequentially (dnspython)",
        "date": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "runs": runs,
    }


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--latency-ms",
        type=float,
        nargs="+",
        default=[20.0],
        help="delay of every DNS answer; several values run one after another",
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    result = main(args.latency_ms, args.rounds)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print("latency  queries  checker  (cpu)   sequential  ratio  target <= 0.4")
    for r in result["runs"]:
        print(
            f"{r['latencyMs']:>5g} ms  {r['queries']:>7}  {r['checkerMs']:>5.1f} ms ({r['checkerCpuMs']:>4.1f})"
            f"  {r['sequentialDnsMs']:>8.1f} ms  {r['ratio']:>5.3f}  {'met' if r['meetsTarget'] else 'missed'}"
        )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    cli()
