"""sitemap.xml, llms.txt and JSON-LD parsing."""

from __future__ import annotations

import json

import pytest

from toolrun.tools.web.llms_txt import parse_llms_txt
from toolrun.tools.web.sitemap import parse_sitemap
from toolrun.tools.web.structured_data import extract

GOOD_LLMS = """# Acme

> Acme makes rockets and publishes their manuals.

Some notes.

## Docs

- [Quick start](https://acme.test/start.md): how to launch
- [API](/api.md)

## Optional

- [History](https://acme.test/history.md)
"""


def test_llms_txt_well_formed() -> None:
    llms = parse_llms_txt(GOOD_LLMS)
    assert llms.valid
    assert not llms.advice
    assert llms.title == "Acme"
    assert llms.summary == "Acme makes rockets and publishes their manuals."
    assert llms.sections == ["Docs", "Optional"]
    assert len(llms.links) == 3


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[a](https://x.test) " + "x" * 60, "missing a required H1"),
        ("# Title\n\n" + "no links here " * 10, "does not appear to contain any links"),
        ("# T\n[a](/b)", "suspiciously short"),
        ("<!doctype html><html><body># A</body></html>", "HTML page"),
    ],
)
def test_llms_txt_lighthouse_errors(text: str, error: str) -> None:
    assert any(error in message for message in parse_llms_txt(text).errors)


def test_llms_txt_advice_for_structure() -> None:
    llms = parse_llms_txt("Intro line\n# Title\n" + "[a](relative.md) " * 5)
    assert llms.valid
    assert any("first line" in a for a in llms.advice)
    assert any("blockquote" in a for a in llms.advice)
    assert any("root-relative" in a for a in llms.advice)


def test_llms_served_as_html_content_type() -> None:
    assert not parse_llms_txt(GOOD_LLMS, "text/html").valid


def test_sitemap_urlset() -> None:
    text = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://a.test/</loc><lastmod>2026-01-01</lastmod></url>"
        "<url><loc> https://a.test/b?x=1&amp;y=2 </loc></url></urlset>"
    )
    sitemap = parse_sitemap(text)
    assert sitemap.kind == "urlset"
    assert sitemap.locations == ["https://a.test/", "https://a.test/b?x=1&y=2"]
    assert sitemap.lists("https://a.test")
    assert sitemap.lastmod_count == 1


@pytest.mark.parametrize(
    ("text", "kind", "count"),
    [
        (
            "<sitemapindex><sitemap><loc>https://a.test/s1.xml</loc></sitemap></sitemapindex>",
            "sitemapindex",
            1,
        ),
        (
            "<ns:urlset xmlns:ns='x'><ns:url><ns:loc>https://a.test/</ns:loc></ns:url></ns:urlset>",
            "urlset",
            1,
        ),
        ("https://a.test/\nhttps://a.test/b\n", "text", 2),
        ("<!doctype html><html><body>app</body></html>", "invalid", 0),
        (
            '<!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url></urlset>',
            "urlset",
            1,
        ),
    ],
)
def test_sitemap_kinds(text: str, kind: str, count: int) -> None:
    sitemap = parse_sitemap(text)
    assert (sitemap.kind, sitemap.url_count) == (kind, count)


def test_json_ld_graph_types_and_required_properties() -> None:
    block = json.dumps(
        {
            "@context": "https://schema.org",
            "@graph": [
                {"@type": "Organization", "name": "Acme", "url": "https://acme.test"},
                {"@type": "BlogPosting", "headline": "Hi"},
                {"@type": ["Product", "Thing"], "name": "Rocket", "offers": {"price": 1}},
                {"@type": "http://schema.org/FAQPage"},
            ],
        }
    )
    data = extract([block])
    assert data.types == ["Organization", "BlogPosting", "Product", "Thing", "FAQPage"]
    missing = {"/".join(e.types): e.missing for e in data.entities}
    assert missing == {
        "Organization": [],
        "BlogPosting": ["author"],
        "Product/Thing": [],
        "FAQPage": ["mainEntity"],
    }
    assert data.first_value("headline") == "Hi"


def test_json_ld_alternatives_and_errors() -> None:
    data = extract(
        [
            '{"@type": "Product", "name": "x"}',
            "{not json",
            '<!-- {"@type": "Person", "name": "Ann",} -->',
            "",
        ]
    )
    assert data.entities[0].missing == ["offers|review|aggregateRating"]
    assert data.entities[1].types == ["Person"]
    assert data.entities[1].missing == []
    assert [e.split(":")[0] for e in data.errors] == ["block 2", "block 4"]
