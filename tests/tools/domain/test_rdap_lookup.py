"""rdap-lookup: bootstrap, registry and registrar RDAP on loopback, WHOIS fallback, parsing."""

from __future__ import annotations

import json

import pytest

from tests.servers.rdap import RdapServers
from tests.servers.whois import WhoisChain, WhoisServer
from tests.tools.domain.support import DATA, context, whois_sample
from toolrun.config import Settings
from toolrun.net import rdap
from toolrun.tools.base import ToolFailure
from toolrun.tools.domain.models import DomainInput
from toolrun.tools.domain.rdap_lookup import DEFINITION, rdap_lookup, run
from toolrun.tools.domain.rdap_parse import parse_domain, parse_jcard


def rdap_text(name: str) -> str:
    return (DATA / "rdap" / name).read_text("utf-8")


def settings_for(servers: RdapServers, **extra: object) -> Settings:
    values: dict[str, object] = {
        "allow_private_networks": True,
        "rdap_bootstrap_url": servers.bootstrap_url,
        "http_timeout_s": 3,
        "_env_file": None,
    }
    values.update(extra)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _fresh_bootstrap_cache():
    rdap._cache.clear()
    yield
    rdap._cache.clear()


async def test_registry_then_registrar_merged(rdap_servers):
    rdap_servers.bootstrap({"com": rdap_servers.registry_base})
    rdap_servers.add("registry", "example.com", rdap_text("registry-example.com.json"))
    rdap_servers.add("registrar", "EXAMPLE.COM", rdap_text("registrar-example.com.json"))
    result = await run(DomainInput(domain="www.example.com"), context(settings_for(rdap_servers)))
    assert result.registered is True
    assert result.source == "rdap"
    assert result.handle == "2336799_DOMAIN_COM-VRSN"
    assert result.created_at == "1995-08-14T04:00:00Z"
    assert result.expires_at == "2025-08-13T04:00:00Z"
    assert result.updated_at == "2024-08-14T07:01:34Z"
    assert result.status == [
        "client delete prohibited",
        "client transfer prohibited",
        "client update prohibited",
    ]
    assert result.registrar.name == "MarkMonitor Inc."
    assert result.registrar.iana_id == "292"
    assert result.registrar.url == "http://www.markmonitor.com"
    assert result.registrar.abuse_email == "abuse@registrar.example"
    assert result.registrar.abuse_phone == "+1.2086851750"
    assert result.registrant.organization == "Example Holdings LLC"
    assert result.registrant.country == "US"
    assert result.nameservers == ["a.iana-servers.net", "b.iana-servers.net"]
    assert result.dnssec.delegation_signed is True
    assert result.dnssec.ds_records == 1
    assert "Registrant Name" in result.redactions
    assert "REDACTED FOR PRIVACY" not in (result.registrant.organization or "")
    assert "Terms of Use" in result.notices
    assert "Terms of Service" in result.notices
    assert result.port43 == "whois.markmonitor.com"
    assert [(s.role, s.status_code) for s in result.servers] == [
        ("registry", 200),
        ("registrar", 200),
    ]
    assert any(e.action == "registrar expiration" for e in result.events)
    assert rdap_servers.requests("/registry/") == ["/registry/domain/example.com"]
    assert result.bootstrap == rdap_servers.bootstrap_url


async def test_not_found_is_not_registered(rdap_servers):
    rdap_servers.bootstrap({"com": rdap_servers.registry_base})
    result = await rdap_lookup("unregistered-4242.com", settings_for(rdap_servers))
    assert result.registered is False
    assert result.source == "rdap"
    assert result.servers[0].status_code == 404


async def test_broken_registrar_keeps_registry_facts(rdap_servers):
    rdap_servers.bootstrap({"com": rdap_servers.registry_base})
    rdap_servers.add("registry", "example.com", rdap_text("registry-example.com.json"))
    rdap_servers.add("registrar", "EXAMPLE.COM", "<html>oops</html>", content_type="text/html")
    result = await rdap_lookup("example.com", settings_for(rdap_servers))
    assert result.registered is True
    assert result.registrar.abuse_email == "abusecomplaints@markmonitor.com"
    assert result.registrant.organization is None
    assert any("registry data only" in note for note in result.notes)
    assert result.servers[1].error is not None


async def test_idn_asks_a_labels_and_reports_unicode(rdap_servers):
    rdap_servers.bootstrap({"com": rdap_servers.registry_base})
    rdap_servers.add("registry", "xn--bcher-kva.com", rdap_text("registry-xn--bcher-kva.com.json"))
    result = await rdap_lookup("xn--bcher-kva.com", settings_for(rdap_servers))
    assert DomainInput(domain="Bücher.com").domain == "xn--bcher-kva.com"
    assert result.unicode_name == "bücher.com"
    assert result.dnssec.delegation_signed is False
    assert result.registrar.iana_id == "1234"


