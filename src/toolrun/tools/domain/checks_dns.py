"""Name-server, SOA, address, CAA and DNSSEC checks (Zonemaster and Internet.nl rules)."""

from __future__ import annotations

import ipaddress
import re

from toolrun.net.dns import ANSWERED, NOERROR
from toolrun.tools.domain.models import Check
from toolrun.tools.domain.setup_data import Observations, host_of, values_of

SOA_REFRESH = (1200, 43200)  # RFC 1912 §2.2
SOA_RETRY = (120, 7200)
SOA_EXPIRE = (604800, 2419200)  # 1 to 4 weeks; under 1 week fails (Zonemaster ZONE05)
SOA_MINIMUM = (300, 86400)  # Zonemaster ZONE06


def ns_count(o: Observations) -> Check:
    """At least two name servers (RFC 1034 §4.1, Zonemaster DELEGATION01)."""
    names = sorted({host_of(v) for v in o.values(o.domain, "NS")})
    status = o.answer(o.domain, "NS").status
    if len(names) >= 2:
        return Check(
            id="ns-count",
            title="Name servers",
            status="pass",
            value=names,
            detail=f"{len(names)} name servers are delegated.",
        )
    detail = f"only {len(names)} name server" if names else f"no NS records ({status})"
    return Check(
        id="ns-count",
        title="Name servers",
        status="fail",
        value=names,
        detail=detail[0].upper() + detail[1:] + ".",
        recommendation="Delegate the domain to at least two name servers, preferably on different networks.",
    )


def ns_diversity(o: Observations) -> Check:
    """Distinct addresses (DELEGATION02) on more than one network prefix (CONNECTIVITY04)."""
    addresses = sorted({a for values in o.ns_addresses.values() for a in values})
    title = "Name server diversity"
    if not addresses:
        return Check(
            id="ns-diversity",
            title=title,
            status="fail",
            value=[],
            detail="No name server address could be resolved.",
            recommendation="Make sure every NS host name has A or AAAA records.",
        )
    if len(addresses) < 2:
        return Check(
            id="ns-diversity",
            title=title,
            status="fail",
            value=addresses,
            detail="All name servers share one address.",
            recommendation="Run the name servers on at least two different addresses.",
        )
    prefixes = {_prefix(a) for a in addresses}
    ipv6 = any(":" in a for a in addresses)
    value = {"addresses": addresses, "prefixes": sorted(prefixes), "ipv6": ipv6}
    if len(prefixes) < 2:
        return Check(
            id="ns-diversity",
            title=title,
            status="warn",
            value=value,
            detail=f"All name server addresses are in {next(iter(prefixes))}: one network outage takes them all.",
            recommendation="Add a name server on another network (another /24 or /48, ideally another provider).",
        )
    detail = (
        f"{len(addresses)} addresses in {len(prefixes)} network prefixes"
        + ("" if ipv6 else "; none over IPv6")
        + "."
    )
    return Check(
        id="ns-diversity",
        title=title,
        status="pass" if ipv6 else "warn",
        value=value,
        detail=detail,
        recommendation=None if ipv6 else "Give at least one name server an IPv6 address.",
    )


def _prefix(address: str) -> str:
    ip = ipaddress.ip_address(address)
    length = 24 if ip.version == 4 else 48
    return str(ipaddress.ip_network(f"{address}/{length}", strict=False))


def ns_lame(o: Observations) -> Check:
    """Every delegated server answers authoritatively for the zone (DELEGATION04)."""
    probes = [(name, p) for name, ps in o.ns_probes.items() for p in ps]
    asked = [(n, p) for n, p in probes if not (p.error or "").startswith("not asked")]
    lame = sorted({n for n, p in asked if not p.authoritative})
    value = {
        n: [{"address": p.address, "authoritative": p.authoritative, "error": p.error} for p in ps]
        for n, ps in o.ns_probes.items()
    }
    if not asked:
        return Check(
            id="ns-lame",
            title="Lame delegation",
            status="info",
            value=value,
            detail="No name server could be asked directly.",
        )
    if lame:
        return Check(
            id="ns-lame",
            title="Lame delegation",
            status="fail",
            value=value,
            detail=f"Not authoritative for {o.domain}: {', '.join(lame)}.",
            recommendation="Remove lame name servers from the delegation or load the zone on them.",
        )
    return Check(
        id="ns-lame",
        title="Lame delegation",
        status="pass",
        value=value,
        detail="Every name server answers authoritatively.",
    )


_CONSISTENCY = {
    "serial": "SOA serials",
    "ns": "NS sets",
    "mname": "SOA MNAMEs",
    "rname": "SOA RNAMEs",
    "timers": "SOA timers (refresh retry expire minimum)",
}


