"""Mail checks: MX, SPF, DMARC, DKIM, MTA-STS, TLS-RPT and BIMI (checkdmarc and Internet.nl rules)."""

from __future__ import annotations

import base64
import re

from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import load_der_public_key

from toolrun.net.dns import ANSWERED
from toolrun.tools.domain.models import Check
from toolrun.tools.domain.setup_data import (
    DKIM_SELECTORS,
    Observations,
    dmarc_record,
    dmarc_tags,
)

DKIM_MIN_BITS = 1024
MTA_STS_MAX_AGE = 31557600


def _null_mx(o: Observations) -> bool:
    values = o.values(o.domain, "MX")
    return len(values) == 1 and values[0].split()[-1] == "."


def receives_mail(o: Observations) -> bool:
    """MX records exist and are not a null MX (RFC 7505)."""
    return bool(o.values(o.domain, "MX")) and not _null_mx(o)


def mx(o: Observations) -> Check:
    """MX records present; a null MX says the domain takes no mail."""
    values = o.values(o.domain, "MX")
    if _null_mx(o):
        return Check(
            id="mx",
            title="MX records",
            status="info",
            value=values,
            detail="Null MX (RFC 7505): the domain accepts no mail.",
        )
    if not values:
        return Check(
            id="mx",
            title="MX records",
            status="warn",
            value=[],
            detail="No MX record: senders fall back to the domain's address.",
            recommendation="Publish MX records, or a null MX (0 .) if the domain takes no mail.",
        )
    return Check(
        id="mx",
        title="MX records",
        status="pass",
        value=values,
        detail=f"{len(values)} mail exchanger(s).",
    )


def mx_resolvable(o: Observations) -> Check:
    """Every MX host resolves to an address."""
    if not receives_mail(o):
        return Check(
            id="mx-resolvable",
            title="MX hosts resolve",
            status="info",
            value={},
            detail="No mail exchanger to resolve.",
        )
    missing = [h for h, a in o.mx_addresses.items() if not a]
    unanswered = {
        h: a.status
        for h in missing
        for a in (o.answer(h, "A"), o.answer(h, "AAAA"))
        if a.status not in ANSWERED
    }
    if unanswered and set(unanswered) == set(missing):
        failed = ", ".join(f"{h} ({status})" for h, status in unanswered.items())
        return Check(
            id="mx-resolvable",
            title="MX hosts resolve",
            status="warn",
            value=o.mx_addresses,
            detail=f"The address lookup failed for: {failed}.",
            recommendation="Make sure the name servers of every MX host answer A and AAAA queries.",
        )
    if missing:
        return Check(
            id="mx-resolvable",
            title="MX hosts resolve",
            status="fail",
            value=o.mx_addresses,
            detail=f"No address for: {', '.join(missing)}.",
            recommendation="Point MX records at host names with A/AAAA records (not CNAMEs or IPs).",
        )
    return Check(
        id="mx-resolvable",
        title="MX hosts resolve",
        status="pass",
        value=o.mx_addresses,
        detail="Every MX host has an address.",
    )


def spf(o: Observations) -> Check:
    """One valid SPF record ending in ~all or -all."""
    report = o.spf
    title = "SPF"
    if report is None or report.record is None:
        status = "fail" if receives_mail(o) else "warn"
        return Check(
            id="spf",
            title=title,
            status=status,
            value=None,
            detail="No SPF record.",
            recommendation="Publish a TXT record like 'v=spf1 mx -all' (or 'v=spf1 -all' if the domain sends no mail).",
        )
    value = {
        "record": report.record,
        "policy": report.policy,
        "errors": report.errors,
        "warnings": report.warnings,
    }
    syntax = [e for e in report.errors if "limit is" not in e]
    if syntax:
        return Check(
            id="spf",
            title=title,
            status="fail",
            value=value,
            detail="; ".join(syntax) + ".",
            recommendation="Fix the SPF record: receivers treat these errors as a permanent error (no SPF at all).",
        )
    if report.policy == "+all":
        return Check(
            id="spf",
            title=title,
            status="fail",
            value=value,
            detail="'+all' allows every server in the world to send as this domain.",
            recommendation="End the record with '-all' or '~all'.",
        )
    if report.policy in ("?all", None):
        return Check(
            id="spf",
            title=title,
            status="warn",
            value=value,
            detail="The SPF policy is neutral ('?all' or no 'all').",
            recommendation="End the record with '-all' (or '~all' while testing).",
        )
    return Check(
        id="spf",
        title=title,
        status="pass",
        value=value,
        detail=f"Valid SPF record ending in {report.policy}.",
    )


