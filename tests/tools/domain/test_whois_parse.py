"""WHOIS text -> facts, over answers in the formats of several registries."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.net.whois import decode, query_text
from toolrun.tools.domain.dates import to_iso
from toolrun.tools.domain.whois_parse import (
    is_not_found,
    is_rate_limited,
    parse_whois,
    referral,
)

SAMPLES = Path(__file__).parents[2] / "data" / "domain" / "whois"


def sample(name: str, server: str = "whois.example") -> str:
    return decode((SAMPLES / name).read_bytes(), server)[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2019-09-09T08:39:04Z", "2019-09-09T08:39:04Z"),
        ("2019-09-09T08:39:04-0700", "2019-09-09T15:39:04Z"),
        ("2019-09-09T08:39:04.0Z", "2019-09-09T08:39:04Z"),
        ("2018-03-12T21:44:25+01:00", "2018-03-12T20:44:25Z"),
        ("2024-04-01 12:00:00 UTC", "2024-04-01T12:00:00Z"),
        ("2024-04-01", "2024-04-01T00:00:00Z"),
        ("26-Aug-2004", "2004-08-26T00:00:00Z"),
        ("2001/03/15", "2001-03-15T00:00:00Z"),
        ("2024/04/01 01:05:04 (JST)", "2024-03-31T16:05:04Z"),
        ("19990301 #12345", "1999-03-01T00:00:00Z"),
        ("15.03.2001", "2001-03-15T00:00:00Z"),
        ("01/02/2024", "2024-02-01T00:00:00Z"),
        ("12/31/2024", "2024-12-31T00:00:00Z"),
        ("Mon Jan 01 00:00:00 GMT 2024", "2024-01-01T00:00:00Z"),
        ("August 5, 2020", "2020-08-05T00:00:00Z"),
        ("before Aug-1996", None),
        ("not a date", None),
        ("2024-02-30", None),
    ],
)
def test_dates_become_iso_utc(text, expected):
    assert to_iso(text) == expected


def test_icann_thin_registry_record():
    facts = parse_whois(sample("verisign-example.com.txt"))
    assert facts.domain == "EXAMPLE.COM"
    assert facts.registrar == "RESERVED-Internet Assigned Numbers Authority"
    assert facts.registrar_iana_id == "376"
    assert facts.whois_server == "whois.registrar.test"
    assert facts.created == "1995-08-14T04:00:00Z"
    assert facts.updated == "2024-08-14T07:01:34Z"
    assert facts.expires == "2025-08-13T04:00:00Z"
    assert facts.status == [
        "clientDeleteProhibited",
        "clientTransferProhibited",
        "clientUpdateProhibited",
    ]
    assert facts.nameservers == ["a.iana-servers.net", "b.iana-servers.net"]
    assert facts.dnssec == "signed"
    assert facts.abuse_email == "abuse@registrar.test"
    assert facts.abuse_phone == "+1.2025551234"


def test_icann_registrar_record_with_redactions_and_offsets():
    facts = parse_whois(sample("registrar-example.com.txt"))
    assert facts.expires == "2025-08-13T04:00:00Z"
    assert facts.created == "1995-08-14T04:00:00Z"
    assert facts.registrant_org == "Internet Assigned Numbers Authority"
    assert facts.registrant_country == "US"
    assert facts.abuse_email == "abusecomplaints@registrar.test"


def test_icann_thick_record_redacted_organisation():
    facts = parse_whois(sample("pir-example.org.txt"))
    assert facts.registrant_org is None
    assert "registrant_org" in facts.redacted
    assert facts.registrant_country == "DE"
    assert facts.dnssec == "unsigned"
    assert facts.expires == "2027-03-14T16:11:44Z"


def test_nominet_sections():
    facts = parse_whois(sample("nominet-example.co.uk.txt"))
    assert facts.domain == "example.co.uk"
    assert facts.registrar == "Example Hosting Ltd t/a Example"
    assert facts.registrar_url is None
    assert facts.created == "2004-08-26T00:00:00Z"
    assert facts.expires == "2026-08-26T00:00:00Z"
    assert facts.updated == "2024-07-25T00:00:00Z"
    assert facts.nameservers == ["ns1.example.net", "ns2.example.net"]
    assert facts.status == ["Registered until expiry date."]
    assert facts.dnssec == "signed"


def test_denic_record():
    facts = parse_whois(sample("denic-example.de.txt"))
    assert facts.domain == "example.de"
    assert facts.nameservers == ["ns1.dns-provider.test", "ns2.dns-provider.test"]
    assert facts.status == ["connect"]
    assert facts.updated == "2018-03-12T20:44:25Z"
    assert facts.dnssec == "signed"
    assert facts.expires is None


@pytest.mark.parametrize(
    ("name", "domain", "organisation", "created", "expires", "updated", "status"),
    [
        (
            "jprs-example.jp.txt",
            "EXAMPLE.JP",
            "Example Corporation",
            "2001-03-15T00:00:00Z",
            "2027-03-31T00:00:00Z",
            "2026-03-31T16:05:04Z",
            ["Connected"],
        ),
        (
            "jprs-example.co.jp.txt",
            "EXAMPLE.CO.JP",
            "Example K.K.",
            "2001-05-01T00:00:00Z",
            "2027-05-31T00:00:00Z",
            "2026-05-31T16:05:04Z",
            ["Active"],
        ),
    ],
)
def test_jprs_bracketed_keys(name, domain, organisation, created, expires, updated, status):
    facts = parse_whois(sample(name))
    assert facts.domain == domain
    assert facts.registrant_org == organisation
    assert facts.created == created
    assert facts.expires == expires
    assert facts.updated == updated
    assert facts.status == status
    assert len(facts.nameservers) == 2


def test_registro_br_latin1_record():
    text, encoding = decode(
        (SAMPLES / "registro-example.com.br.latin1.txt").read_bytes(), "whois.registro.br"
    )
    assert encoding == "iso-8859-1"
    facts = parse_whois(text)
    assert facts.domain == "example.com.br"
    assert facts.registrant_org == "Exemplo Comércio e Serviços Ltda"
    assert facts.registrant_country == "BR"
    assert facts.created == "1999-03-01T00:00:00Z"
    assert facts.expires == "2027-03-01T00:00:00Z"
    assert facts.updated == "2023-03-15T00:00:00Z"
    assert facts.nameservers == ["a.dns.br", "b.dns.br"]
    assert facts.dnssec == "signed"


def test_unknown_server_latin1_falls_back_without_loss():
    raw = (SAMPLES / "registro-example.com.br.latin1.txt").read_bytes()
    text, encoding = decode(raw, "whois.unknown.test")
    assert encoding == "iso-8859-1"
    assert "Comércio" in text


def test_afnic_holder_from_its_handle_block():
    facts = parse_whois(sample("afnic-example.fr.txt"))
    assert facts.domain == "example.fr"
    assert facts.registrar == "OVH"
    assert facts.expires == "2027-03-31T11:36:33Z"
    assert facts.created == "2000-07-19T22:00:00Z"
    assert facts.updated == "2026-02-28T11:36:33Z"
    assert facts.registrant_org == "Exemple SAS"
    assert facts.registrant_country == "BE"
    assert facts.nameservers == ["dns1.example.net", "dns2.example.net"]


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("not-found-verisign.txt", True),
        ("not-found-denic.txt", True),
        ("not-found-afnic.txt", True),
        ("verisign-example.com.txt", False),
        ("nominet-example.co.uk.txt", False),
    ],
)
def test_not_found_answers(name, found):
    assert is_not_found(sample(name)) is found


@pytest.mark.parametrize(
    ("name", "limited"),
    [
        ("rate-limited-pir.txt", True),
        ("rate-limited-top.txt", True),
        ("pir-example.org.txt", False),  # a record that only mentions the policy
        ("verisign-example.com.txt", False),
    ],
)
def test_rate_limit_answers(name, limited):
    assert is_rate_limited(sample(name)) is limited


@pytest.mark.parametrize(
    ("name", "server"),
    [
        ("iana-com.txt", "whois.verisign-grs.com"),
        ("verisign-example.com.txt", "whois.registrar.test"),
        ("pir-example.org.txt", None),  # "http://..." is a URL, not a WHOIS host
        ("denic-example.de.txt", None),
    ],
)
def test_referrals(name, server):
    assert referral(sample(name)) == server


@pytest.mark.parametrize(
    ("server", "name", "registry_hop", "expected"),
    [
        ("whois.verisign-grs.com", "example.com", False, "domain example.com"),
        ("whois.registry.test", "example.net", True, "domain example.net"),
        ("whois.registrar.test", "example.com", False, "example.com"),
        ("whois.denic.de", "xn--bcher-kva.de", True, "-T dn,ace xn--bcher-kva.de"),
        ("whois.jprs.jp", "example.jp", True, "example.jp/e"),
        ("whois.dk-hostmaster.dk", "example.dk", True, "--show-handles example.dk"),
        ("whois.nic.fr", "example.fr", True, "example.fr"),
    ],
)
def test_per_server_query_forms(server, name, registry_hop, expected):
    assert query_text(server, name, registry_hop=registry_hop) == expected


@pytest.mark.parametrize(
    ("data", "server", "encoding"),
    [
        ("Organização".encode(), "whois.example", "utf-8"),
        ("Organização".encode("iso-8859-1"), "whois.registro.br", "iso-8859-1"),
        ("Организация".encode("cp1251"), "whois.kg", "cp1251"),
        ("組織".encode("iso-2022-jp"), "whois.nic.ad.jp", "iso-2022-jp"),
    ],
)
def test_decoding_by_server(data, server, encoding):
    text, used = decode(data, server)
    assert used == encoding
    assert text in ("Organização", "Организация", "組織")
