"""whois-lookup against WHOIS servers on loopback: referrals, quirks, caps and failures."""

from __future__ import annotations

import time

import pytest

from tests.servers.whois import Behaviour, WhoisChain, WhoisServer
from tests.tools.domain.support import context, whois_sample
from toolrun.config import Settings
from toolrun.tools.base import ToolFailure
from toolrun.tools.domain.models import DomainInput
from toolrun.tools.domain.whois_lookup import DEFINITION, run, whois_lookup

ROOT_COM = whois_sample("iana-com.txt")
REGISTRY = whois_sample("verisign-example.com.txt")
REGISTRAR = whois_sample("registrar-example.com.txt")


def root_referring_to(server: str) -> WhoisServer:
    return WhoisServer(
        default=f"% IANA WHOIS server\n\nrefer:        {server}\n\ndomain:       TLD\n"
    )


async def test_follows_iana_registry_and_registrar():
    registry = WhoisServer({"domain example.com": REGISTRY})
    registrar = WhoisServer({"example.com": REGISTRAR})
    root = WhoisServer({"example.com": ROOT_COM})
    servers = {"whois.verisign-grs.com": registry, "whois.registrar.test": registrar}
    async with WhoisChain(servers, root=root) as chain:
        result = await run(DomainInput(domain="www.Example.COM"), context(chain.settings()))
    assert [h.query for h in result.hops] == ["example.com", "domain example.com", "example.com"]
    assert [h.server for h in result.hops] == [
        "127.0.0.1",
        "whois.verisign-grs.com",
        "whois.registrar.test",
    ]
    assert result.registered is True
    assert result.domain == "example.com"
    assert result.whois_server == "whois.registrar.test"
    assert result.registrar == "RESERVED-Internet Assigned Numbers Authority"
    assert result.registrar_iana_id == "376"
    assert result.expires_at == "2025-08-13T04:00:00Z"
    assert result.created_at == "1995-08-14T04:00:00Z"
    assert result.status[0] == "clientDeleteProhibited"
    assert result.nameservers == ["a.iana-servers.net", "b.iana-servers.net"]
    assert result.dnssec == "signed"
    assert result.registrant.organization == "Internet Assigned Numbers Authority"
    assert result.registrant.country == "US"
    assert result.abuse_contact.email == "abusecomplaints@registrar.test"
    assert result.hops[1].text.startswith("   Domain Name: EXAMPLE.COM")
    assert "www.example.com is part of the registered domain example.com" in result.notes
    dumped = result.model_dump(by_alias=True)
    assert {"registrarIanaId", "whoisServer", "createdAt", "abuseContact"} <= dumped.keys()


async def test_verisign_host_objects_are_singled_out_with_equals():
    registry = WhoisServer(
        {"domain example.com": whois_sample("verisign-host-objects.txt"), "=example.com": REGISTRY}
    )
    root = root_referring_to("whois.verisign-grs.com")
    async with WhoisChain({"whois.verisign-grs.com": registry}, root=root) as chain:
        result = await whois_lookup("example.com", chain.settings())
    assert registry.queries[:2] == ["domain example.com", "=example.com"]
    assert result.registrar_iana_id == "376"


async def test_idn_is_asked_as_a_labels():
    registry = WhoisServer(
        {
            "xn--bcher-kva.de": "Domain: xn--bcher-kva.de\nNserver: ns1.example.net\nStatus: connect\n"
        }
    )
    async with WhoisChain(
        {"whois.denic.test": registry}, root=root_referring_to("whois.denic.test")
    ) as chain:
        result = await run(DomainInput(domain="Bücher.de"), context(chain.settings()))
    assert chain.root.queries == ["xn--bcher-kva.de"]
    assert registry.queries == ["xn--bcher-kva.de"]
    assert result.unicode_name == "bücher.de"
    assert result.registered is True
    assert result.nameservers == ["ns1.example.net"]


async def test_no_match_means_not_registered():
    registry = WhoisServer(default=whois_sample("not-found-verisign.txt"))
    root = root_referring_to("whois.registry.test")
    async with WhoisChain({"whois.registry.test": registry}, root=root) as chain:
        result = await whois_lookup("unregistered-name-4242.com", chain.settings())
    assert result.registered is False
    assert result.whois_server == "whois.registry.test"
    assert result.registrar is None