async def test_bootstrap_url_is_fetched_once(rdap_servers):
    rdap_servers.bootstrap({"com": rdap_servers.registry_base})
    settings = settings_for(rdap_servers)
    await rdap_lookup("a-4242.com", settings)
    await rdap_lookup("b-4242.com", settings)
    assert rdap_servers.requests("/bootstrap/") == ["/bootstrap/dns.json"]


async def test_no_rdap_service_falls_back_to_whois(rdap_servers):
    rdap_servers.bootstrap({"com": rdap_servers.registry_base})
    registry = WhoisServer(default=whois_sample("nominet-example.co.uk.txt"))
    root = WhoisServer(default="refer: whois.nic.test\n")
    async with WhoisChain({"whois.nic.test": registry}, root=root) as chain:
        settings = chain.settings(rdap_bootstrap_url=rdap_servers.bootstrap_url)
        result = await rdap_lookup("www.example.co.uk", settings)
    assert result.source == "whois"
    assert result.registered is True
    assert result.expires_at == "2026-08-26T00:00:00Z"
    assert result.notes[0] == "no RDAP service is known for .uk; these facts come from WHOIS"
    assert root.queries == ["example.co.uk"]


async def test_unreachable_registry_falls_back_to_whois(rdap_servers):
    rdap_servers.bootstrap({"com": "http://127.0.0.1:9/"})  # discard port: refused
    registry = WhoisServer(default=whois_sample("verisign-example.com.txt"))
    root = WhoisServer(default="refer: whois.registry.test\n")
    async with WhoisChain({"whois.registry.test": registry}, root=root) as chain:
        settings = chain.settings(rdap_bootstrap_url=rdap_servers.bootstrap_url)
        result = await rdap_lookup("example.com", settings)
    assert result.source == "whois"
    assert result.registrar.iana_id == "376"
    assert "could not be reached" in result.notes[0]


async def test_bad_bootstrap_fails_the_job(rdap_servers):
    rdap_servers.http.route(
        "/bootstrap/dns.json", body=b"{}", headers=[("Content-Type", "application/json")]
    )
    with pytest.raises(ToolFailure) as caught:
        await rdap_lookup("example.com", settings_for(rdap_servers))
    assert caught.value.code == 400


def test_bundled_bootstrap_snapshot():
    bootstrap = rdap.bundled_bootstrap()
    assert bootstrap.base_urls("example.com") == (["https://rdap.verisign.com/com/v1/"], False)
    assert bootstrap.base_urls("example.org")[0] == [
        "https://rdap.publicinterestregistry.org/rdap/"
    ]
    assert bootstrap.base_urls("example.dev")[0] == ["https://pubapi.registry.google/rdap/"]
    assert bootstrap.base_urls("example.co.uk")[0] == ["https://rdap.nominet.uk/uk/"]
    assert bootstrap.base_urls("example.de") == (["https://rdap.denic.de/"], True)
    assert bootstrap.base_urls("example.jp") == ([], False)
    assert len(bootstrap.services) > 250


def test_bootstrap_longest_match_and_https_first():
    document = {
        "services": [
            [["uk"], ["https://uk.example/"]],
            [["co.uk"], ["http://plain.example/", "https://co-uk.example/"]],
        ]
    }
    bootstrap = rdap.Bootstrap.from_json(document, "test")
    assert bootstrap.base_urls("a.example.co.uk")[0] == [
        "https://co-uk.example/",
        "http://plain.example/",
    ]
    assert bootstrap.base_urls("example.uk")[0] == ["https://uk.example/"]
    assert (
        rdap.domain_url("https://x.example/rdap", "a.com") == "https://x.example/rdap/domain/a.com"
    )


def test_jcard_parsing():
    card = [
        "vcard",
        [
            ["version", {}, "text", "4.0"],
            ["fn", {}, "text", "Jane Doe"],
            ["org", {"type": "work"}, "text", "Example Org"],
            ["adr", {}, "text", ["", "", "1 Road", "Town", "CA", "90000", "US"]],
            ["tel", {"type": "fax"}, "uri", "tel:+1.5550000"],
            ["tel", {"type": "voice"}, "uri", "tel:+1.5551234"],
            ["email", {}, "text", "jane@example.org"],
        ],
    ]
    contact = parse_jcard(card)
    assert (contact.name, contact.organization, contact.country) == (
        "Jane Doe",
        "Example Org",
        "US",
    )
    assert (contact.phone, contact.email) == ("+1.5551234", "jane@example.org")
    assert parse_jcard("garbage").name is None


def test_redacted_registrant_is_not_reported():
    data = json.loads(rdap_text("registrar-example.com.json"))
    data["entities"][0]["vcardArray"][1][2] = ["org", {}, "text", "REDACTED FOR PRIVACY"]
    facts = parse_domain(data)
    assert facts.registrant_org is None
    assert "registrant organization" in facts.redactions


def test_definition_shape():
    assert DEFINITION.slug == DEFINITION.action == "rdap-lookup"
    assert DEFINITION.aliases == ("rdap",)
