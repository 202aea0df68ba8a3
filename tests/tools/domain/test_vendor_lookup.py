"""domain-vendor-lookup: every provider signature, and a lookup over loopback DNS, HTTP and RDAP."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from tests.servers.dns import DnsServer
from tests.servers.http import HttpServer
from tests.servers.rdap import RdapServers
from tests.tools.domain.support import context
from toolrun.config import Settings
from toolrun.net import rdap
from toolrun.tools.domain.models import DomainInput
from toolrun.tools.domain.providers import (
    host_matches,
    load_providers,
    match_address,
    match_registrar,
)
from toolrun.tools.domain.vendor_lookup import (
    DEFINITION,
    dns_hosts,
    email_providers,
    run,
    web_vendors,
)

PROVIDERS = load_providers()


def loopback_settings(dns: DnsServer, registry: RdapServers, *, timeout_s: float) -> Settings:
    """Settings that resolve through the loopback DNS server and bootstrap RDAP from ``registry``."""
    return Settings(
        dns_nameservers=[dns.nameserver],
        allow_private_networks=True,
        rdap_bootstrap_url=registry.bootstrap_url,
        http_timeout_s=timeout_s,
        _env_file=None,
    )


def sample_host(rule: str) -> str:
    """A host name the rule should match."""
    return f"x.{rule}01.com" if rule.endswith("-") else f"edge1.{rule}"


def ids(kind: str) -> list[tuple[str, str]]:
    return [(p.id, rule) for p in PROVIDERS for rule in getattr(p, kind)]


def test_signature_file_covers_the_large_providers():
    assert len(PROVIDERS) >= 50
    families = {f for p in PROVIDERS for f in p.families}
    assert {"dns", "email", "hosting", "cdn", "registrar"} <= families
    assert len({p.id for p in PROVIDERS}) == len(PROVIDERS)
    for provider in PROVIDERS:
        assert provider.web in ("cdn", "hosting")
        assert any(
            (
                provider.ns,
                provider.mx,
                provider.spf,
                provider.cname,
                provider.headers,
                provider.registrar,
                provider.ips,
            )
        )
        assert bool(provider.ips) == bool(provider.ip_evidence)


def test_every_ip_source_is_documented():
    notes = json.loads((resources.files("toolrun.data") / "providers.json").read_text())["notes"]
    assert set(notes["ipSources"]) == {p.id for p in PROVIDERS if p.ips}


def inside(network) -> str:
    """An address of ``network``: the address itself, else one past the network address."""
    return str(network[0] if network.num_addresses == 1 else network[1])


@pytest.mark.parametrize(
    ("provider", "network"), [(p.id, n) for p in PROVIDERS for n in p.ips], ids=str
)
def test_hosting_and_cdn_family_by_address(provider, network):
    rtype = "A" if network.version == 4 else "AAAA"
    hosts, cdns = web_vendors([], None, [(rtype, "example.com", inside(network))])
    match = next(m for m in hosts + cdns if m.provider == provider)
    assert match.confidence == "high"
    assert match.evidence[0].startswith(f"{rtype} example.com {inside(network)} in {network} (")


@pytest.mark.parametrize(
    ("address", "provider"),
    [
        ("104.16.132.229", "cloudflare"),
        ("2606:4700::6810:84e5", "cloudflare"),
        ("151.101.1.69", "fastly"),
        ("185.199.110.153", "github-pages"),
        ("2606:50c0:8002::153", "github-pages"),
        ("76.76.21.21", "vercel"),
        ("75.2.60.5", "netlify"),
        ("23.227.38.65", "shopify"),
        ("198.49.23.145", "squarespace"),
        ("185.199.110.154", None),  # next to GitHub Pages' address, not it
        ("76.76.21.22", None),
        ("104.15.255.255", None),  # just below Cloudflare's 104.16.0.0/13
        ("192.0.2.1", None),
        ("not an address", None),
    ],
)
def test_match_address(address, provider):
    assert [p.id for p, _ in match_address(address)] == ([provider] if provider else [])


@pytest.mark.parametrize(("provider", "rule"), ids("ns"))
def test_dns_family(provider, rule):
    found = dns_hosts([sample_host(rule)])
    assert provider in [m.provider for m in found]
    assert found[[m.provider for m in found].index(provider)].confidence == "high"


@pytest.mark.parametrize(("provider", "rule"), ids("mx"))
def test_email_family_by_mx(provider, rule):
    found = email_providers([sample_host(rule)], [])
    assert provider in [m.provider for m in found]


@pytest.mark.parametrize(("provider", "rule"), ids("spf"))
def test_email_family_by_spf_include(provider, rule):
    found = email_providers([], [f"v=spf1 include:{rule} -all"])
    match = next(m for m in found if m.provider == provider)
    assert match.confidence == "low"
    assert match.evidence == [f"SPF include:{rule}"]


@pytest.mark.parametrize(("provider", "rule"), ids("cname"))
def test_hosting_and_cdn_family_by_cname(provider, rule):
    hosts, cdns = web_vendors([("www.example.com", sample_host(rule))], None)
    assert provider in [m.provider for m in hosts + cdns]


@pytest.mark.parametrize(("provider", "header"), [(p.id, h) for p in PROVIDERS for h in p.headers])
def test_hosting_and_cdn_family_by_header(provider, header):
    name, needle = header
    hosts, cdns = web_vendors([], [(name, f"x {needle} y" if needle else "abc123")])
    assert provider in [m.provider for m in hosts + cdns]


@pytest.mark.parametrize(("provider", "rule"), ids("registrar"))
def test_registrar_family(provider, rule):
    found = match_registrar(f"{rule.title()}, LLC")
    assert found is not None
    assert found.id == provider


@pytest.mark.parametrize(
    ("host", "rule", "expected"),
    [
        ("ns1.cloudflare.com", "cloudflare.com", True),
        ("notcloudflare.com", "cloudflare.com", False),
        ("ns-12.awsdns-34.org", "awsdns-", True),
        ("awsdns.example", "awsdns-", False),
        ("ALT1.ASPMX.L.GOOGLE.COM.", "aspmx.l.google.com", True),
    ],
)
def test_host_matching_on_label_boundaries(host, rule, expected):
    assert host_matches(host, rule) is expected


def test_unknown_vendors_give_nothing():
    assert dns_hosts(["ns1.example.net"]) == []
    assert email_providers(["mail.example.net"], ["v=spf1 mx -all"]) == []


def test_partial_ns_match_is_medium():
    found = dns_hosts(["ada.ns.cloudflare.com", "ns1.example.net"])
    assert [(m.provider, m.confidence) for m in found] == [("cloudflare", "medium")]


VENDOR_ZONE = """\
$ORIGIN vendor.test.
$TTL 300
@        IN SOA  ada.ns.cloudflare.com. dns.cloudflare.com. 2026112201 10000 2400 604800 1800
@        IN NS   ada.ns.cloudflare.com.
@        IN NS   bob.ns.cloudflare.com.
@        IN A    127.0.0.1
@        IN MX   1 aspmx.l.google.com.
@        IN MX   5 alt1.aspmx.l.google.com.
@        IN TXT  "v=spf1 include:_spf.google.com include:sendgrid.net ~all"
www      IN CNAME vendor-site.netlify.app.
"""


async def test_lookup_over_loopback_services():
    rdap._cache.clear()
    with DnsServer(VENDOR_ZONE) as dns, HttpServer() as http, RdapServers() as registry:
        http.route(
            "/",
            body=b"ok",
            headers=[
                ("Server", "cloudflare"),
                ("CF-RAY", "8f00aa-AMS"),
                ("Content-Type", "text/plain"),
            ],
        )
        registry.bootstrap({"test": registry.registry_base})
        registry.add("registry", "vendor.test", {
            "objectClassName": "domain", "ldhName": "vendor.test",
            "entities": [{"roles": ["registrar"], "publicIds": [{"type": "IANA Registrar ID", "identifier": "146"}],
                          "vcardArray": ["vcard", [["version", {}, "text", "4.0"], ["fn", {}, "text", "GoDaddy.com, LLC"]]]}],
        })  # fmt: skip
        settings = loopback_settings(dns, registry, timeout_s=3)
        result = await run(
            DomainInput(domain="vendor.test"),
            context(settings, web_ports={"http": http.port, "https": 9}),
        )
    rdap._cache.clear()
    assert result.registrar.name == "GoDaddy.com, LLC"
    assert result.registrar.provider == "godaddy"
    assert result.registrar.iana_id == "146"
    assert result.registrar.source == "rdap"
    assert [(m.provider, m.confidence) for m in result.dns_host] == [("cloudflare", "high")]
    assert result.email_provider[0].provider == "google-workspace"
    assert result.email_provider[0].confidence == "high"
    assert "sendgrid" in [m.provider for m in result.email_provider]
    assert [m.provider for m in result.web_host] == ["netlify"]
    assert result.web_host[0].evidence == ["CNAME www.vendor.test -> vendor-site.netlify.app"]
    assert [(m.provider, m.confidence) for m in result.cdn] == [("cloudflare", "high")]
    assert result.nameservers == ["ada.ns.cloudflare.com", "bob.ns.cloudflare.com"]


ADDRESS_ZONE = """\
$ORIGIN pages.test.
$TTL 300
@        IN SOA  ns1.pages.test. hostmaster.pages.test. 2026112201 10000 2400 604800 1800
@        IN NS   ns1.pages.test.
ns1      IN A    127.0.0.1
@        IN A    127.0.0.1
www      IN A    185.199.108.153
www      IN A    185.199.109.153
www      IN AAAA 2606:50c0:8000::153
"""


async def test_web_host_from_published_addresses():
    rdap._cache.clear()
    with DnsServer(ADDRESS_ZONE) as dns, RdapServers() as registry:
        registry.bootstrap({"test": registry.registry_base})
        settings = loopback_settings(dns, registry, timeout_s=2)
        result = await run(
            DomainInput(domain="pages.test"), context(settings, web_ports={"http": 9, "https": 9})
        )
    rdap._cache.clear()
    assert [(m.provider, m.confidence) for m in result.web_host] == [("github-pages", "high")]
    assert result.web_host[0].evidence == [
        "A www.pages.test 185.199.108.153 in 185.199.108.153/32 (a GitHub Pages apex address)",
        "A www.pages.test 185.199.109.153 in 185.199.109.153/32 (a GitHub Pages apex address)",
        "AAAA www.pages.test 2606:50c0:8000::153 in 2606:50c0:8000::153/128 (a GitHub Pages apex address)",
    ]
    assert result.cdn == []
    assert result.notes[0].startswith("the website could not be fetched")


def test_definition_shape():
    assert DEFINITION.slug == DEFINITION.action == "domain-vendor-lookup"
    assert DEFINITION.aliases == ("domain-vendor",)