async def test_denic_free_status_is_not_registered():
    registry = WhoisServer(default=whois_sample("not-found-denic.txt"))
    async with WhoisChain(
        {"whois.denic.test": registry}, root=root_referring_to("whois.denic.test")
    ) as chain:
        result = await whois_lookup("unregistered-name-4242.de", chain.settings())
    assert result.registered is False


@pytest.mark.parametrize("sample", ["rate-limited-pir.txt", "rate-limited-top.txt"])
async def test_rate_limit_fails_the_job(sample):
    registry = WhoisServer(default=whois_sample(sample))
    async with WhoisChain(
        {"whois.registry.test": registry}, root=root_referring_to("whois.registry.test")
    ) as chain:
        with pytest.raises(ToolFailure) as caught:
            await whois_lookup("example.org", chain.settings())
    assert caught.value.code == 400
    assert "rate limit" in caught.value.message


async def test_referral_loop_stops():
    looping = REGISTRY.replace(b"whois.registrar.test", b"whois.registry.test")
    registry = WhoisServer(default=looping)
    async with WhoisChain(
        {"whois.registry.test": registry}, root=root_referring_to("whois.registry.test")
    ) as chain:
        result = await whois_lookup("example.com", chain.settings())
    assert len(result.hops) == 2
    assert len(registry.queries) == 1


async def test_referral_depth_is_limited():
    names = [f"whois.hop{i}.test" for i in range(6)]
    servers = {
        name: WhoisServer(default=f"refer: {names[i + 1] if i + 1 < len(names) else 'none'}\n")
        for i, name in enumerate(names)
    }
    async with WhoisChain(servers, root=root_referring_to(names[0])) as chain:
        result = await whois_lookup("example.com", chain.settings())
    assert len(result.hops) == 4
    assert result.registered is None
    assert all(not s.queries for s in list(servers.values())[3:])


async def test_unreachable_registrar_keeps_the_registry_answer():
    registry = WhoisServer({"domain example.com": REGISTRY})
    root = root_referring_to("whois.verisign-grs.com")
    # whois.registrar.test is not in the loopback DNS: the referral cannot be followed
    async with WhoisChain({"whois.verisign-grs.com": registry}, root=root) as chain:
        result = await whois_lookup("example.com", chain.settings())
    assert result.registered is True
    assert result.expires_at == "2025-08-13T04:00:00Z"
    assert any("could not be asked" in note for note in result.notes)


async def test_silent_server_times_out_within_the_cap():
    async with WhoisServer(behaviour=Behaviour.SILENT) as server:
        settings = Settings(
            allow_private_networks=True,
            whois_server=(server.host, server.port),
            http_timeout_s=0.5,
            _env_file=None,
        )
        started = time.monotonic()
        with pytest.raises(ToolFailure) as caught:
            await whois_lookup("example.com", settings)
    assert time.monotonic() - started < 3
    assert caught.value.code == 400


async def test_stalled_server_answer_is_kept():
    async with WhoisServer(default=REGISTRY, behaviour=Behaviour.STALL) as server:
        settings = Settings(
            allow_private_networks=True,
            whois_server=(server.host, server.port),
            http_timeout_s=0.5,
            _env_file=None,
        )
        result = await whois_lookup("example.com", settings)
    assert result.registered is True
    assert result.hops[0].complete is False


async def test_flooding_server_hits_the_size_cap():
    async with WhoisServer(behaviour=Behaviour.FLOOD) as server:
        settings = Settings(
            allow_private_networks=True,
            whois_server=(server.host, server.port),
            http_timeout_s=5,
            _env_file=None,
        )
        with pytest.raises(ToolFailure) as caught:
            await whois_lookup("example.com", settings)
    assert caught.value.code == 413


async def test_loopback_server_is_refused_without_the_private_network_switch():
    async with WhoisServer(default=REGISTRY) as server:
        settings = Settings(whois_server=(server.host, server.port), _env_file=None)
        with pytest.raises(ToolFailure) as caught:
            await whois_lookup("example.com", settings)
    assert caught.value.code == 400
    assert server.queries == []


def test_definition_shape():
    assert DEFINITION.slug == DEFINITION.action == "whois-lookup"
    assert DEFINITION.aliases == ("whois",)
    assert DEFINITION.category == "domain"
    DomainInput.model_validate(DEFINITION.example)
