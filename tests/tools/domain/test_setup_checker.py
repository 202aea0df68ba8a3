"""domain-setup-checker over a loopback DNS zone and loopback HTTP/HTTPS servers."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.servers.dns import DnsServer
from tests.servers.http import HttpServer
from tests.tools.domain.support import context
from toolrun.config import Settings
from toolrun.tools.base import ToolFailure
from toolrun.tools.domain.checks_mail import parse_mta_sts
from toolrun.tools.domain.models import DomainInput
from toolrun.tools.domain.setup_checker import CHECKS, DEFINITION, run

GOOD_ZONE = """\
$ORIGIN good.test.
$TTL 300
@        IN SOA   ns1.good.test. hostmaster.good.test. 2026112201 7200 900 1209600 3600
@        IN NS    ns1.good.test.
@        IN NS    ns2.good.test.
ns1      IN A     127.0.0.1
ns2      IN A     127.0.0.1
@        IN A     127.0.0.1
@        IN AAAA  ::1
www      IN CNAME good.test.
mta-sts  IN A     127.0.0.1
@        IN MX    10 mail.good.test.
mail     IN A     192.0.2.25
@        IN TXT   "v=spf1 mx include:_spf.provider.test -all"
_dmarc   IN TXT   "v=DMARC1; p=reject; rua=mailto:dmarc@good.test"
_mta-sts IN TXT   "v=STSv1; id=2026112201"
_smtp._tls IN TXT "v=TLSRPTv1; rua=mailto:tls@good.test"
default._bimi IN TXT "v=BIMI1; l=https://good.test/logo.svg"
@        IN CAA   0 issue "letsencrypt.org"
@        IN DS    12345 13 2 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF
@        IN DNSKEY 257 3 13 AwEAAQ==
_spf.provider.test. IN TXT "v=spf1 ip4:192.0.2.0/24 ~all"
"""

BAD_ZONE = """\
$ORIGIN bad.test.
$TTL 300
@        IN SOA   ns1.bad.test. hostmaster.bad.test. 7 300 600 86400 30
@        IN NS    ns1.bad.test.
ns1      IN A     127.0.0.3
@        IN A     127.0.0.1
@        IN TXT   "v=spf1 a:gone1.bad.test a:gone2.bad.test a:gone3.bad.test ?all"
_dmarc   IN TXT   "v=DMARC1; p=none"
"""

MTA_STS_POLICY = b"version: STSv1\nmode: enforce\nmx: mail.good.test\nmax_age: 604800\n"


def dkim_record(bits: int) -> str:
    if bits >= 1024:
        public = rsa.generate_private_key(public_exponent=65537, key_size=bits).public_key()
    else:  # cryptography will not generate a weak key; any odd modulus of that size will do
        public = rsa.RSAPublicNumbers(65537, (1 << (bits - 1)) | 0xF1).public_key()
    der = public.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "v=DKIM1; k=rsa; p=" + base64.b64encode(der).decode()


def statuses(result) -> dict[str, str]:
    return {check.id: check.status for check in result.checks}


@pytest.fixture
def web(tls_ca):
    names = ["good.test", "mta-sts.good.test"]
    with HttpServer() as http, HttpServer(tls=tls_ca, cert_names=names) as https:
        yield http, https


async def test_well_configured_domain(web):
    http, https = web
    https.route(
        "/",
        body=b"<title>ok</title>",
        headers=[
            ("Strict-Transport-Security", "max-age=63072000; includeSubDomains"),
            ("Content-Type", "text/html"),
        ],
    )
    https.route(
        "/.well-known/mta-sts.txt", body=MTA_STS_POLICY, headers=[("Content-Type", "text/plain")]
    )
    http.redirect("/", "https://good.test/", status=301)
    with DnsServer(GOOD_ZONE) as dns:
        dns.add_txt("selector1._domainkey.good.test.", dkim_record(2048))
        settings = Settings(
            dns_nameservers=[dns.nameserver],
            allow_private_networks=True,
            http_timeout_s=3,
            _env_file=None,
        )
        ctx = context(
            settings,
            dns_port=dns.port,
            web_ports={"http": http.port, "https": https.port},
            ssl_context=https.client_ssl_context(),
        )
        result = await run(DomainInput(domain="Good.test"), ctx)
    found = statuses(result)
    expected_pass = [
        "ns-count", "ns-lame", "soa", "apex-address", "www-address", "mx", "mx-resolvable",
        "spf", "spf-lookups", "dmarc", "dmarc-reporting", "dkim", "mta-sts", "tls-rpt", "bimi",
        "caa", "dnssec", "https", "http-redirect", "hsts",
    ]  # fmt: skip
    assert {i: found[i] for i in expected_pass} == dict.fromkeys(expected_pass, "pass")
    assert found["ns-diversity"] == "fail"  # both name servers share 127.0.0.1
    assert found["ns-consistency"] == "info"
    assert len(result.checks) == len(CHECKS)
    assert result.summary.failed == 1
    assert result.summary.status == "fail"
    assert result.summary.score is not None
    assert 0 < result.summary.score < 100
    assert result.related_tools[0] == "dns-lookup"
    assert result.suggestions == ["Run the name servers on at least two different addresses."]
    spf = next(c for c in result.checks if c.id == "spf-lookups")
    assert spf.value == {"lookups": 2, "voidLookups": 0}
    dumped = result.model_dump(by_alias=True, mode="json")
    assert {"summary", "checks", "suggestions", "relatedTools"} <= dumped.keys()
    assert set(dumped["checks"][0]) == {
        "id",
        "title",
        "status",
        "value",
        "detail",
        "recommendation",
    }


async def test_badly_configured_domain(tls_ca):
    with HttpServer() as http, HttpServer(tls=tls_ca) as https, DnsServer(BAD_ZONE) as dns:
        http.route("/", body=b"plain", headers=[("Content-Type", "text/plain")])
        dns.add_txt("s1._domainkey.bad.test.", dkim_record(512))
        settings = Settings(
            dns_nameservers=[dns.nameserver],
            allow_private_networks=True,
            http_timeout_s=2,
            _env_file=None,
        )
        ctx = context(
            settings,
            dns_port=dns.port,
            web_ports={"http": http.port, "https": https.port},
            ssl_context=https.client_ssl_context(),
        )
        result = await run(DomainInput(domain="bad.test"), ctx)
    found = statuses(result)
    assert found["ns-count"] == "fail"
    assert found["ns-lame"] == "fail"  # 127.0.0.3 does not answer
    assert found["soa"] == "fail"
    assert found["mx"] == "warn"
    assert found["spf"] == "warn"  # ?all, no mail exchanger
    assert found["spf-lookups"] == "fail"  # three void lookups
    assert found["dmarc"] == "warn"
    assert found["dkim"] == "fail"  # a 512-bit key
    assert found["caa"] == "warn"
    assert found["dnssec"] == "warn"
    assert found["https"] == "fail"  # the certificate is for localhost
    assert found["http-redirect"] == "fail"
    assert found["hsts"] == "info"
    assert result.summary.status == "fail"
    assert result.suggestions[0].startswith("Delegate the domain")


async def test_nonexistent_domain_fails_the_job():
    with DnsServer(GOOD_ZONE) as dns:
        settings = Settings(
            dns_nameservers=[dns.nameserver],
            allow_private_networks=True,
            http_timeout_s=1,
            _env_file=None,
        )
        with pytest.raises(ToolFailure) as caught:
            await run(
                DomainInput(domain="missing.good.test"),
                context(settings, dns_port=dns.port, web_ports={"http": 9, "https": 9}),
            )
    assert caught.value.code == 400


@pytest.mark.parametrize(
    ("text", "errors"),
    [
        (MTA_STS_POLICY.decode(), []),
        (
            "version: STSv1\nmode: enforce\nmax_age: 99999999999\nmx: a.test\n",
            ["max_age must be a number up to 31557600"],
        ),
        (
            "version: STSv1\nmode: sometimes\nmax_age: 86400\nmx: a.test\n",
            ["mode must be enforce, testing or none"],
        ),
        (
            "version: STSv1\nmode: testing\nmode: enforce\nmax_age: 1\nmx: a.test\nfoo: bar\n",
            ["duplicate key mode", "unknown line 'foo: bar'"],
        ),
    ],
)
def test_mta_sts_policy_parsing(text, errors):
    _, found = parse_mta_sts(text)
    assert found == errors


def test_definition_shape():
    assert DEFINITION.slug == DEFINITION.action == "domain-setup-checker"
    assert DEFINITION.aliases == ("domain-setup",)