def spf_limits(o: Observations) -> Check:
    """At most 10 DNS-querying terms and 2 void lookups (RFC 7208 §4.6.4)."""
    report = o.spf
    if report is None or report.record is None:
        return Check(
            id="spf-lookups",
            title="SPF lookup limits",
            status="info",
            value=None,
            detail="No SPF record.",
        )
    value = {"lookups": report.lookups, "voidLookups": report.void_lookups}
    problems = [e for e in report.errors if "limit is" in e]
    if problems:
        return Check(
            id="spf-lookups",
            title="SPF lookup limits",
            status="fail",
            value=value,
            detail="; ".join(problems) + ".",
            recommendation="Remove unused includes or replace them with ip4/ip6 ranges; receivers stop at 10 lookups.",
        )
    return Check(
        id="spf-lookups",
        title="SPF lookup limits",
        status="pass",
        value=value,
        detail=f"{report.lookups} of 10 DNS lookups, {report.void_lookups} of 2 void lookups.",
    )


def dmarc(o: Observations) -> Check:
    """One ``v=DMARC1`` record with an enforcing policy."""
    records = dmarc_record(o)
    others = [v for v in o.values(f"_dmarc.{o.domain}", "TXT") if not v.startswith("v=DMARC1")]
    if not records:
        status = "fail" if receives_mail(o) else "warn"
        misplaced = " (a TXT record at _dmarc does not start with v=DMARC1)" if others else ""
        return Check(
            id="dmarc",
            title="DMARC",
            status=status,
            value=None,
            detail=f"No DMARC record{misplaced}.",
            recommendation=f"Publish TXT _dmarc.{o.domain} 'v=DMARC1; p=none; rua=mailto:dmarc@{o.domain}', then move to quarantine or reject.",
        )
    if len(records) > 1:
        return Check(
            id="dmarc",
            title="DMARC",
            status="fail",
            value=records,
            detail="More than one DMARC record: receivers ignore them all.",
            recommendation="Keep exactly one v=DMARC1 record.",
        )
    tags = dmarc_tags(records[0])
    policy, subdomain = tags.get("p", "").lower(), tags.get("sp", "").lower()
    value = {"record": records[0], "p": policy or None, "sp": subdomain or None}
    if policy not in ("none", "quarantine", "reject"):
        return Check(
            id="dmarc",
            title="DMARC",
            status="fail",
            value=value,
            detail="The record has no valid 'p=' policy.",
            recommendation="Set p=none, p=quarantine or p=reject.",
        )
    if policy == "none" or tags.get("t", "").lower() == "y":
        return Check(
            id="dmarc",
            title="DMARC",
            status="warn",
            value=value,
            detail="DMARC is not enforced (p=none or testing).",
            recommendation="Once reports show your mail passes, move to p=quarantine, then p=reject.",
        )
    if subdomain == "none":
        return Check(
            id="dmarc",
            title="DMARC",
            status="warn",
            value=value,
            detail="Subdomains are not protected (sp=none).",
            recommendation="Remove sp=none or set it to quarantine/reject.",
        )
    return Check(
        id="dmarc", title="DMARC", status="pass", value=value, detail=f"DMARC policy p={policy}."
    )


def dmarc_reporting(o: Observations) -> Check:
    """Aggregate reports requested (rua), and external report domains authorised (RFC 7489 §7.1)."""
    records = dmarc_record(o)
    if len(records) != 1:
        return Check(
            id="dmarc-reporting",
            title="DMARC reporting",
            status="info",
            value=None,
            detail="No single DMARC record to read.",
        )
    tags = dmarc_tags(records[0])
    value = {"rua": tags.get("rua"), "ruf": tags.get("ruf"), "authorised": o.dmarc_authorised}
    if not tags.get("rua"):
        return Check(
            id="dmarc-reporting",
            title="DMARC reporting",
            status="warn",
            value=value,
            detail="No aggregate report address (rua).",
            recommendation="Add rua=mailto:... to receive reports on who sends as your domain.",
        )
    missing = [d for d, ok in o.dmarc_authorised.items() if not ok]
    if missing:
        return Check(
            id="dmarc-reporting",
            title="DMARC reporting",
            status="warn",
            value=value,
            detail=f"External report domains have not authorised the reports: {', '.join(missing)}.",
            recommendation=f"Publish TXT {o.domain}._report._dmarc.<their domain> 'v=DMARC1' there.",
        )
    return Check(
        id="dmarc-reporting",
        title="DMARC reporting",
        status="pass",
        value=value,
        detail="Aggregate reports are requested.",
    )


