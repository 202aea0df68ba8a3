"""domain-setup-checker wall time against the same DNS queries asked one after another.

    .venv/bin/python -m bench.domain_bench [--latency-ms 20] [--rounds 5]

A loopback authoritative DNS server (tests/servers/dns.py) serves a well-configured
fixture domain and answers every query after ``--latency-ms`` (each answer on its own
timer, so concurrent queries overlap as they would against a real resolver). Each
round runs the checker, then replays every query the server received during that run
one after another with dnspython (UDP, same server, same latency). The figure is
checker wall time / sequential DNS time; the target is <= 0.4. The web checks point
at a closed port (they fail at once and add no DNS). Prints a table and writes
bench/results/domain.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import platform
import socket
import statistics
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
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


class SlowDnsServer(DnsServer):
    """The loopback server, each UDP answer sent ``latency`` seconds after its query."""

    def __init__(self, zone: str, *, latency: float) -> None:
        super().__init__(zone)
        self.latency = latency
        self._timers: list[threading.Timer] = []

    def _on_udp(self, sock: socket.socket) -> None:
        data, peer = sock.recvfrom(65535)
        reply = self._reply(data, "udp")
        if reply is None:
            return

        def send() -> None:
            with contextlib.suppress(OSError):
                sock.sendto(reply, peer)

        timer = threading.Timer(self.latency, send)
        self._timers.append(timer)
        timer.start()

    def stop(self) -> None:
        for timer in self._timers:
            timer.cancel()
        super().stop()


def _context(settings: Settings, dns_port: int) -> ToolContext:
    return ToolContext(
        settings=settings,
        job_id="bench",
        account_id="bench",
        deadline_at=datetime.now(UTC) + timedelta(seconds=60),
        services={"dns_port": dns_port, "web_ports": {"http": 9, "https": 9}},
    )


async def _sequential(server: SlowDnsServer, questions: list[tuple[str, str]]) -> float:
    """Seconds to ask ``questions`` one after another with dnspython."""
    started = time.perf_counter()
    for name, rtype in questions:
        message = dns.message.make_query(
            name, dns.rdatatype.from_text(rtype), use_edns=0, payload=1232
        )
        await dns.asyncquery.udp(message, server.host, port=server.port, timeout=5)
    return time.perf_counter() - started


async def _round(server: SlowDnsServer, settings: Settings) -> tuple[float, float, int, str]:
    server.queries.clear()
    started = time.perf_counter()
    result = await run(DomainInput(domain="bench.test"), _context(settings, server.port))
    checker = time.perf_counter() - started
    questions = [(q.name, q.type) for q in server.queries if q.transport == "udp"]
    sequential = await _sequential(server, questions)
    return checker, sequential, len(questions), result.summary.status


async def main(latency_ms: float, rounds: int) -> dict[str, Any]:
    server = SlowDnsServer(ZONE, latency=latency_ms / 1000)
    server.start()
    try:
        settings = Settings(
            dns_nameservers=[server.nameserver],
            allow_private_networks=True,
            http_timeout_s=5,
            _env_file=None,
        )
        samples = [await _round(server, settings) for _ in range(rounds)]
    finally:
        server.stop()
    checker = statistics.median(s[0] for s in samples)
    sequential = statistics.median(s[1] for s in samples)
    return {
        "benchmark": "domain-setup-checker wall time / the same DNS queries asked sequentially (dnspython)",
        "date": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "latencyMs": latency_ms,
        "rounds": rounds,
        "queries": samples[-1][2],
        "checkerMs": round(checker * 1000, 1),
        "sequentialDnsMs": round(sequential * 1000, 1),
        "ratio": round(checker / sequential, 3),
        "target": TARGET_RATIO,
        "meetsTarget": checker / sequential <= TARGET_RATIO,
        "checkerStatus": samples[-1][3],
    }


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--latency-ms", type=float, default=20.0, help="delay of every DNS answer")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    report = asyncio.run(main(args.latency_ms, args.rounds))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"queries per run       {report['queries']}")
    print(f"checker wall time     {report['checkerMs']} ms")
    print(f"sequential DNS time   {report['sequentialDnsMs']} ms")
    print(f"ratio                 {report['ratio']} (target <= {TARGET_RATIO})")
    print(f"written to            {RESULTS}")


if __name__ == "__main__":
    cli()
