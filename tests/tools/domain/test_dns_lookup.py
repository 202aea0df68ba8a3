"""dns-lookup (and its v1 ``dns`` form) against the loopback authoritative DNS server."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from tests.servers.dns import EXAMPLE_ZONE, DnsServer, Fault
from toolrun.config import Settings
from toolrun.net.dns import RECORD_TYPES
from toolrun.tools.base import InputRejected, ToolContext, ToolFailure
from toolrun.tools.domain.dns_lookup import (
    DEFINITION,
    DnsLookupInput,
    DnsLookupResult,
    DnsRecordItem,
    DnsV1Input,
    DnsV1Result,
    prepare,
    run,
    summarize,
    to_v1_payload,
    to_v1_result,
)
from toolrun.tools.registry import Registry


@pytest.fixture
def server() -> Iterator[DnsServer]:
    with DnsServer(EXAMPLE_ZONE) as dns_server:
        yield dns_server


def make_ctx(server: DnsServer, *, seconds: float = 30) -> ToolContext:
    settings = Settings(dns_nameservers=[server.nameserver], allow_private_networks=True)
    deadline = datetime.now(UTC) + timedelta(seconds=seconds)
    return ToolContext(settings=settings, job_id="job-1", account_id="acct-1", deadline_at=deadline)


async def lookup(server: DnsServer, seconds: float = 30, **body: Any) -> DnsLookupResult:
    return await run(DnsLookupInput.model_validate(body), make_ctx(server, seconds=seconds))


# -- running -----------------------------------------------------------------------------


async def test_all_ten_types_answer_in_the_order_asked(server: DnsServer) -> None:
    types = ["TXT", "A", "CAA", "MX", "SOA", "AAAA", "NS", "CNAME", "SRV", "PTR"]

    result = await lookup(server, domain="example.test", types=types)

    expected = ["TXT", "A", "CAA", "MX", "MX", "SOA", "AAAA", "NS", "NS"]
    assert [r.type for r in result.records] == expected
    assert result.domain == "example.test"
    assert result.resolver == server.address
    assert result.status == (
        "TXT: NOERROR, A: NOERROR, CAA: NOERROR, MX: NOERROR, SOA: NOERROR, AAAA: NOERROR, "
        "NS: NOERROR, CNAME: NODATA, SRV: NODATA, PTR: NODATA"
    )
    assert result.records[2] == DnsRecordItem(
        type="CAA", name="example.test.", ttl=300, value='0 issue "letsencrypt.org"'
    )


async def test_result_matches_the_first_spec_shape(server: DnsServer) -> None:
    result = await lookup(server, domain="example.test.", types=["MX"])

    assert result.model_dump() == {
        "domain": "example.test",
        "status": "NOERROR",
        "resolver": server.address,
        "records": [
            {"type": "MX", "name": "example.test.", "ttl": 300, "value": "10 mail.example.test."},
            {"type": "MX", "name": "example.test.", "ttl": 300, "value": "20 backup.example.test."},
        ],
    }


@pytest.mark.parametrize(
    ("domain", "types", "status"),
    [
        ("example.test", ["A", "AAAA"], "NOERROR"),
        ("nope.example.test", ["A", "MX"], "NXDOMAIN"),
        ("example.test", ["SRV"], "NODATA"),
        ("example.test", ["A", "SRV"], "A: NOERROR, SRV: NODATA"),
    ],
)
async def test_status_is_one_word_when_all_types_agree(
    server: DnsServer, domain: str, types: list[str], status: str
) -> None:
    result = await lookup(server, domain=domain, types=types)

    assert result.status == status


@pytest.mark.parametrize(
    ("fault", "status"), [(Fault.SERVFAIL, "SERVFAIL"), (Fault.REFUSED, "REFUSED")]
)
async def test_server_failures_are_results(server: DnsServer, fault: Fault, status: str) -> None:
    server.set_fault("example.test", fault, rtype="MX")

    result = await lookup(server, domain="example.test", types=["A", "MX"])

    assert result.status == f"A: NOERROR, MX: {status}"
    assert [r.type for r in result.records] == ["A"]


async def test_malformed_answers_are_reported_per_type(server: DnsServer) -> None:
    server.set_fault("example.test", Fault.GARBAGE, rtype="MX")
    server.set_fault("example.test", Fault.FORMERR, rtype="TXT")
    server.set_fault("example.test", Fault.MISMATCHED_ID, rtype="CAA")
    server.set_fault("example.test", Fault.BAD_RDATA, rtype="NS")
    payload = DnsLookupInput(domain="example.test", types=["A", "MX", "TXT", "CAA", "NS", "SOA"])

    result = await run(payload, make_ctx(server, seconds=1))
    v1 = to_v1_result(result, payload)

    assert result.status == (
        "A: NOERROR, MX: SERVFAIL, TXT: SERVFAIL, CAA: SERVFAIL, NS: SERVFAIL, SOA: NOERROR"
    )
    assert [r.type for r in result.records] == ["A", "SOA"]
    assert [(e.type, e.message) for e in v1.errors] == [
        (rtype, "SERVFAIL: the nameserver could not answer") for rtype in ("MX", "TXT", "CAA", "NS")
    ]


async def test_only_malformed_answers_still_succeed_with_statuses(server: DnsServer) -> None:
    server.set_fault("example.test", Fault.BAD_RDATA)

    result = await lookup(server, domain="example.test", types=["A", "MX"])

    assert (result.status, result.records) == ("SERVFAIL", [])


async def test_partial_timeout_is_a_result(server: DnsServer) -> None:
    server.set_fault("example.test", Fault.TIMEOUT, rtype="TXT")

    result = await lookup(server, seconds=1, domain="example.test", types=["A", "TXT"])

    assert result.status == "A: NOERROR, TXT: TIMEOUT"


async def test_no_answer_for_any_type_fails_the_job(server: DnsServer) -> None:
    server.set_fault("example.test", Fault.TIMEOUT)

    with pytest.raises(ToolFailure) as failure:
        await lookup(server, seconds=1, domain="example.test", types=["A", "MX"])

    assert failure.value.code == 400
    assert failure.value.message.startswith(f"no answer from {server.address}")


async def test_idn_domain_is_looked_up_in_a_labels(server: DnsServer) -> None:
    result = await lookup(server, domain="bücher.example.test", types=["A"])

    assert result.domain == "bücher.example.test"
    assert result.records == [
        DnsRecordItem(type="A", name="xn--bcher-kva.example.test.", ttl=60, value="192.0.2.20")
    ]


async def test_ptr_by_ip_address(server: DnsServer) -> None:
    result = await lookup(server, domain="192.0.2.10", types=["PTR"])

    assert [(r.name, r.value) for r in result.records] == [
        ("10.2.0.192.in-addr.arpa.", "example.test.")
    ]


async def test_truncated_answers_come_over_tcp(server: DnsServer) -> None:
    long_text = "v=DKIM1; p=" + "A" * 1500
    server.add_txt("big.example.test", long_text)

    result = await lookup(server, domain="big.example.test", types=["TXT"])

    assert [r.value for r in result.records] == [long_text]
    assert [q.transport for q in server.queries] == ["udp", "tcp"]


async def test_types_run_concurrently(server: DnsServer) -> None:
    for rtype in ("A", "MX", "TXT"):
        server.set_fault("example.test", Fault.TIMEOUT, rtype=rtype)
    started = datetime.now(UTC)

    result = await lookup(server, seconds=1, domain="example.test", types=["A", "MX", "TXT", "NS"])

    # each silent type waits 0.8 s: one after the other they would take 2.4 s
    assert datetime.now(UTC) - started < timedelta(seconds=1.6)
    assert result.status == "A: TIMEOUT, MX: TIMEOUT, TXT: TIMEOUT, NS: NOERROR"


async def test_payload_nameservers_replace_the_configured_ones(server: DnsServer) -> None:
    with DnsServer("other.test. 30 IN A 192.0.2.99") as other:
        result = await lookup(server, domain="other.test", types=["A"], nameservers=[other.address])

    assert result.resolver == other.address
    assert [r.value for r in result.records] == ["192.0.2.99"]


# -- input -------------------------------------------------------------------------------


def test_input_is_normalized() -> None:
    payload = DnsLookupInput.model_validate(
        {
            "domain": "  Example.test.  ",
            "types": ["mx", "A", "MX", "a"],
            "nameservers": ["127.0.0.1", "[::1]:5353", "127.0.0.1:53"],
        }
    )

    assert payload.domain == "Example.test"
    assert payload.types == ["MX", "A"]  # duplicates dropped, first order kept
    assert payload.nameservers == ["127.0.0.1:53", "[::1]:5353"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"domain": "", "types": ["A"]}, "domain"),
        ({"domain": "   ", "types": ["A"]}, "domain"),
        ({"domain": "exa mple.com", "types": ["A"]}, "domain"),
        ({"domain": "-bad.example.com", "types": ["A"]}, "domain"),
        ({"domain": "bad-.example.com", "types": ["A"]}, "domain"),
        ({"domain": "a..example.com", "types": ["A"]}, "domain"),
        ({"domain": "http://example.com", "types": ["A"]}, "domain"),
        ({"domain": "example.com/path", "types": ["A"]}, "domain"),
        ({"domain": "xn--zz.example", "types": ["A"]}, "domain"),
        ({"domain": "a" * 64 + ".com", "types": ["A"]}, "domain"),
        ({"domain": ("a" * 60 + ".") * 5 + "com", "types": ["A"]}, "domain"),
        ({"domain": 42, "types": ["A"]}, "domain"),
        ({"types": ["A"]}, "domain"),
        ({"domain": "example.com", "types": []}, "types"),
        ({"domain": "example.com"}, "types"),
        ({"domain": "example.com", "types": ["A", "SPF"]}, "types"),
        ({"domain": "example.com", "types": ["ANY"]}, "types"),
        ({"domain": "example.com", "types": [*RECORD_TYPES, "A"]}, "types"),
        ({"domain": "example.com", "types": "A"}, "types"),
        ({"domain": "192.0.2.1", "types": ["A", "PTR"]}, "types"),
        ({"domain": "example.com", "types": ["A"], "nameservers": ["dns.google"]}, "nameservers"),
        ({"domain": "example.com", "types": ["A"], "nameservers": ["1.1.1.1:0"]}, "nameservers"),
        ({"domain": "example.com", "types": ["A"], "nameservers": ["1.1.1.1:x"]}, "nameservers"),
        ({"domain": "example.com", "types": ["A"], "nameservers": ["[::1"]}, "nameservers"),
        ({"domain": "example.com", "types": ["A"], "nameservers": [""]}, "nameservers"),
        (
            {
                "domain": "example.com",
                "types": ["A"],
                "nameservers": [f"1.1.1.{i}" for i in range(5)],
            },
            "nameservers",
        ),
    ],
)
def test_invalid_input_names_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as error:
        DnsLookupInput.model_validate(body)

    assert {str(e["loc"][0]) for e in error.value.errors()} == {field}


@pytest.mark.parametrize(
    "domain",
    ["example.com", "_dmarc.example.com", "_sip._tcp.example.com", "com", "bücher.de", "192.0.2.1"],
)
def test_valid_domains_are_accepted(domain: str) -> None:
    types = ["PTR"] if domain[0].isdigit() else ["A"]

    assert DnsLookupInput.model_validate({"domain": domain, "types": types}).domain == domain


async def test_prepare_refuses_a_private_nameserver() -> None:
    payload = DnsLookupInput.model_validate(
        {"domain": "example.com", "types": ["A"], "nameservers": ["9.9.9.9", "127.0.0.1:5353"]}
    )

    with pytest.raises(InputRejected) as rejected:
        await prepare(payload, Settings(allow_private_networks=False))

    assert rejected.value.field == "nameservers"
    assert "127.0.0.1:5353" in rejected.value.message
    assert "loopback" in rejected.value.message


@pytest.mark.parametrize("nameserver", ["10.0.0.53", "[fe80::1]:53", "::ffff:192.168.1.1"])
async def test_prepare_refuses_other_reserved_nameservers(nameserver: str) -> None:
    payload = DnsLookupInput.model_validate(
        {"domain": "example.com", "types": ["A"], "nameservers": [nameserver]}
    )

    with pytest.raises(InputRejected):
        await prepare(payload, Settings(allow_private_networks=False))


@pytest.mark.parametrize(
    ("nameservers", "allow_private"),
    [(["127.0.0.1:5353"], True), (["9.9.9.9", "[2620:fe::fe]:53"], False), (None, False)],
)
async def test_prepare_keeps_allowed_payloads(
    nameservers: list[str] | None, allow_private: bool
) -> None:
    payload = DnsLookupInput.model_validate(
        {"domain": "example.com", "types": ["A"], "nameservers": nameservers}
    )

    kept = await prepare(payload, Settings(allow_private_networks=allow_private))

    assert kept == payload


# -- v1 form -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "types"),
    [
        ({"domain": "example.com", "type": "MX"}, ["MX"]),
        ({"domain": "example.com", "type": "txt"}, ["TXT"]),
        ({"domain": "example.com", "type": "ALL"}, list(RECORD_TYPES)),
        ({"domain": "example.com", "type": "any"}, list(RECORD_TYPES)),
        ({"domain": "192.0.2.1", "type": "PTR"}, ["PTR"]),
    ],
)
def test_v1_body_becomes_a_lookup_payload(body: dict[str, Any], types: list[str]) -> None:
    payload = to_v1_payload(DnsV1Input.model_validate(body))

    assert payload == DnsLookupInput(domain=body["domain"], types=types)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"domain": "example.com", "type": "SPF"}, "type"),
        ({"domain": "example.com"}, "type"),
        ({"domain": "not a domain", "type": "A"}, "domain"),
        ({"domain": "192.0.2.1", "type": "ALL"}, "type"),
    ],
)
def test_v1_body_is_validated(body: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as error:
        DnsV1Input.model_validate(body)

    assert {str(e["loc"][0]) for e in error.value.errors()} == {field}


async def test_v1_result_groups_values_by_type_and_lists_failures(server: DnsServer) -> None:
    server.set_fault("example.test", Fault.SERVFAIL, rtype="CAA")
    payload = to_v1_payload(DnsV1Input(domain="example.test", type="ALL"))
    result = await run(payload, make_ctx(server))

    v1 = to_v1_result(result, payload)

    assert v1.domain == "example.test"
    assert v1.nameservers == [server.address]
    assert [(r.type, r.values) for r in v1.records] == [
        ("A", ["192.0.2.10"]),
        ("AAAA", ["2001:db8::10"]),
        ("MX", ["10 mail.example.test.", "20 backup.example.test."]),
        ("TXT", ["v=spf1 ip4:192.0.2.0/24 -all"]),
        ("NS", ["ns1.example.test.", "ns2.example.test."]),
        ("SOA", ["ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 300"]),
    ]
    assert [(e.type, e.message.split(":")[0]) for e in v1.errors] == [
        ("CNAME", "NODATA"),
        ("SRV", "NODATA"),
        ("CAA", "SERVFAIL"),
        ("PTR", "NODATA"),
    ]


async def test_v1_result_for_a_missing_domain(server: DnsServer) -> None:
    payload = to_v1_payload(DnsV1Input(domain="nope.example.test", type="A"))
    result = await run(payload, make_ctx(server))

    v1 = to_v1_result(result, payload)

    assert v1.model_dump() == {
        "domain": "nope.example.test",
        "nameservers": [server.address],
        "records": [],
        "errors": [{"type": "A", "message": "NXDOMAIN: nope.example.test does not exist"}],
    }


async def test_v1_result_keeps_only_the_asked_types_values(server: DnsServer) -> None:
    payload = DnsLookupInput.model_validate(
        {"domain": "www.example.test", "types": ["A", "CNAME"], "nameservers": [server.address]}
    )
    result = await run(payload, make_ctx(server))

    v1 = to_v1_result(result, payload)

    assert [r.type for r in result.records] == ["CNAME", "A", "CNAME"]
    assert [(r.type, r.values) for r in v1.records] == [
        ("A", ["192.0.2.10"]),
        ("CNAME", ["example.test."]),
    ]
    assert v1.errors == []
    assert v1.nameservers == [server.address]


def test_v1_result_reads_a_stored_result() -> None:
    payload = DnsLookupInput(domain="example.com", types=["A", "MX"])
    stored = {
        "domain": "example.com",
        "status": "A: NOERROR, MX: TIMEOUT",
        "resolver": "system (10.0.0.2)",
        "records": [{"type": "A", "name": "example.com.", "ttl": 60, "value": "192.0.2.1"}],
    }

    v1 = to_v1_result(DnsLookupResult.model_validate(stored), payload)

    assert v1 == DnsV1Result.model_validate(
        {
            "domain": "example.com",
            "nameservers": ["system (10.0.0.2)"],
            "records": [{"type": "A", "values": ["192.0.2.1"]}],
            "errors": [{"type": "MX", "message": "TIMEOUT: no answer from the nameserver in time"}],
        }
    )


@pytest.mark.parametrize(
    ("statuses", "text"),
    [
        ([("A", "NOERROR")], "NOERROR"),
        ([("A", "NXDOMAIN"), ("MX", "NXDOMAIN")], "NXDOMAIN"),
        ([("A", "NOERROR"), ("MX", "SERVFAIL")], "A: NOERROR, MX: SERVFAIL"),
    ],
)
def test_summarize(statuses: list[tuple[str, str]], text: str) -> None:
    assert summarize(statuses) == text


# -- definition ----------------------------------------------------------------------------


def test_definition_registers_under_its_slug_and_v1_alias() -> None:
    registry = Registry([DEFINITION])

    assert registry.by_slug("dns-lookup") is DEFINITION
    assert registry.by_alias("dns") is DEFINITION
    assert registry.by_action("tool", "dns-lookup") is DEFINITION
    assert (DEFINITION.kind, DEFINITION.category) == ("tool", "domain")
    assert DEFINITION.path == "/openapi/tools/dns-lookup/execute"
    assert DEFINITION.input_model.model_validate(DEFINITION.example)
    assert DEFINITION.output_model is DnsLookupResult
