"""WHOIS answer text -> facts, for the formats registries actually use.

Understood layouts (see ``tests/data/domain/whois/``):

- ``Key: value`` lines: ICANN gTLD registries and registrars (thick and thin),
  DENIC (.de), registro.br, AFNIC (.fr, RIPE-style blocks joined by handles);
- Nominet (.uk) sections: a ``Key:`` line whose values follow on indented lines;
- JPRS (.jp): ``a. [Domain Name]   EXAMPLE.JP`` bracketed keys.

Keys are matched case-insensitively against alias tables; the first value wins,
except lists (status, name servers), which collect every value. Values that say
the data is withheld ("REDACTED FOR PRIVACY", "Data Protected", ...) are not
reported as values: the field is listed in ``redacted`` instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from toolrun.tools.domain.dates import to_iso

NOT_FOUND = (
    "no match",
    "not found",
    "no entries found",
    "no data found",
    "invalid query",
    "domain name not known",
    "no object found",
    "available for re-registration",
    "object does not exist",
    "domain you requested is not known",
    "status: free",
    "status: available",
    "no matching record",
    "is available for registration",
    "this domain name has not been registered",
)
RATE_LIMITED = (
    "limit exceeded",
    "rate limit",
    "access is too fast",
    "connection limit exceeded",
    "number of allowed queries exceeded",
    "requests of this client are not permitted",
    "too many connection attempts",
    "too many requests",
    "query rate",
    "was **denied**",
    "closing connections because of timeout",
    "try again later",
    "quota exceeded",
)
_REDACTED = (
    "redacted",
    "data protected",
    "not disclosed",
    "withheld",
    "gdpr",
    "privacy",
    "select request email form",
    "statutory masking",
    "non-public data",
    "hidden upon user request",
    "contact the registrar",
    "please query the rdds service",
)

ALIASES: dict[str, tuple[str, ...]] = {
    "domain": ("domain name", "domain", "domainname", "domain_name"),
    "created": (
        "creation date",
        "created",
        "created on",
        "created date",
        "registered on",
        "registered date",
        "registered",
        "registration date",
        "registration time",
        "domain registration date",
        "domain create date",
        "record created",
    ),
    "updated": (
        "updated date",
        "last updated",
        "last update",
        "last updated on",
        "last-update",
        "last modified",
        "last-modified",
        "changed",
        "modified",
        "updated",
    ),
    "expires": (
        "registry expiry date",
        "registrar registration expiration date",
        "registrar registration expiry date",
        "registry expiration date",
        "expiry date",
        "expiration date",
        "expires on",
        "expires",
        "expire date",
        "expiration time",
        "paid-till",
        "renewal date",
        "valid until",
    ),
    "registrar": ("registrar", "sponsoring registrar", "registrar name", "registrar organization"),
    "registrar_iana_id": ("registrar iana id", "sponsoring registrar iana id"),
    "registrar_url": ("registrar url", "referral url"),
    "whois_server": ("registrar whois server", "whois server"),
    "status": ("domain status", "status", "eppstatus", "registration status", "state"),
    "nameservers": ("name server", "name servers", "nameserver", "nameservers", "nserver"),
    "dnssec": ("dnssec", "dnssec status"),
    "dnskey": ("dnskey", "dsrecord", "ds record", "ds-rdata", "signing key"),
    "registrant_org": (
        "registrant organization",
        "registrant organisation",
        "registrant",
        "owner",
        "org",
        "organization",
    ),
    "registrant_country": ("registrant country", "registrant country code", "country"),
    "abuse_email": ("registrar abuse contact email", "abuse contact email", "abuse email"),
    "abuse_phone": ("registrar abuse contact phone", "abuse contact phone", "abuse phone"),
    "holder_handle": ("holder-c", "owner-c", "registrant-c"),
}
_FIELD_OF = {alias: name for name, aliases in ALIASES.items() for alias in aliases}
_LIST_FIELDS = frozenset({"status", "nameservers"})
_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 /_.()'-]{0,60}?)\s*:(?:\s+(.*?)|\s*)$")
_JP_LINE = re.compile(r"^\s*(?:[a-z]\.\s*)?(\[[^\]]+\])\s*(.*?)\s*$")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


@dataclass
class WhoisFacts:
    """What one or more WHOIS answers say about a domain."""

    domain: str | None = None
    registrar: str | None = None
    registrar_iana_id: str | None = None
    registrar_url: str | None = None
    whois_server: str | None = None
    created: str | None = None
    updated: str | None = None
    expires: str | None = None
    status: list[str] = field(default_factory=list)
    nameservers: list[str] = field(default_factory=list)
    dnssec: str | None = None
    registrant_org: str | None = None
    registrant_country: str | None = None
    abuse_email: str | None = None
    abuse_phone: str | None = None
    redacted: list[str] = field(default_factory=list)

    def merge(self, other: WhoisFacts) -> None:
        """Fill the fields this one lacks from ``other`` (lists: when empty)."""
        for name in self.__dataclass_fields__:
            mine, theirs = getattr(self, name), getattr(other, name)
            if name == "redacted":
                self.redacted += [f for f in theirs if f not in self.redacted]
            elif not mine and theirs:
                setattr(self, name, list(theirs) if isinstance(theirs, list) else theirs)


def is_not_found(text: str) -> bool:
    """The answer says the name is not registered."""
    head = text.lower()[:4000]
    return any(marker in head for marker in NOT_FOUND)


def is_rate_limited(text: str) -> bool:
    """The answer is a refusal for asking too often (and carries no record)."""
    lowered = text.lower()
    if re.search(r"^\s*domain name\s*:", lowered, re.M):
        return False  # a full record that merely mentions the rate-limit policy
    return any(marker in lowered[:4000] for marker in RATE_LIMITED)


def _is_redacted(value: str) -> bool:
    lowered = value.lower()
    return any(marker in lowered for marker in _REDACTED)


def key_values(text: str) -> list[tuple[str, str]]:
    """``(lower-case key, value)`` pairs in order, sections and bracketed keys unfolded."""
    pairs: list[tuple[str, str]] = []
    section: str | None = None
    section_indent = 0
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith(("%", "#", ">>>", "NOTICE", "TERMS")):
            section = None
            continue
        indent = len(line) - len(line.lstrip())
        if section is not None and indent > section_indent:
            inner = _LINE.match(line)
            if inner and inner[2] and not inner[1].lower().startswith("http"):
                pairs.append((inner[1].lower(), inner[2].strip()))
            else:
                pairs.append((section, line.strip()))
            continue
        section = None
        jp = _JP_LINE.match(line)
        if jp:
            pairs.append((jp[1].lower(), jp[2]))
            continue
        match = _LINE.match(line)
        if not match:
            continue
        key, value = match[1].lower().strip(), (match[2] or "").strip()
        if value:
            pairs.append((key, value))
        else:
            section, section_indent = key, indent
    return pairs


def _blocks(text: str) -> list[list[tuple[str, str]]]:
    """RIPE-style blocks (separated by blank lines), each as its key-value pairs."""
    return [key_values(chunk) for chunk in re.split(r"\n\s*\n", text) if chunk.strip()]


def _clean(name: str, value: str) -> str:
    value = value.strip()
    if name == "status":
        return value.split(" ", 1)[0] if "icann.org/epp" in value else value
    if name == "nameservers":
        return value.split()[0].rstrip(".").lower() if value.split() else value
    if name == "registrar":
        return re.sub(r"\s*\[Tag = [^\]]*\]$", "", value)
    if name == "registrant_country":
        return value.upper() if len(value) == 2 else value
    return value


def _dnssec(values: Iterable[str], has_key: bool) -> str | None:
    for value in values:
        lowered = value.lower()
        if "unsigned" in lowered or lowered in ("no", "inactive", "false", "none"):
            return "unsigned"
        if (
            "signed" in lowered
            or lowered in ("yes", "active", "true")
            or lowered.startswith("257 ")
        ):
            return "signed"
    return "signed" if has_key else None


def parse_whois(text: str) -> WhoisFacts:
    """The facts of one WHOIS answer."""
    facts = WhoisFacts()
    ranked: dict[str, list[tuple[int, str]]] = {}
    for key, value in key_values(text):
        alias = key.strip("[] ")
        name = _FIELD_OF.get(alias)
        if name is None or not value:
            continue
        ranked.setdefault(name, []).append((ALIASES[name].index(alias), value))
    # lists keep the text's order; single fields take their most specific alias first
    collected = {
        name: [v for _, v in (pairs if name in _LIST_FIELDS else sorted(pairs, key=lambda p: p[0]))]
        for name, pairs in ranked.items()
    }
    for name, values in collected.items():
        if name in ("dnssec", "dnskey", "holder_handle"):
            continue
        if name in _LIST_FIELDS:
            cleaned = [_clean(name, v) for v in values]
            setattr(facts, name, list(dict.fromkeys(v for v in cleaned if v)))
            continue
        value = values[0]
        if _is_redacted(value):
            facts.redacted.append(name)
            continue
        if name in ("created", "updated", "expires"):
            setattr(facts, name, to_iso(value))
        elif name == "abuse_email":
            found = _EMAIL.search(value)
            facts.abuse_email = found[0] if found else None
        else:
            setattr(facts, name, _clean(name, value))
    facts.dnssec = _dnssec(collected.get("dnssec", []), bool(collected.get("dnskey")))
    _jp_state(collected, facts)
    _ripe_holder(text, collected, facts)
    return facts


def _jp_state(collected: dict[str, list[str]], facts: WhoisFacts) -> None:
    """JPRS writes the paid-until date inside the state: ``Connected (2025/03/31)``."""
    for value in collected.get("status", []):
        match = re.search(r"\((\d{4}/\d{2}/\d{2})\)", value)
        if match and facts.expires is None:
            facts.expires = to_iso(match[1])
            facts.status = [re.sub(r"\s*\(.*\)$", "", s) for s in facts.status]


def _ripe_holder(text: str, collected: dict[str, list[str]], facts: WhoisFacts) -> None:
    """AFNIC and friends: the holder's name and country live in the block of its handle."""
    handles = collected.get("holder_handle")
    if not handles:
        return
    for block in _blocks(text):
        values = dict(reversed(block))
        if values.get("nic-hdl") != handles[0]:
            continue
        facts.registrant_org = None
        facts.registrant_country = None
        for key in ("contact", "org", "organisation", "organization", "name", "person"):
            if values.get(key) and not _is_redacted(values[key]):
                facts.registrant_org = values[key]
                break
        country = values.get("country")
        if country and not _is_redacted(country):
            facts.registrant_country = country.upper()
        return


def referral(text: str) -> str | None:
    """The next WHOIS server an answer points to (``refer:``, ``whois:``, registrar server)."""
    for key, value in key_values(text):
        if key in ("refer", "whois", "registrar whois server", "whois server"):
            host = _referral_host(value)
            if host:
                return host
    return None


def _referral_host(value: str) -> str | None:
    """A bare host name from a referral value; URLs and garbage give None."""
    value = value.strip().lower()
    if value.startswith("whois://"):
        value = value[len("whois://") :]
    if "://" in value or value.startswith("www."):
        return None
    value = value.rstrip("/").rstrip(".")
    host, _, port = value.partition(":")
    if port and not port.isdigit():
        return None
    if re.fullmatch(
        r"[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?)+", host
    ):
        return host
    return None
