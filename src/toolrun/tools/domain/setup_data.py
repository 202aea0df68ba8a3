"""What domain-setup-checker observes, gathered concurrently before any check runs.

Round one asks every independent question at once (NS, SOA, addresses, MX, TXT,
DMARC, DKIM selectors, MTA-STS, TLS-RPT, BIMI, CAA, DNSKEY, DS) while the web
requests run beside it; round two asks what depends on round one (name-server
addresses and their direct SOA answers, MX host addresses, the SPF tree, the
MTA-STS policy, DMARC report authorisations).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

from toolrun.config import Settings
from toolrun.net.dns import DnsAnswer
from toolrun.net.errors import NetError
from toolrun.net.fetch import Fetcher, FetchResult
from toolrun.tools.domain.lookups import Lookups
from toolrun.tools.domain.nsprobe import NsProbe, probe
from toolrun.tools.domain.spf import SpfReport, evaluate_spf

DKIM_SELECTORS: tuple[str, ...] = (
    "google", "20161025", "20230601", "20210112",
    "selector1", "selector2",
    "k1", "k2", "k3", "mandrill",
    "s1", "s2", "smtpapi",
    "default", "dkim", "mail", "email", "smtp", "mx", "key1", "key2", "sig1", "m1", "dk",
    "proofpoint", "ppk1", "mimecast", "mimecast20190104",
    "zendesk1", "zendesk2", "ctct1", "ctct2", "hs1", "hs2", "amazonses",
)  # fmt: skip
"""Commonly published DKIM selectors (reference §5.4): a domain's selector cannot be listed."""

MAX_PROBED_NS = 8
MAX_MX_HOSTS = 10
POLICY_BYTES = 64 * 1024


@dataclass(frozen=True)
class WebFetch:
    """One web request's outcome: the response, or the public reason it failed."""

    url: str
    result: FetchResult | None = None
    error: NetError | None = None


@dataclass
class Observations:
    """Everything the checks read."""

    domain: str
    answers: dict[tuple[str, str], DnsAnswer] = field(default_factory=dict)
    ns_addresses: dict[str, list[str]] = field(default_factory=dict)
    ns_probes: dict[str, list[NsProbe]] = field(default_factory=dict)
    mx_addresses: dict[str, list[str]] = field(default_factory=dict)
    spf: SpfReport | None = None
    dkim: dict[str, str] = field(default_factory=dict)
    dmarc_authorised: dict[str, bool] = field(default_factory=dict)
    mta_sts_policy: WebFetch | None = None
    https: WebFetch | None = None
    http: WebFetch | None = None
    queries: int = 0

    def answer(self, name: str, rtype: str) -> DnsAnswer:
        return self.answers[(name, rtype)]

    def values(self, name: str, rtype: str) -> list[str]:
        return [r.value for r in self.answers[(name, rtype)].records if r.type == rtype]


def first_round(domain: str) -> list[tuple[str, str]]:
    """The questions that need no earlier answer."""
    questions = [
        (domain, "NS"), (domain, "SOA"), (domain, "A"), (domain, "AAAA"),
        (f"www.{domain}", "A"), (f"www.{domain}", "AAAA"),
        (domain, "MX"), (domain, "TXT"), (f"_dmarc.{domain}", "TXT"),
        (f"_domainkey.{domain}", "TXT"), (f"_mta-sts.{domain}", "TXT"),
        (f"_smtp._tls.{domain}", "TXT"), (f"default._bimi.{domain}", "TXT"),
        (domain, "CAA"), (domain, "DNSKEY"), (domain, "DS"),
    ]  # fmt: skip
    questions += [(f"{s}._domainkey.{domain}", "TXT") for s in DKIM_SELECTORS]
    return questions


def host_of(value: str) -> str:
    """The host name at the end of an NS/MX value (``10 mx.example.`` -> ``mx.example``)."""
    return value.split()[-1].rstrip(".").lower() if value.split() else ""


async def gather(
    domain: str,
    settings: Settings,
    fetcher: Fetcher,
    *,
    dns_port: int = 53,
    web_ports: dict[str, int] | None = None,
) -> Observations:
    """Ask everything; DNS outcomes and web failures are observations, never exceptions."""
    lookups = Lookups(settings)
    observed = Observations(domain=domain)
    try:
        web = asyncio.ensure_future(_web(domain, fetcher, web_ports or {}))
        questions = first_round(domain)
        answers = await lookups.many(questions)
        observed.answers.update(zip(questions, answers, strict=True))
        await asyncio.gather(
            _name_servers(observed, lookups, settings, dns_port),
            _mail_hosts(observed, lookups),
            _spf(observed, lookups),
            _dmarc_authorisations(observed, lookups),
            _mta_sts(observed, fetcher, web_ports or {}),
        )
        observed.https, observed.http = await web
        observed.dkim = {
            s: v
            for s in DKIM_SELECTORS
            for v in observed.values(f"{s}._domainkey.{domain}", "TXT")[:1]
            if "p=" in v or v.lower().startswith("v=dkim1")
        }
    finally:
        observed.queries = lookups.asked
        await lookups.aclose()
    return observed


