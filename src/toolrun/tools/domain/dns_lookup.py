"""dns-lookup: the records of one domain for up to ten types, asked concurrently.

The result is SPEC's first DNS shape, ``records`` in the order of ``types``; a
type whose name is a CNAME lists the chain as the nameserver gave it. ``status``
is one word when every type got the same status ("NOERROR", "NXDOMAIN"), else
one entry per type in order: "A: NOERROR, MX: NODATA". DNS outcomes are results;
the job fails only when no type got any answer at all.

The v1 ``dns`` form (DESIGN §5) takes ``{domain, type}`` (``ALL``/``ANY`` = all
ten types): ``to_v1_payload`` turns it into this tool's input, ``to_v1_result``
turns this tool's result into SPEC's second shape.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    ValidationInfo,
    field_validator,
)

from toolrun.config import Settings
from toolrun.net.addresses import refusal_reason
from toolrun.net.dns import (
    NOERROR,
    RECORD_TYPES,
    InvalidName,
    format_nameserver,
    parse_nameserver,
    query,
    to_ascii,
)
from toolrun.tools.base import InputRejected, ToolContext, ToolDefinition, ToolFailure

RecordType = Literal["A", "AAAA", "CNAME", "MX", "TXT", "NS", "SOA", "SRV", "CAA", "PTR"]
V1Type = Literal["A", "AAAA", "CNAME", "MX", "TXT", "NS", "SOA", "SRV", "CAA", "PTR", "ALL", "ANY"]
assert get_args(RecordType) == RECORD_TYPES

QUERY_TIMEOUT_S = 5.0
MAX_NAMESERVERS = 4
_HOST_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")

_STATUS_MESSAGES = {
    "NODATA": "NODATA: no {type} records for {domain}",
    "NXDOMAIN": "NXDOMAIN: {domain} does not exist",
    "SERVFAIL": "SERVFAIL: the nameserver could not answer",
    "REFUSED": "REFUSED: the nameserver refused the query",
    "TIMEOUT": "TIMEOUT: no answer from the nameserver in time",
}


def _trim(value: Any) -> Any:
    if isinstance(value, str):
        value = value.strip()
        return value[:-1] if value.endswith(".") else value
    return value


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _check_domain(value: str) -> str:
    """A host name (IDN allowed; ``_`` labels for SRV, DMARC and the like) or an IP address."""
    if _is_ip(value):
        return value
    try:
        ascii_name = to_ascii(value)
    except InvalidName as exc:
        raise ValueError(f"not a valid domain name: {exc}") from None
    for label in ascii_name.split("."):
        if not set(label) <= _HOST_LABEL_CHARS or label.startswith("-") or label.endswith("-"):
            raise ValueError(f"not a valid domain name: label {label!r}")
    return value


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


def _check_nameserver(value: str) -> str:
    return format_nameserver(parse_nameserver(value))


Domain = Annotated[
    str,
    Field(min_length=1, max_length=253, examples=["example.com"]),
    BeforeValidator(_trim),
    AfterValidator(_check_domain),
]
"""A domain name or IDN (trailing dot and surrounding blanks dropped); an IP address for PTR."""

Nameserver = Annotated[str, AfterValidator(_check_nameserver)]


def _require_ptr_for_ip(types: Sequence[str], info: ValidationInfo) -> None:
    domain = info.data.get("domain")
    if isinstance(domain, str) and _is_ip(domain) and set(types) != {"PTR"}:
        raise ValueError("an IP address can only be looked up with type PTR")


class DnsLookupInput(BaseModel):
    """Body of dns-lookup."""

    domain: Domain
    types: Annotated[
        list[Annotated[RecordType, BeforeValidator(_upper)]],
        Field(min_length=1, max_length=10, examples=[["A", "MX"]]),
    ]
    nameservers: Annotated[
        list[Nameserver] | None,
        Field(
            max_length=MAX_NAMESERVERS,
            description='IP addresses, "ip:port" or "[ipv6]:port"; default: the service\'s resolver',
        ),
    ] = None

    @field_validator("types")
    @classmethod
    def _dedupe_types(cls, types: list[RecordType], info: ValidationInfo) -> list[RecordType]:
        _require_ptr_for_ip(types, info)
        return list(dict.fromkeys(types))

    @field_validator("nameservers")
    @classmethod
    def _dedupe_nameservers(cls, nameservers: list[str] | None) -> list[str] | None:
        return list(dict.fromkeys(nameservers)) if nameservers else None


class DnsRecordItem(BaseModel):
    """One record: ``name`` is the owner name, ``value`` its presentation text (TXT joined)."""

    type: str
    name: str
    ttl: int | None
    value: str


class DnsLookupResult(BaseModel):
    """SPEC's first DNS result shape."""

    domain: str
    status: str
    resolver: str
    records: list[DnsRecordItem]


class DnsV1Input(BaseModel):
    """Body of the v1 ``dns`` form: one type, or ``ALL``/``ANY`` for all ten."""

    domain: Domain
    type: Annotated[V1Type, BeforeValidator(_upper)]

    @field_validator("type")
    @classmethod
    def _ptr_for_ip(cls, value: str, info: ValidationInfo) -> str:
        _require_ptr_for_ip([value], info)
        return value


class DnsV1Record(BaseModel):
    type: str
    values: list[str]