def ns_consistency(o: Observations) -> Check:
    """Every authoritative server serves the same SOA serial (CONSISTENCY01), RNAME (02),
    timers (03), MNAME (06) and NS set (04)."""
    served = {
        p.address: {key: getattr(p, key) for key in _CONSISTENCY}
        for probes in o.ns_probes.values()
        for p in probes
        if p.authoritative and p.serial is not None
    }
    value = {
        a: {k: list(v) if isinstance(v, tuple) else v for k, v in f.items()}
        for a, f in served.items()
    }
    title = "Name server consistency"
    if len(served) < 2:
        return Check(
            id="ns-consistency",
            title=title,
            status="info",
            value=value,
            detail="Fewer than two name server addresses answered authoritatively to compare.",
        )
    differences = []
    for key, label in _CONSISTENCY.items():
        distinct = sorted({f[key] for f in served.values() if f[key] is not None}, key=str)
        if len(distinct) > 1:
            shown = "; ".join(
                " ".join(map(str, v)) if isinstance(v, tuple) else str(v) for v in distinct
            )
            differences.append(f"{label} differ: {shown}")
    if differences:
        return Check(
            id="ns-consistency",
            title=title,
            status="warn",
            value=value,
            detail=". ".join(differences) + ".",
            recommendation=(
                "Make every name server serve the same zone: check zone transfers (a serial "
                "difference right after an edit is normal, a lasting one is not) and publish "
                "the same NS records on all of them."
            ),
        )
    serial = next(iter(served.values()))["serial"]
    return Check(
        id="ns-consistency",
        title=title,
        status="pass",
        value=value,
        detail=f"{len(served)} name server addresses serve serial {serial} with the same SOA fields and NS set.",
    )


def soa(o: Observations) -> Check:
    """SOA timers within the ranges of RFC 1912 and Zonemaster ZONE02-06."""
    values = o.values(o.domain, "SOA")
    if not values:
        return Check(
            id="soa",
            title="SOA record",
            status="fail",
            value=None,
            detail=f"No SOA record ({o.answer(o.domain, 'SOA').status}).",
            recommendation="The zone must have an SOA record; check the delegation and the zone file.",
        )
    parts = values[0].split()
    mname, rname = parts[0].rstrip("."), parts[1].rstrip(".")
    serial, refresh, retry, expire, minimum = (int(p) for p in parts[2:7])
    value = {
        "mname": mname,
        "rname": rname,
        "serial": serial,
        "refresh": refresh,
        "retry": retry,
        "expire": expire,
        "minimum": minimum,
    }
    problems: list[str] = []
    failed = False
    if retry >= refresh:
        problems.append(f"retry ({retry}) should be lower than refresh ({refresh})")
        failed = True
    if expire < refresh or expire < SOA_EXPIRE[0]:
        problems.append(f"expire ({expire}) is under one week or under refresh")
        failed = True
    for name, number, (low, high) in (
        ("refresh", refresh, SOA_REFRESH),
        ("retry", retry, SOA_RETRY),
        ("expire", expire, SOA_EXPIRE),
        ("minimum", minimum, SOA_MINIMUM),
    ):
        if not low <= number <= high and not (name == "expire" and failed):
            problems.append(f"{name} {number} is outside {low}-{high}")
    if not re.fullmatch(r"(19|20)\d{6}\d{2}", str(serial)):
        value["serialFormat"] = "not YYYYMMDDnn"
    if not problems:
        return Check(
            id="soa",
            title="SOA record",
            status="pass",
            value=value,
            detail="The SOA timers are within the recommended ranges.",
        )
    return Check(
        id="soa",
        title="SOA record",
        status="fail" if failed else "warn",
        value=value,
        detail="; ".join(problems).capitalize() + ".",
        recommendation="Common values: refresh 3600-86400, retry 600-7200, expire 1209600-2419200, minimum 300-86400.",
    )


def addresses(o: Observations, host: str, check_id: str, title: str) -> Check:
    """The name has A and AAAA records (Internet.nl: IPv6 for the web server)."""
    v4, v6 = o.values(host, "A"), o.values(host, "AAAA")
    value = {"A": v4, "AAAA": v6}
    if not v4 and not v6:
        return Check(
            id=check_id,
            title=title,
            status="warn",
            value=value,
            detail=f"{host} has no A or AAAA record.",
            recommendation=f"Publish an address for {host} if it should serve a website.",
        )
    if not v6:
        return Check(
            id=check_id,
            title=title,
            status="warn",
            value=value,
            detail=f"{host} has IPv4 only.",
            recommendation=f"Add an AAAA record so {host} is reachable over IPv6.",
        )
    if not v4:
        return Check(
            id=check_id,
            title=title,
            status="warn",
            value=value,
            detail=f"{host} has IPv6 only.",
            recommendation="Add an A record: many networks are still IPv4-only.",
        )
    return Check(
        id=check_id,
        title=title,
        status="pass",
        value=value,
        detail=f"{host} has IPv4 and IPv6 addresses.",
    )