def _dkim_bits(record: str) -> int | None:
    key = dmarc_tags(record).get("p", "")
    try:
        public = load_der_public_key(base64.b64decode(re.sub(r"\s", "", key)))
    except (ValueError, TypeError):
        return None
    return public.key_size if isinstance(public, rsa.RSAPublicKey) else None


def dkim(o: Observations) -> Check:
    """DKIM keys on common selectors; RSA keys of at least 1024 bits."""
    found = {s: v for s, v in o.dkim.items() if dmarc_tags(v).get("p")}
    revoked = sorted(s for s, v in o.dkim.items() if not dmarc_tags(v).get("p"))
    weak = {
        s: b for s, v in found.items() if (b := _dkim_bits(v)) is not None and b < DKIM_MIN_BITS
    }
    value = {"selectors": sorted(found), "revoked": revoked, "weak": weak}
    if weak:
        return Check(
            id="dkim",
            title="DKIM",
            status="fail",
            value=value,
            detail=f"Weak DKIM keys: {', '.join(f'{s} ({b} bits)' for s, b in weak.items())}.",
            recommendation="Rotate to RSA keys of 2048 bits.",
        )
    if found:
        return Check(
            id="dkim",
            title="DKIM",
            status="pass",
            value=value,
            detail=f"DKIM keys found for selectors: {', '.join(sorted(found))}.",
        )
    failed = sorted(
        s
        for s in DKIM_SELECTORS
        if o.answer(f"{s}._domainkey.{o.domain}", "TXT").status not in ANSWERED
    )
    if failed:
        value["unanswered"] = failed
        return Check(
            id="dkim",
            title="DKIM",
            status="warn",
            value=value,
            detail=f"No DKIM key on the selectors that answered; the lookup failed for {len(failed)} selector(s): {', '.join(failed)}.",
            recommendation="Make sure the name servers answer TXT queries under _domainkey.",
        )
    status = o.answer(f"_domainkey.{o.domain}", "TXT").status
    if status in ("NOERROR", "NODATA"):
        return Check(
            id="dkim",
            title="DKIM",
            status="info",
            value=value,
            detail="_domainkey exists but none of the common selectors has a key; the selector in use cannot be listed from DNS.",
        )
    return Check(
        id="dkim",
        title="DKIM",
        status="warn" if receives_mail(o) else "info",
        value=value,
        detail="No DKIM key on any common selector.",
        recommendation="Sign outgoing mail with DKIM and publish the key at <selector>._domainkey.",
    )


def mta_sts(o: Observations) -> Check:
    """``_mta-sts`` TXT plus a policy file with mode, max_age and mx lines (RFC 8461)."""
    txt = [v for v in o.values(f"_mta-sts.{o.domain}", "TXT") if v.startswith("v=STSv1")]
    title = "MTA-STS"
    if not txt:
        return Check(
            id="mta-sts",
            title=title,
            status="warn" if receives_mail(o) else "info",
            value=None,
            detail="No MTA-STS policy.",
            recommendation="Publish _mta-sts TXT 'v=STSv1; id=...' and https://mta-sts.<domain>/.well-known/mta-sts.txt."
            if receives_mail(o)
            else None,
        )
    fetched = o.mta_sts_policy
    if len(txt) > 1 or "id" not in dmarc_tags(txt[0]):
        return Check(
            id="mta-sts",
            title=title,
            status="fail",
            value=txt,
            detail="The _mta-sts record must be single and carry an id.",
            recommendation="Keep one 'v=STSv1; id=<changing value>' record.",
        )
    if fetched is None or fetched.result is None or fetched.result.status_code != 200:
        reason = (
            fetched.error.message
            if fetched and fetched.error
            else f"HTTP {fetched.result.status_code}"
            if fetched and fetched.result
            else "not fetched"
        )
        return Check(
            id="mta-sts",
            title=title,
            status="fail",
            value={"url": fetched.url if fetched else None},
            detail=f"The policy file could not be fetched ({reason}).",
            recommendation="Serve the policy over HTTPS with a valid certificate.",
        )
    policy, errors = parse_mta_sts(fetched.result.text or "")
    patterns = policy.get("mx")
    hosts = list(o.mx_addresses)
    uncovered = (
        [h for h in hosts if not any(_mx_match(p, h) for p in patterns or [] if isinstance(p, str))]
        if isinstance(patterns, list)
        else hosts
    )
    value = {"url": fetched.url, "policy": policy, "errors": errors, "uncoveredMx": uncovered}
    if errors:
        return Check(
            id="mta-sts",
            title=title,
            status="fail",
            value=value,
            detail="; ".join(errors) + ".",
            recommendation="Fix the policy file (RFC 8461 §3.2).",
        )
    if uncovered:
        return Check(
            id="mta-sts",
            title=title,
            status="fail",
            value=value,
            detail=f"MX hosts not covered by the policy: {', '.join(uncovered)}.",
            recommendation="List every MX host (or a *.pattern) in the policy's mx lines.",
        )
    if policy.get("mode") != "enforce":
        return Check(
            id="mta-sts",
            title=title,
            status="warn",
            value=value,
            detail=f"The policy mode is {policy.get('mode')}.",
            recommendation="Move to mode: enforce once TLS reports are clean.",
        )
    return Check(
        id="mta-sts", title=title, status="pass", value=value, detail="MTA-STS is enforced."
    )