async def _name_servers(
    observed: Observations, lookups: Lookups, settings: Settings, port: int
) -> None:
    names = sorted({host_of(v) for v in observed.values(observed.domain, "NS")})[:MAX_PROBED_NS]
    questions = [(n, t) for n in names for t in ("A", "AAAA")]
    answers = await lookups.many(questions)
    for (name, _), answer in zip(questions, answers, strict=True):
        observed.ns_addresses.setdefault(name, []).extend(
            r.value for r in answer.records if r.type in ("A", "AAAA")
        )

    async def probe_all(name: str) -> tuple[str, list[NsProbe]]:
        addresses = observed.ns_addresses.get(name, [])
        probes = await asyncio.gather(
            *(probe(observed.domain, a, settings, port=port) for a in addresses)
        )
        return name, list(probes)

    observed.ns_probes = dict(await asyncio.gather(*(probe_all(n) for n in names)))


async def _mail_hosts(observed: Observations, lookups: Lookups) -> None:
    hosts = [host_of(v) for v in observed.values(observed.domain, "MX")]
    hosts = [h for h in dict.fromkeys(hosts) if h][:MAX_MX_HOSTS]
    questions = [(h, t) for h in hosts for t in ("A", "AAAA")]
    answers = await lookups.many(questions)
    for host in hosts:
        observed.mx_addresses[host] = []
    for (host, _), answer in zip(questions, answers, strict=True):
        observed.mx_addresses[host].extend(
            r.value for r in answer.records if r.type in ("A", "AAAA")
        )


async def _spf(observed: Observations, lookups: Lookups) -> None:
    observed.spf = await evaluate_spf(observed.domain, lookups.get)


def dmarc_record(observed: Observations) -> list[str]:
    """The ``_dmarc`` TXT values that are DMARC records."""
    return [
        v for v in observed.values(f"_dmarc.{observed.domain}", "TXT") if v.startswith("v=DMARC1")
    ]


def dmarc_tags(record: str) -> dict[str, str]:
    """``{tag: value}`` of a DMARC/TLS-RPT/MTA-STS-style ``k=v; k=v`` record (first wins)."""
    tags: dict[str, str] = {}
    for part in record.split(";"):
        key, sep, value = part.partition("=")
        if sep and key.strip().lower() not in tags:
            tags[key.strip().lower()] = value.strip()
    return tags


def report_domains(uris: str) -> list[str]:
    """The domains of ``mailto:`` report addresses."""
    return [m.lower().rstrip(".") for m in re.findall(r"mailto:[^@,;\s]+@([^,;!\s]+)", uris, re.I)]


async def _dmarc_authorisations(observed: Observations, lookups: Lookups) -> None:
    records = dmarc_record(observed)
    if not records:
        return
    tags = dmarc_tags(records[0])
    external = {
        d
        for d in report_domains(tags.get("rua", "") + "," + tags.get("ruf", ""))
        if d != observed.domain and not d.endswith("." + observed.domain)
    }
    for target in sorted(external):
        answer = await lookups.get(f"{observed.domain}._report._dmarc.{target}", "TXT")
        observed.dmarc_authorised[target] = any(
            r.value.startswith("v=DMARC1") for r in answer.records
        )


def _url(scheme: str, host: str, path: str, ports: dict[str, int]) -> str:
    port = ports.get(scheme)
    return f"{scheme}://{host}{f':{port}' if port else ''}{path}"


async def _fetch(fetcher: Fetcher, url: str, **options: object) -> WebFetch:
    try:
        result = await fetcher.fetch(url, max_bytes=POLICY_BYTES, truncate=True, **options)  # type: ignore[arg-type]
    except NetError as exc:
        return WebFetch(url, error=exc)
    return WebFetch(url, result=result)


async def _web(domain: str, fetcher: Fetcher, ports: dict[str, int]) -> tuple[WebFetch, WebFetch]:
    https, http = await asyncio.gather(
        _fetch(fetcher, _url("https", domain, "/", ports), follow_redirects=False),
        _fetch(fetcher, _url("http", domain, "/", ports), follow_redirects=False),
    )
    return https, http


async def _mta_sts(observed: Observations, fetcher: Fetcher, ports: dict[str, int]) -> None:
    if not any(
        v.startswith("v=STSv1") for v in observed.values(f"_mta-sts.{observed.domain}", "TXT")
    ):
        return
    url = _url("https", f"mta-sts.{observed.domain}", "/.well-known/mta-sts.txt", ports)
    observed.mta_sts_policy = await _fetch(fetcher, url)