_CAA = re.compile(r'^(\d+)\s+([a-z0-9]+)\s+"(.*)"$', re.I)


def caa(o: Observations) -> Check:
    """The relevant CAA set (RFC 8659 §3: the first non-empty set climbing from the domain
    towards its TLD) parses, and at least one ``issue`` names a CA (Internet.nl)."""
    asked = [name for name, _ in o.caa]
    found_at, last = o.caa[-1] if o.caa else (o.domain, o.answer(o.domain, "CAA"))
    values = values_of(last, "CAA")
    value = {"records": values, "foundAt": found_at if values else None, "asked": asked}
    if last.status not in ANSWERED:
        reason = f" ({last.detail})" if last.detail else ""
        return Check(
            id="caa",
            title="CAA",
            status="fail",
            value=value,
            detail=f"The CAA lookup of {found_at} failed: {last.status}{reason}. Certificate authorities refuse to issue while it fails (RFC 8659 §3).",
            recommendation=f"Make the name servers of {found_at} answer CAA queries (an empty answer is fine).",
        )
    if not values:
        return Check(
            id="caa",
            title="CAA",
            status="warn",
            value=value,
            detail=f"No CAA record at {' or '.join(asked)}: any certificate authority may issue for this domain.",
            recommendation='Publish CAA records naming your CAs, e.g. 0 issue "letsencrypt.org".',
        )
    where = "" if found_at == o.domain else f" (inherited from {found_at})"
    parsed = [_CAA.match(v) for v in values]
    bad = [
        v
        for v, m in zip(values, parsed, strict=True)
        if m is None or m[2].lower() not in ("issue", "issuewild", "iodef", "issuemail", "issuevmc")
    ]
    issuers = [m[3] for m in parsed if m is not None and m[2].lower() == "issue"]
    if bad:
        return Check(
            id="caa",
            title="CAA",
            status="fail",
            value=value,
            detail=f"Malformed CAA record(s){where}: {', '.join(bad)}.",
            recommendation="Fix the CAA syntax: flags, a known tag and a quoted value.",
        )
    if not issuers:
        return Check(
            id="caa",
            title="CAA",
            status="warn",
            value=value,
            detail=f"CAA records exist{where} but none has an 'issue' tag.",
            recommendation="Add an 'issue' record for the CA that issues your certificates.",
        )
    return Check(
        id="caa",
        title="CAA",
        status="pass",
        value=value,
        detail=f"Certificate issuance is limited to: {', '.join(i or ';' for i in issuers)}{where}.",
    )


def dnssec(o: Observations) -> Check:
    """The zone is signed (DNSKEY) and the parent publishes a DS for it."""
    keys, ds = o.values(o.domain, "DNSKEY"), o.values(o.domain, "DS")
    validated = o.answer(o.domain, "DNSKEY").authenticated
    value = {"dnskey": len(keys), "ds": len(ds), "validated": validated}
    if keys and ds:
        detail = "The zone is signed and the parent publishes its DS record" + (
            " (validated by the resolver)." if validated else "."
        )
        return Check(id="dnssec", title="DNSSEC", status="pass", value=value, detail=detail)
    if keys:
        return Check(
            id="dnssec",
            title="DNSSEC",
            status="fail",
            value=value,
            detail="The zone is signed but the parent has no DS record, so nothing validates it.",
            recommendation="Publish the DS record at your registrar.",
        )
    if ds:
        return Check(
            id="dnssec",
            title="DNSSEC",
            status="fail",
            value=value,
            detail="The parent has a DS record but the zone serves no DNSKEY: validating resolvers will fail.",
            recommendation="Sign the zone again or remove the DS record at the registrar.",
        )
    if (
        o.answer(o.domain, "DNSKEY").status != NOERROR
        and o.answer(o.domain, "DNSKEY").status != "NODATA"
    ):
        return Check(
            id="dnssec",
            title="DNSSEC",
            status="info",
            value=value,
            detail=f"DNSKEY query failed ({o.answer(o.domain, 'DNSKEY').status}).",
        )
    return Check(
        id="dnssec",
        title="DNSSEC",
        status="warn",
        value=value,
        detail="The zone is not signed with DNSSEC.",
        recommendation="Enable DNSSEC at your DNS host and publish the DS record at your registrar.",
    )