def parse_mta_sts(text: str) -> tuple[dict[str, object], list[str]]:
    """The policy's keys (``mx`` as a list) and what is wrong with it."""
    policy: dict[str, object] = {}
    mx_hosts: list[str] = []
    errors: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or key not in ("version", "mode", "max_age", "mx"):
            errors.append(f"unknown line {line.strip()!r}")
        elif key == "mx":
            mx_hosts.append(value.lower().rstrip("."))
        elif key in policy:
            errors.append(f"duplicate key {key}")
        else:
            policy[key] = value
    policy["mx"] = mx_hosts
    if policy.get("version") != "STSv1":
        errors.append("version must be STSv1")
    if policy.get("mode") not in ("enforce", "testing", "none"):
        errors.append("mode must be enforce, testing or none")
    age = str(policy.get("max_age", ""))
    if not age.isdigit() or int(age) > MTA_STS_MAX_AGE:
        errors.append(f"max_age must be a number up to {MTA_STS_MAX_AGE}")
    if not mx_hosts and policy.get("mode") != "none":
        errors.append("no mx lines")
    return policy, errors


def _mx_match(pattern: str, host: str) -> bool:
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and host.count(".") == pattern.count(".")
    return pattern == host


def tls_rpt(o: Observations) -> Check:
    """``_smtp._tls`` TXT: one ``v=TLSRPTv1`` record with a mailto: or https: rua (RFC 8460)."""
    values = o.values(f"_smtp._tls.{o.domain}", "TXT")
    records = [v for v in values if v.startswith("v=TLSRPTv1")]
    has_sts = any(v.startswith("v=STSv1") for v in o.values(f"_mta-sts.{o.domain}", "TXT"))
    if not records:
        return Check(
            id="tls-rpt",
            title="TLS-RPT",
            status="warn" if has_sts else "info",
            value=None,
            detail="No TLS reporting record.",
            recommendation="Publish _smtp._tls TXT 'v=TLSRPTv1; rua=mailto:...' to hear about TLS failures."
            if has_sts
            else None,
        )
    rua = dmarc_tags(records[0]).get("rua", "")
    if len(values) > 1 or not re.match(r"^(mailto:|https:)", rua):
        return Check(
            id="tls-rpt",
            title="TLS-RPT",
            status="fail",
            value=values,
            detail="The TLS-RPT record must be single with a mailto: or https: rua.",
            recommendation="Keep one 'v=TLSRPTv1; rua=mailto:...' record at _smtp._tls.",
        )
    return Check(
        id="tls-rpt",
        title="TLS-RPT",
        status="pass",
        value=records[0],
        detail=f"TLS reports go to {rua}.",
    )


def bimi(o: Observations) -> Check:
    """``default._bimi`` TXT with an https logo; DMARC must enforce for it to show."""
    records = [v for v in o.values(f"default._bimi.{o.domain}", "TXT") if v.startswith("v=BIMI1")]
    if not records:
        return Check(
            id="bimi",
            title="BIMI",
            status="info",
            value=None,
            detail="No BIMI record (optional: a brand logo in mail clients).",
        )
    tags = dmarc_tags(records[0])
    logo = tags.get("l", "")
    enforced = any(
        dmarc_tags(r).get("p", "").lower() in ("quarantine", "reject") for r in dmarc_record(o)
    )
    value = {"record": records[0], "logo": logo or None, "authority": tags.get("a") or None}
    if logo and not logo.startswith("https://"):
        return Check(
            id="bimi",
            title="BIMI",
            status="fail",
            value=value,
            detail="The BIMI logo must be an https:// SVG URL.",
            recommendation="Serve the SVG Tiny PS logo over HTTPS.",
        )
    if not enforced:
        return Check(
            id="bimi",
            title="BIMI",
            status="warn",
            value=value,
            detail="BIMI needs DMARC at quarantine or reject to be shown.",
            recommendation="Enforce DMARC (p=quarantine or p=reject).",
        )
    return Check(
        id="bimi",
        title="BIMI",
        status="pass",
        value=value,
        detail="BIMI record with an https logo and enforced DMARC.",
    )
