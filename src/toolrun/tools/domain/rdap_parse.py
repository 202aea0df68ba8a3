"""RFC 9083 domain objects -> facts (jCard contacts, events, redactions, related links)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from toolrun.tools.domain.dates import to_iso

_REDACTED_WORDS = ("redacted", "data protected", "withheld", "privacy")
EVENT_FIELDS = {
    "registration": "created",
    "expiration": "expires",
    "last changed": "updated",
    "last update": "updated",
    "registrar expiration": "registrar_expires",
    "last update of rdap database": "database_updated",
}


@dataclass
class Contact:
    """What a jCard tells: name, organisation, country, email, phone, url."""

    name: str | None = None
    organization: str | None = None
    country: str | None = None
    email: str | None = None
    phone: str | None = None
    url: str | None = None


@dataclass
class RdapFacts:
    """The facts of one RDAP domain answer."""

    ldh_name: str | None = None
    unicode_name: str | None = None
    handle: str | None = None
    status: list[str] = field(default_factory=list)
    events: dict[str, str] = field(default_factory=dict)  # our field name -> ISO date
    event_list: list[dict[str, str | None]] = field(default_factory=list)
    registrar: str | None = None
    registrar_iana_id: str | None = None
    registrar_url: str | None = None
    abuse_email: str | None = None
    abuse_phone: str | None = None
    registrant_org: str | None = None
    registrant_country: str | None = None
    nameservers: list[str] = field(default_factory=list)
    delegation_signed: bool | None = None
    ds_records: int = 0
    notices: list[str] = field(default_factory=list)
    redactions: list[str] = field(default_factory=list)
    port43: str | None = None
    related: list[str] = field(default_factory=list)
    self_link: str | None = None


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def parse_jcard(vcard_array: Any) -> Contact:
    """A jCard (RFC 7095) ``["vcard", [[name, params, type, value], ...]]`` as a Contact."""
    contact = Contact()
    if not (
        isinstance(vcard_array, list) and len(vcard_array) == 2 and isinstance(vcard_array[1], list)
    ):
        return contact
    for prop in vcard_array[1]:
        if not (isinstance(prop, list) and len(prop) >= 4 and isinstance(prop[0], str)):
            continue
        name, params, value = prop[0].lower(), prop[1] if isinstance(prop[1], dict) else {}, prop[3]
        if name == "fn" and contact.name is None:
            contact.name = _text(value)
        elif name == "org" and contact.organization is None:
            contact.organization = _text(value[0] if isinstance(value, list) and value else value)
        elif name == "adr" and contact.country is None:
            contact.country = _country(params, value)
        elif name == "email" and contact.email is None:
            contact.email = _text(value)
        elif name == "tel" and contact.phone is None and "fax" not in str(params.get("type", "")):
            phone = _text(value)
            contact.phone = phone[4:] if phone and phone.startswith("tel:") else phone
        elif name == "url" and contact.url is None:
            contact.url = _text(value)
    return contact


def _country(params: dict[str, Any], value: Any) -> str | None:
    code = _text(params.get("cc"))
    if code:
        return code.upper()
    if isinstance(value, list) and len(value) >= 7:
        country = _text(value[6])
        return country.upper() if country and len(country) == 2 else country
    return None


def _entities(entities: Any) -> Iterator[dict[str, Any]]:
    """Every entity, nested ones included (the registrar's abuse contact is nested)."""
    if not isinstance(entities, list):
        return
    for entity in entities:
        if isinstance(entity, dict):
            yield entity
            yield from _entities(entity.get("entities"))


def _roles(entity: dict[str, Any]) -> list[str]:
    roles = entity.get("roles")
    return [r.lower() for r in roles if isinstance(r, str)] if isinstance(roles, list) else []


def _is_redacted(value: str | None) -> bool:
    return value is not None and any(w in value.lower() for w in _REDACTED_WORDS)


def parse_domain(data: dict[str, Any]) -> RdapFacts:
    """The facts of an RDAP domain object."""
    facts = RdapFacts(
        ldh_name=_text(data.get("ldhName")),
        unicode_name=_text(data.get("unicodeName")),
        handle=_text(data.get("handle")),
        port43=_text(data.get("port43")),
    )
    facts.status = [s for s in data.get("status") or [] if isinstance(s, str)]
    _events(data.get("events"), facts)
    for entity in _entities(data.get("entities")):
        _entity(entity, facts)
    for server in data.get("nameservers") or []:
        if isinstance(server, dict) and _text(server.get("ldhName")):
            facts.nameservers.append(str(server["ldhName"]).lower().rstrip("."))
    secure = data.get("secureDNS")
    if isinstance(secure, dict):
        signed = secure.get("delegationSigned")
        facts.delegation_signed = signed if isinstance(signed, bool) else None
        facts.ds_records = len(secure.get("dsData") or [])
    for notice in data.get("notices") or []:
        if isinstance(notice, dict) and _text(notice.get("title")):
            facts.notices.append(str(notice["title"]).strip())
    _redactions(data, facts)
    _links(data.get("links"), facts)
    return facts


def _events(events: Any, facts: RdapFacts) -> None:
    for event in events or []:
        if not isinstance(event, dict):
            continue
        action = _text(event.get("eventAction"))
        date = to_iso(_text(event.get("eventDate")))
        if action is None:
            continue
        facts.event_list.append(
            {"action": action, "date": date, "actor": _text(event.get("eventActor"))}
        )
        key = EVENT_FIELDS.get(action.lower())
        if key and date and key not in facts.events:
            facts.events[key] = date


def _entity(entity: dict[str, Any], facts: RdapFacts) -> None:
    roles = _roles(entity)
    contact = parse_jcard(entity.get("vcardArray"))
    if "registrar" in roles and facts.registrar is None:
        facts.registrar = contact.name or contact.organization or _text(entity.get("handle"))
        for public_id in entity.get("publicIds") or []:
            if isinstance(public_id, dict) and "iana" in str(public_id.get("type", "")).lower():
                facts.registrar_iana_id = _text(public_id.get("identifier"))
        facts.registrar_url = contact.url or _link_of(entity, "about")
    if "abuse" in roles:
        facts.abuse_email = facts.abuse_email or contact.email
        facts.abuse_phone = facts.abuse_phone or contact.phone
    if "registrant" in roles:
        organization = contact.organization or None
        if _is_redacted(organization):
            facts.redactions.append("registrant organization")
        elif organization and facts.registrant_org is None:
            facts.registrant_org = organization
        if _is_redacted(contact.country):
            facts.redactions.append("registrant country")
        elif contact.country and facts.registrant_country is None:
            facts.registrant_country = contact.country
        for remark in entity.get("remarks") or []:
            if isinstance(remark, dict) and _is_redacted(_text(remark.get("title"))):
                facts.redactions.append("registrant contact")


def _link_of(entity: dict[str, Any], rel: str) -> str | None:
    for link in entity.get("links") or []:
        if isinstance(link, dict) and link.get("rel") == rel:
            return _text(link.get("href"))
    return None


def _redactions(data: dict[str, Any], facts: RdapFacts) -> None:
    """RFC 9537 ``redacted`` members, and "REDACTED FOR PRIVACY" remarks."""
    for item in data.get("redacted") or []:
        if not isinstance(item, dict):
            continue
        name = item.get("name")
        label = (
            _text(name.get("description") or name.get("type")) if isinstance(name, dict) else None
        )
        if label:
            facts.redactions.append(label)
    for remark in data.get("remarks") or []:
        if isinstance(remark, dict) and _is_redacted(_text(remark.get("title"))):
            facts.redactions.append(str(remark["title"]).strip())
    facts.redactions = list(dict.fromkeys(facts.redactions))


def _links(links: Any, facts: RdapFacts) -> None:
    for link in links or []:
        if not isinstance(link, dict):
            continue
        href, rel = _text(link.get("href")), link.get("rel")
        kind = link.get("type")
        if href is None:
            continue
        if rel == "self":
            facts.self_link = href
        elif (
            rel == "related"
            and kind in (None, "application/rdap+json")
            and href.startswith(("https://", "http://"))
        ):
            facts.related.append(href)
