"""SPF evaluation against a loopback DNS server: syntax, the lookup limits, loops, policy."""

from __future__ import annotations

import asyncio
import functools

import pytest

from tests.servers.dns import DnsServer
from toolrun.config import Settings
from toolrun.net.dns import query
from toolrun.tools.domain.lookups import Lookups
from toolrun.tools.domain.spf import evaluate_spf, parse_terms

ZONE = """\
$ORIGIN spf.test.
$TTL 300
@        IN SOA ns1.spf.test. hostmaster.spf.test. 1 3600 600 604800 300
@        IN NS  ns1.spf.test.
ns1      IN A   192.0.2.53
mail     IN A   192.0.2.25
@        IN MX  10 mail.spf.test.
"""


def lookup_for(server: DnsServer):
    settings = Settings(
        dns_nameservers=[server.nameserver], allow_private_networks=True, _env_file=None
    )
    return functools.partial(_lookup, settings=settings)


async def _lookup(name: str, rtype: str, *, settings: Settings):
    return await query(name, rtype, settings, timeout=2.0)


@pytest.fixture
def spf_dns():
    with DnsServer(ZONE) as server:
        yield server


async def test_simple_record_passes(spf_dns):
    spf_dns.add_txt("ok.spf.test.", "v=spf1 ip4:192.0.2.0/24 mx a:mail.spf.test -all")
    spf_dns.add("ok.spf.test. 300 IN MX 10 mail.spf.test.")
    report = await evaluate_spf("ok.spf.test", lookup_for(spf_dns))
    assert report.errors == []
    assert report.policy == "-all"
    assert report.lookups == 2
    assert report.void_lookups == 0


async def test_include_tree_counts_toward_ten(spf_dns):
    names = [f"inc{i}.spf.test" for i in range(12)]
    for name in names:
        spf_dns.add_txt(name + ".", "v=spf1 ip4:192.0.2.1 ~all")
    spf_dns.add_txt("many.spf.test.", "v=spf1 " + " ".join(f"include:{n}" for n in names) + " -all")
    report = await evaluate_spf("many.spf.test", lookup_for(spf_dns))
    assert report.lookups == 12
    assert any("12 DNS lookups; the limit is 10" in e for e in report.errors)
    assert report.tree is not None
    assert len(report.tree.children) == 12


async def test_nested_includes_and_redirect(spf_dns):
    spf_dns.add_txt("a.spf.test.", "v=spf1 include:b.spf.test ~all")
    spf_dns.add_txt("b.spf.test.", "v=spf1 a mx -all")
    spf_dns.add("b.spf.test. 300 IN A 192.0.2.2")
    spf_dns.add("b.spf.test. 300 IN MX 10 mail.spf.test.")
    spf_dns.add_txt("r.spf.test.", "v=spf1 redirect=a.spf.test")
    report = await evaluate_spf("r.spf.test", lookup_for(spf_dns))
    assert report.lookups == 4  # redirect, include, a, mx
    assert report.policy == "~all"
    assert report.errors == []


async def test_include_loop_is_an_error(spf_dns):
    spf_dns.add_txt("loop1.spf.test.", "v=spf1 include:loop2.spf.test -all")
    spf_dns.add_txt("loop2.spf.test.", "v=spf1 include:loop1.spf.test -all")
    report = await evaluate_spf("loop1.spf.test", lookup_for(spf_dns))
    assert any(
        "include loop: loop1.spf.test -> loop2.spf.test -> loop1.spf.test" in e
        for e in report.errors
    )


async def test_void_lookups_over_two(spf_dns):
    spf_dns.add_txt(
        "void.spf.test.",
        "v=spf1 a:gone1.spf.test a:gone2.spf.test mx:gone3.spf.test exists:gone4.spf.test -all",
    )
    report = await evaluate_spf("void.spf.test", lookup_for(spf_dns))
    assert report.void_lookups == 4
    assert any("4 void lookups; the limit is 2" in e for e in report.errors)


async def test_include_without_spf_record_is_an_error(spf_dns):
    spf_dns.add_txt("noinc.spf.test.", "v=spf1 include:nothing.spf.test -all")
    report = await evaluate_spf("noinc.spf.test", lookup_for(spf_dns))
    assert any("nothing.spf.test has no SPF record" in e for e in report.errors)
    assert report.void_lookups == 1


async def test_two_records_and_plus_all(spf_dns):
    spf_dns.add_txt("two.spf.test.", "v=spf1 +all")
    spf_dns.add_txt("two.spf.test.", "v=spf1 -all")
    report = await evaluate_spf("two.spf.test", lookup_for(spf_dns))
    assert report.records_found == 2
    assert any("exactly one" in e for e in report.errors)


async def test_missing_all_is_neutral(spf_dns):
    spf_dns.add_txt("neutral.spf.test.", "v=spf1 ip4:192.0.2.1")
    report = await evaluate_spf("neutral.spf.test", lookup_for(spf_dns))
    assert report.policy == "?all"


async def test_no_record(spf_dns):
    report = await evaluate_spf("spf.test", lookup_for(spf_dns))
    assert report.record is None


@pytest.mark.parametrize(
    ("record", "error"),
    [
        ("v=spf1 ip4:192.0.2.1~all", "'all' must be its own term"),
        ("v=spf1 ip4:300.1.1.1 -all", "not a valid network"),
        ("v=spf1 ip6:192.0.2.1 -all", "is not an IPv6 address"),
        ("v=spf1 include: -all", "include needs a domain"),
        ("v=spf1 foo -all", "unknown or malformed term"),
        ("v=spf1 all:x", "'all' takes no argument"),
    ],
)
def test_syntax_errors(record, error):
    _, errors = parse_terms(record)
    assert any(error in e for e in errors), errors


def test_modifiers_and_cidr_parse():
    terms, errors = parse_terms(
        "v=spf1 a/24 mx:example.com/24//64 ip6:2001:db8::/32 exp=explain.example.com ~all"
    )
    assert errors == []
    assert ("+", "ip6", "2001:db8::/32") in terms
    assert ("=", "exp", "explain.example.com") in terms


async def test_invalid_include_name_is_a_void_lookup_not_a_crash(spf_dns):
    spf_dns.add_txt("weird.spf.test.", "v=spf1 include:" + "a" * 70 + ".spf.test -all")
    lookups = Lookups(Settings(dns_nameservers=[spf_dns.nameserver], _env_file=None))
    report = await evaluate_spf("weird.spf.test", lookups.get)
    await lookups.aclose()
    assert report.void_lookups == 1
    assert any("has no SPF record" in e for e in report.errors)


async def test_term_lookups_and_includes_are_asked_together(spf_dns):
    spf_dns.add_txt("par.spf.test.", "v=spf1 a:mail.spf.test include:inc.spf.test -all")
    spf_dns.add_txt("inc.spf.test.", "v=spf1 ip4:192.0.2.1 ~all")
    ask = lookup_for(spf_dns)
    include_asked = asyncio.Event()

    async def lookup(name: str, rtype: str):
        if (name, rtype) == ("inc.spf.test", "TXT"):
            include_asked.set()
        elif (name, rtype) == ("mail.spf.test", "A"):
            # one after the other, the include would wait for this lookup: a timeout here
            await asyncio.wait_for(include_asked.wait(), 2)
        return await ask(name, rtype)

    report = await evaluate_spf("par.spf.test", lookup)

    assert (report.errors, report.lookups, report.policy) == ([], 2, "-all")
