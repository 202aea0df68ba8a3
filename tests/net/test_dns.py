"""toolrun.net.dns against the loopback authoritative server of tests/servers/dns.py."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator

import pytest

import toolrun.net.dns
from tests.servers.dns import EXAMPLE_ZONE, GARBAGE, DnsServer, Fault
from toolrun.config import Settings
from toolrun.net.dns import (
    RECORD_TYPES,
    DnsRecord,
    InvalidName,
    format_nameserver,
    parse_nameserver,
    query,
    to_ascii,
)

SPF = "v=spf1 ip4:192.0.2.0/24 -all"


@pytest.fixture
def server() -> Iterator[DnsServer]:
    with DnsServer(EXAMPLE_ZONE) as dns_server:
        yield dns_server


@pytest.fixture
def settings(server: DnsServer) -> Settings:
    return Settings(dns_nameservers=[server.nameserver], allow_private_networks=True)


@pytest.mark.parametrize(
    ("name", "rtype", "values"),
    [
        ("example.test", "A", ["192.0.2.10"]),
        ("example.test", "AAAA", ["2001:db8::10"]),
        ("www.example.test", "CNAME", ["example.test."]),
        ("example.test", "MX", ["10 mail.example.test.", "20 backup.example.test."]),
        ("example.test", "TXT", [SPF]),
        ("example.test", "NS", ["ns1.example.test.", "ns2.example.test."]),
        (
            "example.test",
            "SOA",
            ["ns1.example.test. hostmaster.example.test. 2024010101 3600 600 604800 300"],
        ),
        ("_sip._tcp.example.test", "SRV", ["10 5 5060 sip.example.test."]),
        ("example.test", "CAA", ['0 issue "letsencrypt.org"']),
        ("10.2.0.192.in-addr.arpa", "PTR", ["example.test."]),
        ("example.test", "DS", ["12345 13 2 " + "0123456789abcdef" * 4]),
        ("_443._tcp.example.test", "TLSA", ["3 1 1 " + "0123456789abcdef" * 4]),
    ],
)
async def test_query_returns_presentation_values_for_each_type(
    server: DnsServer, settings: Settings, name: str, rtype: str, values: list[str]
) -> None:
    answer = await query(name, rtype, settings)

    assert answer.status == "NOERROR"
    assert answer.rtype == rtype
    assert answer.resolver == server.address
    assert [record.value for record in answer.records] == values
    assert {(record.type, record.name, record.ttl) for record in answer.records} == {
        (rtype, name + ".", 300)
    }


def test_record_types_are_the_ten_of_the_spec() -> None:
    assert RECORD_TYPES == ("A", "AAAA", "CNAME", "MX", "TXT", "NS", "SOA", "SRV", "CAA", "PTR")


async def test_query_accepts_lower_case_type(settings: Settings) -> None:
    answer = await query("example.test", "mx", settings)

    assert (answer.rtype, answer.status, len(answer.records)) == ("MX", "NOERROR", 2)


async def test_query_lists_the_cname_chain_before_the_records(settings: Settings) -> None:
    answer = await query("www.example.test", "A", settings)

    assert answer.records == [
        DnsRecord("CNAME", "www.example.test.", 300, "example.test."),
        DnsRecord("A", "example.test.", 300, "192.0.2.10"),
    ]


@pytest.mark.parametrize(
    ("name", "rtype", "status"),
    [
        ("nope.example.test", "A", "NXDOMAIN"),
        ("example.test", "SRV", "NODATA"),
        ("_tcp.example.test", "A", "NODATA"),  # an empty non-terminal exists
        ("example.test", "PTR", "NODATA"),
    ],
)
async def test_query_reports_negative_answers_as_statuses(
    settings: Settings, name: str, rtype: str, status: str
) -> None:
    answer = await query(name, rtype, settings)

    assert (answer.status, answer.records) == (status, [])


@pytest.mark.parametrize(
    ("fault", "status"),
    [(Fault.SERVFAIL, "SERVFAIL"), (Fault.REFUSED, "REFUSED"), (Fault.TIMEOUT, "TIMEOUT")],
)
async def test_query_reports_server_faults_as_statuses(
    server: DnsServer, settings: Settings, fault: Fault, status: str
) -> None:
    server.set_fault("example.test", fault)

    answer = await query("example.test", "A", settings, timeout=0.3)

    assert (answer.status, answer.records, answer.resolver) == (status, [], server.address)


async def test_fault_for_one_type_leaves_the_others_alone(
    server: DnsServer, settings: Settings
) -> None:
    server.set_fault("example.test", Fault.SERVFAIL, rtype="MX")

    assert (await query("example.test", "MX", settings)).status == "SERVFAIL"
    assert (await query("example.test", "A", settings)).status == "NOERROR"


@pytest.mark.parametrize(
    ("fault", "detail"),
    [
        (Fault.FORMERR, "the nameserver answered FORMERR"),
        (Fault.BAD_RDATA, "malformed answer: "),
    ],
)
async def test_a_malformed_answer_with_the_query_id_is_final(
    server: DnsServer, settings: Settings, fault: Fault, detail: str
) -> None:
    server.set_fault("example.test", fault, rtype="MX")
    started = time.perf_counter()

    answer = await query("example.test", "MX", settings, timeout=2)

    assert (answer.status, answer.records) == ("SERVFAIL", [])
    assert answer.detail is not None
    assert answer.detail.startswith(detail)
    assert time.perf_counter() - started < 1  # not left waiting for a better packet
    assert (await query("example.test", "A", settings)).status == "NOERROR"


@pytest.mark.parametrize(
    ("fault", "detail"),
    [
        (Fault.GARBAGE, f"only: an unreadable packet ({len(GARBAGE)} bytes)"),
        (Fault.MISMATCHED_ID, "only: an answer with id "),
    ],
)
async def test_packets_that_are_no_answer_are_dropped_until_the_deadline(
    server: DnsServer, settings: Settings, fault: Fault, detail: str
) -> None:
    server.set_fault("example.test", fault, rtype="TXT")

    answer = await query("example.test", "TXT", settings, timeout=0.3)

    assert (answer.status, answer.records) == ("SERVFAIL", [])
    assert answer.detail is not None
    assert detail in answer.detail
    assert [q.transport for q in server.queries] == ["udp"]


class _SpoofedFirst(DnsServer):
    """Sends garbage and an answer under another id before the real answer (RFC 5452)."""

    def _on_udp(self, sock: socket.socket) -> None:
        data, peer = sock.recvfrom(65535)
        reply = self._reply(data, "udp")
        assert reply is not None
        wrong_id = struct.pack("!H", (struct.unpack("!H", reply[:2])[0] + 7) & 0xFFFF)
        sock.sendto(GARBAGE, peer)
        sock.sendto(wrong_id + reply[2:], peer)
        sock.sendto(reply, peer)


async def test_the_real_answer_still_counts_after_dropped_packets() -> None:
    with _SpoofedFirst(EXAMPLE_ZONE) as spoofed:
        settings = Settings(dns_nameservers=[spoofed.nameserver])

        answer = await query("example.test", "A", settings, timeout=2)

    assert (answer.status, [r.value for r in answer.records]) == ("NOERROR", ["192.0.2.10"])
    assert answer.detail is None


@pytest.mark.parametrize(
    ("fault", "detail"),
    [
        (Fault.GARBAGE, "malformed answer over TCP: "),
        (Fault.BAD_RDATA, "malformed answer over TCP: "),
        (Fault.MISMATCHED_ID, "the TCP answer does not match the query"),
    ],
)
async def test_malformed_tcp_answers_are_server_failures(
    server: DnsServer, settings: Settings, fault: Fault, detail: str
) -> None:
    server.add_txt("big.example.test", "v=DKIM1; p=" + "A" * 1500)
    server.set_fault("big.example.test", fault, transport="tcp")

    answer = await query("big.example.test", "TXT", settings, timeout=2)

    assert (answer.status, answer.records) == ("SERVFAIL", [])
    assert answer.detail is not None
    assert answer.detail.startswith(detail)
    assert [q.transport for q in server.queries] == ["udp", "tcp"]


async def test_next_nameserver_is_asked_after_a_malformed_answer(server: DnsServer) -> None:
    with DnsServer(EXAMPLE_ZONE) as broken:
        broken.set_fault("example.test", Fault.BAD_RDATA)
        settings = Settings(dns_nameservers=[broken.nameserver, server.nameserver])

        answer = await query("example.test", "A", settings)

    assert (answer.status, answer.resolver) == ("NOERROR", server.address)


async def test_truncated_udp_answer_is_retried_over_tcp(
    server: DnsServer, settings: Settings
) -> None:
    server.set_fault("example.test", Fault.TRUNCATE)

    answer = await query("example.test", "A", settings)

    assert [record.value for record in answer.records] == ["192.0.2.10"]
    assert [q.transport for q in server.queries] == ["udp", "tcp"]


async def test_long_txt_is_joined_and_fetched_over_tcp(
    server: DnsServer, settings: Settings
) -> None:
    dkim = "v=DKIM1; k=rsa; p=" + "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA" * 40
    server.add_txt("sel._domainkey.example.test", dkim)

    answer = await query("sel._domainkey.example.test", "TXT", settings)

    assert [record.value for record in answer.records] == [dkim]
    assert server.queries[-1].transport == "tcp"


async def test_txt_with_several_strings_is_concatenated(
    server: DnsServer, settings: Settings
) -> None:
    server.add('multi.example.test. 60 IN TXT "v=spf1 " "include:_spf.example.test " "-all"')

    answer = await query("multi.example.test", "TXT", settings)

    assert [record.value for record in answer.records] == ["v=spf1 include:_spf.example.test -all"]


async def test_idn_name_is_asked_in_a_labels(server: DnsServer, settings: Settings) -> None:
    answer = await query("Bücher.Example.test.", "A", settings)

    assert answer.records == [DnsRecord("A", "xn--bcher-kva.example.test.", 60, "192.0.2.20")]
    assert server.queries[-1].name == "xn--bcher-kva.example.test."


@pytest.mark.parametrize("address", ["192.0.2.10", "2001:db8::10"])
async def test_ptr_accepts_an_ip_address(settings: Settings, address: str) -> None:
    answer = await query(address, "PTR", settings)

    assert answer.status == "NOERROR"
    assert [record.value for record in answer.records] == ["example.test."]
    assert answer.records[0].name.endswith((".in-addr.arpa.", ".ip6.arpa."))


async def test_records_added_at_runtime_are_served(server: DnsServer, settings: Settings) -> None:
    server.add("late.example.test. 42 IN A 192.0.2.42")

    answer = await query("late.example.test", "A", settings)

    assert answer.records == [DnsRecord("A", "late.example.test.", 42, "192.0.2.42")]


async def test_nameservers_argument_overrides_settings(server: DnsServer) -> None:
    with DnsServer("other.test. 30 IN A 192.0.2.99") as other:
        settings = Settings(dns_nameservers=[server.nameserver])

        answer = await query("other.test", "A", settings, nameservers=[other.nameserver])

    assert (answer.status, answer.resolver) == ("NOERROR", other.address)


async def test_next_nameserver_is_asked_after_silence(server: DnsServer) -> None:
    with DnsServer(EXAMPLE_ZONE) as silent:
        silent.set_fault("example.test", Fault.TIMEOUT)
        settings = Settings(dns_nameservers=[silent.nameserver, server.nameserver])

        answer = await query("example.test", "A", settings, timeout=0.6)

    assert (answer.status, answer.resolver) == ("NOERROR", server.address)


async def test_an_answer_beats_silence_when_all_nameservers_fail(server: DnsServer) -> None:
    server.set_fault("example.test", Fault.SERVFAIL)
    with DnsServer(EXAMPLE_ZONE) as silent:
        silent.set_fault("example.test", Fault.TIMEOUT)
        settings = Settings(dns_nameservers=[silent.nameserver, server.nameserver])

        answer = await query("example.test", "A", settings, timeout=0.6)

    assert (answer.status, answer.resolver) == ("SERVFAIL", server.address)


async def test_nxdomain_is_final_and_stops_at_the_first_nameserver(server: DnsServer) -> None:
    with DnsServer(EXAMPLE_ZONE) as second:
        settings = Settings(dns_nameservers=[server.nameserver, second.nameserver])

        answer = await query("nope.example.test", "A", settings)

        assert (answer.status, answer.resolver) == ("NXDOMAIN", server.address)
        assert second.queries == []


async def test_unreachable_nameserver_is_a_timeout() -> None:
    with DnsServer() as gone:
        nameserver = gone.nameserver
    settings = Settings(dns_nameservers=[nameserver])

    answer = await query("example.test", "A", settings, timeout=0.5)

    assert answer.status == "TIMEOUT"


async def test_ad_flag_is_reported_as_authenticated() -> None:
    with DnsServer(EXAMPLE_ZONE, authenticated=True) as validating:
        settings = Settings(dns_nameservers=[validating.nameserver])

        answer = await query("example.test", "A", settings)

    assert answer.authenticated is True


async def test_ipv6_nameserver_is_labelled_with_brackets() -> None:
    with DnsServer(EXAMPLE_ZONE, host="::1") as server6:
        settings = Settings(dns_nameservers=[parse_nameserver(server6.address)])

        answer = await query("example.test", "AAAA", settings)

    assert answer.status == "NOERROR"
    assert answer.resolver == f"[::1]:{server6.port}"


async def test_records_and_faults_can_be_removed_at_runtime(
    server: DnsServer, settings: Settings
) -> None:
    server.set_fault("example.test", Fault.REFUSED)
    server.set_fault("example.test", None)
    server.remove("example.test", "MX")

    assert (await query("example.test", "A", settings)).status == "NOERROR"
    assert (await query("example.test", "MX", settings)).status == "NODATA"
    server.remove("mail.example.test")
    assert (await query("mail.example.test", "A", settings)).status == "NXDOMAIN"


async def test_txt_bytes_that_are_not_utf8_are_escaped(
    server: DnsServer, settings: Settings
) -> None:
    server.add_txt("bin.example.test", b"ok \xff\xfe")

    answer = await query("bin.example.test", "TXT", settings)

    assert [record.value for record in answer.records] == ["ok \\xff\\xfe"]


# The system resolver is the host's configuration: tests stand in a loopback server
# for it, since no test may send a query outside loopback.
async def test_system_resolver_is_named_as_such(
    server: DnsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(toolrun.net.dns, "system_nameservers", lambda: (server.nameserver,))

    answer = await query("example.test", "A", Settings(dns_nameservers=[]))

    assert (answer.status, answer.resolver) == ("NOERROR", f"system ({server.address})")


async def test_no_nameserver_at_all_is_a_server_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(toolrun.net.dns, "system_nameservers", tuple)

    answer = await query("example.test", "A", Settings(dns_nameservers=[]))

    assert answer.status == "SERVFAIL"
    assert answer.resolver.startswith("system")


async def test_unknown_type_is_a_value_error(settings: Settings) -> None:
    with pytest.raises(ValueError, match="unknown record type"):
        await query("example.test", "BOGUS", settings)


async def test_invalid_name_is_refused_before_asking(server: DnsServer, settings: Settings) -> None:
    with pytest.raises(InvalidName):
        await query("a..example.test", "A", settings)
    assert server.queries == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("example.com", "example.com"),
        ("Example.COM.", "example.com"),
        ("  bücher.example ", "xn--bcher-kva.example"),
        ("ÖBB.at", "xn--bb-eka.at"),
        ("faß.de", "xn--fa-hia.de"),  # IDNA 2008, not transitional: ß is kept
        ("例え\uff0eテスト", "xn--r8jz45g.xn--zckzah"),  # full-width dot mapped
        ("_dmarc.example.com", "_dmarc.example.com"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
    ],
)
def test_to_ascii_encodes_a_labels(name: str, expected: str) -> None:
    assert to_ascii(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".",
        "a..b",
        "xn--zz.example",
        "\u2603.net",
        "a" * 64 + ".example",
        ("a" * 63 + ".") * 4 + "com",
    ],
)
def test_to_ascii_refuses_bad_names(name: str) -> None:
    with pytest.raises(InvalidName):
        to_ascii(name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.1.1.1", ("1.1.1.1", 53)),
        (" 127.0.0.1:5353 ", ("127.0.0.1", 5353)),
        ("2606:4700:4700::1111", ("2606:4700:4700::1111", 53)),
        ("[2606:4700:4700::1111]:5353", ("2606:4700:4700::1111", 5353)),
        ("[::1]", ("::1", 53)),
        ("2606:4700:4700:0:0:0:0:1111", ("2606:4700:4700::1111", 53)),
    ],
)
def test_parse_nameserver_accepts_ip_and_port(text: str, expected: tuple[str, int]) -> None:
    assert parse_nameserver(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "dns.google",
        "dns.google:53",
        "1.1.1.1:",
        "1.1.1.1:0",
        "1.1.1.1:65536",
        "1.1.1.1:dns",
        "1.1.1",
        "[1.1.1.1]:53",
        "[::1]53",
        "[::1",
        "http://1.1.1.1",
    ],
)
def test_parse_nameserver_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError, match=r"port|IP address"):
        parse_nameserver(text)


@pytest.mark.parametrize(
    ("nameserver", "label"),
    [(("1.1.1.1", 53), "1.1.1.1:53"), (("::1", 5353), "[::1]:5353")],
)
def test_format_nameserver(nameserver: tuple[str, int], label: str) -> None:
    assert format_nameserver(nameserver) == label
    assert parse_nameserver(label) == nameserver
