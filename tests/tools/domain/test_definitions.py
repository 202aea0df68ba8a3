"""The five domain tools' definitions: names, schemas and examples, and the domain input."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from toolrun.tools.domain import (
    domain_connect_link,
    rdap_lookup,
    setup_checker,
    vendor_lookup,
    whois_lookup,
)
from toolrun.tools.domain.models import DomainInput
from toolrun.tools.domain.names import registrable_domain

DEFINITIONS = [
    (whois_lookup.DEFINITION, ("whois",)),
    (rdap_lookup.DEFINITION, ("rdap",)),
    (vendor_lookup.DEFINITION, ("domain-vendor",)),
    (domain_connect_link.DEFINITION, ("domain-connect",)),
    (setup_checker.DEFINITION, ("domain-setup",)),
]


@pytest.mark.parametrize(
    ("definition", "aliases"), DEFINITIONS, ids=lambda d: getattr(d, "slug", "")
)
def test_definition(definition, aliases):
    assert definition.slug == definition.action
    assert definition.kind == "tool"
    assert definition.category == "domain"
    assert definition.aliases == aliases
    assert definition.path == f"/openapi/tools/{definition.slug}/execute"
    definition.input_model.model_validate(definition.example)
    for model in (definition.input_model, definition.output_model, definition.payload_model):
        schema = model.model_json_schema(by_alias=True)
        assert schema["type"] == "object"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Example.COM.", "example.com"),
        ("https://www.example.com/path?q=1", "www.example.com"),
        ("Bücher.de", "xn--bcher-kva.de"),
        ("  example.org  ", "example.org"),
    ],
)
def test_domain_input_normalises(text, expected):
    assert DomainInput(domain=text).domain == expected


@pytest.mark.parametrize(
    "text", ["localhost", "exa mple.com", "-bad.com", "192.0.2.1", "a..b", "_dmarc.example.com"]
)
def test_domain_input_rejects(text):
    with pytest.raises(ValidationError):
        DomainInput(domain=text)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("www.example.com", "example.com"),
        ("a.b.example.co.uk", "example.co.uk"),
        ("example.com.br", "example.com.br"),
        ("shop.example.co.jp", "example.co.jp"),
        ("example.de", "example.de"),
    ],
)
def test_registrable_domain(name, expected):
    assert registrable_domain(name) == expected
