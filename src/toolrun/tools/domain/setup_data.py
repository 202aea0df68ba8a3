"""What domain-setup-checker observes, gathered concurrently before any check runs.

Every independent question (NS, SOA, addresses, MX, TXT, DMARC, DKIM selectors,
MTA-STS, TLS-RPT, BIMI, CAA, DNSKEY, DS) is asked at once, beside the two web requests.
Each follow-up starts as soon as the one answer it needs is in, not when the whole
first round is: the name-server addresses and then each server's own SOA and NS
answers after the NS answer, the MX host addresses after MX, the SPF tree after TXT,
the DMARC report authorisations after ``_dmarc``, the MTA-STS policy after
``_mta-sts``, the CAA climb towards the TLD after the name's own CAA answer. So the run
takes about as long as its longest chain of dependent answers.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

from toolrun.config import Settings
from toolrun.net.dns import ANSWERED, DnsAnswer
from toolrun.net.errors import NetError
from toolrun.net.fetch import Fetcher, FetchResult
from toolrun.tools.domain.lookups import Lookups, question_key
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
    """Everything the checks read.

    ``answers`` holds every DNS question of the run (the SPF tree, MX and name-server
    host addresses and the CAA climb included); ``caa`` is the climb in the order asked.
    """

    domain: str
    answers: dict[tuple[str, str], DnsAnswer] = field(default_factory=dict)
    ns_addresses: dict[str, list[str]] = field(default_factory=dict)
    ns_probes: dict[str, list[NsProbe]] = field(default_factory=dict)
    mx_addresses: dict[str, list[str]] = field(default_factory=dict)
    spf: SpfReport | None = None
    dkim: dict[str, str] = field(default_factory=dict)
    dmarc_authorised: dict[str, bool] = field(default_factory=dict)
    mta_sts_policy: WebFetch | None = None
    caa: list[tuple[str, DnsAnswer]] = field(default_factory=list)
    https: WebFetch | None = None
    http: WebFetch | None = None
    queries: int = 0

    def answer(self, name: str, rtype: str) -> DnsAnswer:
        return self.answers[question_key(name, rtype)]

    def values(self, name: str, rtype: str) -> list[str]:
        return values_of(self.answer(name, rtype), rtype)


def values_of(answer: DnsAnswer, rtype: str) -> list[str]:
    """The values of the ``rtype`` records of an answer (CNAME steps left out)."""
    return [r.value for r in answer.records if r.type == rtype]


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


def caa_names(domain: str) -> list[str]:
    """The names RFC 8659 §3 climbs for the relevant CAA set: ``domain`` up to its TLD."""
    labels = domain.split(".")
    return [".".join(labels[i:]) for i in range(len(labels))]


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
    ports = web_ports or {}
    try:
        questions = first_round(domain)
        for name, rtype in questions:
            lookups.start(name, rtype)
        async with asyncio.TaskGroup() as group:
            web = group.create_task(_web(domain, fetcher, ports))
            group.create_task(_name_servers(observed, lookups, settings, dns_port))
            group.create_task(_mail_hosts(observed, lookups))
            group.create_task(_spf(observed, lookups))
            group.create_task(_dmarc_authorisations(observed, lookups))
            group.create_task(_mta_sts(observed, lookups, fetcher, ports))
            group.create_task(_caa(observed, lookups))
            group.create_task(lookups.many(questions))
        observed.https, observed.http = web.result()
        observed.answers = lookups.answers()
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
    """Each NS host's addresses, then each address asked directly (once per address)."""
    answer = await lookups.get(observed.domain, "NS")
    names = sorted({host_of(v) for v in values_of(answer, "NS")})[:MAX_PROBED_NS]
    probes: dict[str, asyncio.Task[NsProbe]] = {}

    async def resolve_and_probe(name: str) -> tuple[str, list[str], list[NsProbe]]:
        found = await lookups.many([(name, "A"), (name, "AAAA")])
        addresses = [r.value for a in found for r in a.records if r.type in ("A", "AAAA")]
        for address in addresses:
            if address not in probes:
                probes[address] = asyncio.ensure_future(
                    probe(observed.domain, address, settings, port=port)
                )
        return name, addresses, list(await asyncio.gather(*(probes[a] for a in addresses)))

    for name, addresses, results in await asyncio.gather(*map(resolve_and_probe, names)):
        observed.ns_addresses[name] = addresses
        observed.ns_probes[name] = results


async def _mail_hosts(observed: Observations, lookups: Lookups) -> None:
    answer = await lookups.get(observed.domain, "MX")
    hosts = [h for h in dict.fromkeys(host_of(v) for v in values_of(answer, "MX")) if h]
    hosts = hosts[:MAX_MX_HOSTS]
    questions = [(h, t) for h in hosts for t in ("A", "AAAA")]
    answers = await lookups.many(questions)
    for host in hosts:
        observed.mx_addresses[host] = []
    for (host, _), found in zip(questions, answers, strict=True):
        observed.mx_addresses[host].extend(
            r.value for r in found.records if r.type in ("A", "AAAA")
        )


async def _spf(observed: Observations, lookups: Lookups) -> None:
    observed.spf = await evaluate_spf(observed.domain, lookups.get)


async def _caa(observed: Observations, lookups: Lookups) -> None:
    """Climb from the domain towards its TLD; stop at the first CAA set or failed lookup."""
    for name in caa_names(observed.domain):
        answer = await lookups.get(name, "CAA")
        observed.caa.append((name, answer))
        if values_of(answer, "CAA") or answer.status not in ANSWERED:
            return


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
    answer = await lookups.get(f"_dmarc.{observed.domain}", "TXT")
    records = [v for v in values_of(answer, "TXT") if v.startswith("v=DMARC1")]
    if not records:
        return
    tags = dmarc_tags(records[0])
    external = sorted(
        {
            d
            for d in report_domains(tags.get("rua", "") + "," + tags.get("ruf", ""))
            if d != observed.domain and not d.endswith("." + observed.domain)
        }
    )
    found = await lookups.many([(f"{observed.domain}._report._dmarc.{d}", "TXT") for d in external])
    for target, authorisation in zip(external, found, strict=True):
        observed.dmarc_authorised[target] = any(
            r.value.startswith("v=DMARC1") for r in authorisation.records
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


async def _mta_sts(
    observed: Observations, lookups: Lookups, fetcher: Fetcher, ports: dict[str, int]
) -> None:
    answer = await lookups.get(f"_mta-sts.{observed.domain}", "TXT")
    if not any(v.startswith("v=STSv1") for v in values_of(answer, "TXT")):
        return
    url = _url("https", f"mta-sts.{observed.domain}", "/.well-known/mta-sts.txt", ports)
    observed.mta_sts_policy = await _fetch(fetcher, url)