class DnsV1Error(BaseModel):
    type: str
    message: str


class DnsV1Result(BaseModel):
    """SPEC's second DNS result shape."""

    domain: str
    nameservers: list[str]
    records: list[DnsV1Record]
    errors: list[DnsV1Error]


async def prepare(payload: DnsLookupInput, settings: Settings) -> DnsLookupInput:
    """Refuse nameservers on private, loopback or otherwise reserved addresses."""
    if settings.allow_private_networks:
        return payload
    for nameserver in payload.nameservers or []:
        host, _ = parse_nameserver(nameserver)
        reason = refusal_reason(ipaddress.ip_address(host))
        if reason is not None:
            raise InputRejected(
                "nameservers", f"nameserver {nameserver} is {reason} and not allowed"
            )
    return payload


async def run(payload: DnsLookupInput, ctx: ToolContext) -> DnsLookupResult:
    nameservers = [parse_nameserver(text) for text in payload.nameservers or []] or None
    timeout = _query_timeout(ctx.deadline_at)
    answers = await asyncio.gather(
        *(
            query(payload.domain, rtype, ctx.settings, nameservers=nameservers, timeout=timeout)
            for rtype in payload.types
        )
    )
    resolver = ", ".join(dict.fromkeys(answer.resolver for answer in answers))
    if all(answer.status == "TIMEOUT" for answer in answers):
        raise ToolFailure(400, f"no answer from {resolver} within {timeout:g} s")
    statuses = [(answer.rtype, answer.status) for answer in answers]
    return DnsLookupResult(
        domain=payload.domain,
        status=summarize(statuses),
        resolver=resolver,
        records=[
            DnsRecordItem(type=record.type, name=record.name, ttl=record.ttl, value=record.value)
            for answer in answers
            for record in answer.records
        ],
    )


def _query_timeout(deadline_at: datetime) -> float:
    """5 s per query, less when the job's deadline is nearer (the types run side by side)."""
    now = datetime.now(UTC)
    if deadline_at.tzinfo is None:
        now = now.replace(tzinfo=None)
    remaining = (deadline_at - now).total_seconds()
    return max(min(QUERY_TIMEOUT_S, remaining * 0.8), 0.1)


def summarize(statuses: list[tuple[str, str]]) -> str:
    """One status when all agree, else "A: NOERROR, MX: NXDOMAIN" in the order asked."""
    distinct = {status for _, status in statuses}
    if len(distinct) == 1:
        return distinct.pop()
    return ", ".join(f"{rtype}: {status}" for rtype, status in statuses)


def statuses_of(result: DnsLookupResult, types: list[str]) -> dict[str, str]:
    """Per-type statuses back from a result's ``status`` text (see ``summarize``)."""
    if ": " not in result.status:
        return dict.fromkeys(types, result.status)
    pairs = (item.split(": ", 1) for item in result.status.split(", "))
    return {rtype: status for rtype, status in pairs}


def to_v1_payload(v1_input: DnsV1Input) -> DnsLookupInput:
    """The dns-lookup input a v1 ``dns`` body stands for."""
    types = list(RECORD_TYPES) if v1_input.type in ("ALL", "ANY") else [v1_input.type]
    return DnsLookupInput.model_validate({"domain": v1_input.domain, "types": types})


def to_v1_result(result: DnsLookupResult, payload: DnsLookupInput) -> DnsV1Result:
    """SPEC's second shape of a dns-lookup result, for a job created through the v1 form.

    ``records`` has one item per type with data (values of that type only, without
    CNAME steps); ``errors`` one per type whose status is not NOERROR (NODATA too);
    ``nameservers`` are the ones the payload named, else the resolvers that answered.
    """
    statuses = statuses_of(result, list(payload.types))
    records: list[DnsV1Record] = []
    errors: list[DnsV1Error] = []
    owner = "" if _is_ip(payload.domain) else to_ascii(payload.domain) + "."
    for rtype in payload.types:
        values = list(
            dict.fromkeys(
                r.value
                for r in result.records
                if r.type == rtype and (rtype != "CNAME" or r.name == owner)
            )
        )
        status = statuses.get(rtype, NOERROR)
        if values:
            records.append(DnsV1Record(type=rtype, values=values))
        if status != NOERROR:
            template = _STATUS_MESSAGES.get(status, status + ": lookup failed")
            message = template.format(type=rtype, domain=result.domain)
            errors.append(DnsV1Error(type=rtype, message=message))
    nameservers = list(payload.nameservers or result.resolver.split(", "))
    return DnsV1Result(
        domain=result.domain, nameservers=nameservers, records=records, errors=errors
    )


DEFINITION = ToolDefinition(
    slug="dns-lookup",
    kind="tool",
    action="dns-lookup",
    category="domain",
    name="DNS lookup",
    description=(
        "Look up A, AAAA, CNAME, MX, TXT, NS, SOA, SRV, CAA and PTR records of a domain, "
        "from the service's resolver or up to four nameservers you name. Results can "
        "differ briefly because of caching and propagation."
    ),
    input_model=DnsLookupInput,
    output_model=DnsLookupResult,
    run=run,
    prepare=prepare,
    example={"domain": "example.com", "types": ["A", "MX", "TXT"]},
    aliases=("dns",),
    v1_input_model=DnsV1Input,
    v1_to_input=to_v1_payload,
    v1_result=to_v1_result,
)
