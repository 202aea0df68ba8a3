"""domain-setup-checker over a loopback DNS zone and loopback HTTP/HTTPS servers."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.servers.dns import DnsServer, Fault
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


def check_of(result, check_id: str):
    return next(c for c in result.checks if c.id == check_id)


def no_web(settings: Settings, dns: DnsServer):
    """A context whose web requests go to a closed port (they fail at once)."""
    return context(settings, dns_port=dns.port, web_ports={"http": 9, "https": 9})


def dns_settings(*servers: DnsServer) -> Settings:
    return Settings(
        dns_nameservers=[s.nameserver for s in servers],
        allow_private_networks=True,
        http_timeout_s=1,
        _env_file=None,
    )


# -- malformed answers ----------------------------------------------------------------------


async def test_malformed_answers_are_reported_per_question_and_the_rest_is_checked():
    with DnsServer(GOOD_ZONE) as dns:
        dns.add_txt("selector1._domainkey.good.test.", dkim_record(1024))
        dns.set_fault("good.test", Fault.BAD_RDATA, rtype="MX")
        dns.set_fault("_dmarc.good.test", Fault.FORMERR)
        dns.set_fault("good.test", Fault.GARBAGE, rtype="CAA")
        dns.set_fault("selector1._domainkey.good.test", Fault.MISMATCHED_ID)
        result = await run(DomainInput(domain="good.test"), no_web(dns_settings(dns), dns))

    assert [(e.name, e.type, e.status) for e in result.dns_errors] == [
        ("_dmarc.good.test", "TXT", "SERVFAIL"),
        ("good.test", "CAA", "SERVFAIL"),
        ("good.test", "MX", "SERVFAIL"),
        ("selector1._domainkey.good.test", "TXT", "SERVFAIL"),
    ]
    details = [e.detail or "" for e in result.dns_errors]
    assert details[0] == "the nameserver answered FORMERR"
    assert details[1].startswith("no usable answer in time, only: an unreadable packet")
    assert details[2].startswith("malformed answer: ")
    assert details[3].startswith("no usable answer in time, only: an answer with id ")
    found = statuses(result)
    for check_id in ("mx", "mx-resolvable", "dmarc", "dmarc-reporting", "bimi"):
        assert found[check_id] == "fail"
        assert check_of(result, check_id).detail.startswith("Could not be checked: ")
    assert check_of(result, "mx").value == {"unanswered": {"good.test MX": "SERVFAIL"}}
    assert found["caa"] == "fail"
    assert "RFC 8659" in check_of(result, "caa").detail
    assert found["dkim"] == "warn"
    assert check_of(result, "dkim").value["unanswered"] == ["selector1"]
    for check_id in ("ns-count", "ns-lame", "soa", "apex-address", "spf", "spf-lookups", "dnssec"):
        assert found[check_id] == "pass", check_id


async def test_a_timeout_makes_a_check_a_warning_not_a_failure():
    with DnsServer(GOOD_ZONE) as dns:
        dns.set_fault("_smtp._tls.good.test", Fault.TIMEOUT)
        settings = dns_settings(dns)
        result = await run(DomainInput(domain="good.test"), no_web(settings, dns))

    tls_rpt = check_of(result, "tls-rpt")
    assert tls_rpt.status == "warn"
    assert tls_rpt.detail.startswith("Could not be checked: no usable DNS answer for _smtp._tls")
    assert [(e.type, e.status, e.detail) for e in result.dns_errors] == [
        ("TXT", "TIMEOUT", "no answer in time")
    ]


# -- CAA: the climb of RFC 8659 §3 -----------------------------------------------------------

CLIMB_ZONE = """\
$ORIGIN climb.test.
$TTL 300
@        IN SOA   ns1.climb.test. hostmaster.climb.test. 2026112201 7200 900 1209600 3600
@        IN NS    ns1.climb.test.
ns1      IN A     127.0.0.1
@        IN A     127.0.0.1
shop     IN A     127.0.0.1
a.b      IN A     127.0.0.1
alias    IN CNAME cdn.elsewhere.test.
cdn.elsewhere.test. IN A 127.0.0.1
"""


async def caa_check(dns: DnsServer, domain: str):
    result = await run(DomainInput(domain=domain), no_web(dns_settings(dns), dns))
    asked = [q.name for q in dns.queries if q.type == "CAA"]
    return check_of(result, "caa"), asked


@pytest.mark.parametrize(
    ("records", "domain", "found_at", "asked"),
    [
        # the name's own set wins
        (
            ['shop.climb.test. IN CAA 0 issue "pki.goog"', 'climb.test. IN CAA 0 issue "x.test"'],
            "shop.climb.test",
            "shop.climb.test",
            ["shop.climb.test."],
        ),
        # an empty set: the parent's applies
        (
            ['climb.test. IN CAA 0 issue "letsencrypt.org"'],
            "shop.climb.test",
            "climb.test",
            ["shop.climb.test.", "climb.test."],
        ),
        # an empty non-terminal (b.climb.test) is climbed through like any name
        (
            ['climb.test. IN CAA 0 issue "letsencrypt.org"'],
            "a.b.climb.test",
            "climb.test",
            ["a.b.climb.test.", "b.climb.test.", "climb.test."],
        ),
        # up to the TLD
        (
            ['test. IN CAA 0 issue "tld-ca.test"'],
            "shop.climb.test",
            "test",
            ["shop.climb.test.", "climb.test.", "test."],
        ),
        # a CNAME is followed by the resolver: the target's set is the name's set
        (
            ['cdn.elsewhere.test. IN CAA 0 issue "cdn-ca.test"'],
            "alias.climb.test",
            "alias.climb.test",
            ["alias.climb.test."],
        ),
    ],
)
async def test_caa_climbs_to_the_first_non_empty_set(records, domain, found_at, asked):
    with DnsServer(CLIMB_ZONE) as dns:
        for record in records:
            dns.add(record)
        caa, queried = await caa_check(dns, domain)

    assert caa.status == "pass"
    assert caa.value["foundAt"] == found_at
    assert queried == asked
    assert caa.value["asked"] == [name.rstrip(".") for name in asked]
    assert ("inherited from" in caa.detail) == (found_at != domain)


async def test_caa_climb_stops_at_the_tld_when_nothing_is_found():
    with DnsServer(CLIMB_ZONE) as dns:
        caa, queried = await caa_check(dns, "shop.climb.test")

    assert caa.status == "warn"
    assert queried == ["shop.climb.test.", "climb.test.", "test."]  # never the root
    assert caa.value == {"records": [], "foundAt": None, "asked": queried_names(queried)}


def queried_names(names: list[str]) -> list[str]:
    return [name.rstrip(".") for name in names]


async def test_caa_climb_stops_at_a_failed_lookup():
    with DnsServer(CLIMB_ZONE) as dns:
        dns.add('test. IN CAA 0 issue "tld-ca.test"')
        dns.set_fault("climb.test", Fault.SERVFAIL, rtype="CAA")
        caa, queried = await caa_check(dns, "shop.climb.test")

    assert caa.status == "fail"
    assert queried == ["shop.climb.test.", "climb.test."]
    assert caa.detail.startswith("The CAA lookup of climb.test failed: SERVFAIL.")


async def test_malformed_inherited_caa_fails():
    with DnsServer(CLIMB_ZONE) as dns:
        dns.add('climb.test. IN CAA 0 issue "letsencrypt.org"')
        dns.add('climb.test. IN CAA 0 tbs "whatever"')
        caa, _ = await caa_check(dns, "shop.climb.test")

    assert caa.status == "fail"
    assert caa.detail == 'Malformed CAA record(s) (inherited from climb.test): 0 tbs "whatever".'


# -- name server consistency: each server asked for its own SOA and NS ------------------------

TWO_NS_ZONE = """\
$ORIGIN two.test.
$TTL 300
@        IN SOA   ns1.two.test. hostmaster.two.test. 2026112201 7200 900 1209600 3600
@        IN NS    ns1.two.test.
@        IN NS    ns2.two.test.
ns1      IN A     127.0.0.1
ns2      IN A     127.0.0.2
@        IN A     127.0.0.1
"""


async def consistency(second_zone: str):
    with DnsServer(TWO_NS_ZONE) as first, DnsServer(second_zone, host="127.0.0.2", port=first.port):
        result = await run(DomainInput(domain="two.test"), no_web(dns_settings(first), first))
    return check_of(result, "ns-consistency"), check_of(result, "ns-lame")


async def test_servers_serving_the_same_zone_are_consistent():
    check, lame = await consistency(TWO_NS_ZONE)

    assert (check.status, lame.status) == ("pass", "pass")
    assert check.value["127.0.0.2"] == {
        "serial": 2026112201,
        "ns": ["ns1.two.test", "ns2.two.test"],
        "mname": "ns1.two.test",
        "rname": "hostmaster.two.test",
        "timers": [7200, 900, 1209600, 3600],
    }
    assert check.value.keys() == {"127.0.0.1", "127.0.0.2"}


@pytest.mark.parametrize(
    ("change", "difference"),
    [
        (("2026112201", "2026112299"), "SOA serials differ: 2026112201; 2026112299"),
        (("hostmaster.two.test.", "dns-admin.two.test."), "SOA RNAMEs differ: dns-admin.two.test; hostmaster.two.test"),
        (("SOA   ns1.two.test.", "SOA   ns2.two.test."), "SOA MNAMEs differ: ns1.two.test; ns2.two.test"),
        (("7200 900 1209600 3600", "7200 900 604800 3600"), "SOA timers (refresh retry expire minimum) differ: 7200 900 1209600 3600; 7200 900 604800 3600"),
        (
            ("@        IN NS    ns2.two.test.", "@        IN NS    ns3.two.test."),
            "NS sets differ: ns1.two.test ns2.two.test; ns1.two.test ns3.two.test",
        ),
    ],
)  # fmt: skip
async def test_each_difference_between_servers_is_named(change, difference):
    check, _ = await consistency(TWO_NS_ZONE.replace(*change))

    assert check.status == "warn"
    assert check.detail == difference + "."
    assert check.recommendation is not None


async def test_a_non_authoritative_server_is_not_compared():
    check, lame = await consistency("other.test. IN A 192.0.2.1")

    assert lame.status == "fail"
    assert check.status == "info"
    assert list(check.value) == ["127.0.0.1"]


async def test_a_server_whose_ns_answer_is_malformed_is_compared_on_its_soa():
    with (
        DnsServer(TWO_NS_ZONE) as first,
        DnsServer(TWO_NS_ZONE, host="127.0.0.2", port=first.port) as second,
    ):
        second.set_fault("two.test", Fault.BAD_RDATA, rtype="NS")
        result = await run(DomainInput(domain="two.test"), no_web(dns_settings(first), first))

    check = check_of(result, "ns-consistency")
    assert check.status == "pass"
    assert check.value["127.0.0.2"]["ns"] is None
    assert check.value["127.0.0.1"]["ns"] == ["ns1.two.test", "ns2.two.test"]


async def test_follow_up_questions_do_not_wait_for_the_whole_first_round():
    with DnsServer(GOOD_ZONE) as dns:
        dns.set_fault("zendesk1._domainkey.good.test", Fault.TIMEOUT)  # silent for 4 s
        await run(DomainInput(domain="good.test"), no_web(dns_settings(dns), dns))

    started = dns.queries[0].at
    asked = {(q.name, q.type): q.at - started for q in dns.queries}
    silent_asked = asked[("zendesk1._domainkey.good.test.", "TXT")]
    # each follow-up went out once its own answer was in, before the silent one (4 s) gave up;
    # waiting for the whole first round would put them at 4 s or later (the margin is for load)
    for follow_up in [
        ("ns1.good.test.", "A"),
        ("mail.good.test.", "A"),
        ("_spf.provider.test.", "TXT"),
    ]:
        assert asked[follow_up] < silent_asked + 3, follow_up
