from __future__ import annotations

import json

import pytest

from tests.tools.web.conftest import site_of
from toolrun.tools.web.link_preview import analyze
from toolrun.tools.web.preview import (
    extract_preview,
    icon_candidates,
    normalize_date,
    oembed_links,
    og_images,
)

URL = "https://example.test/blog/post"


def doc(head: str = "", body: str = "<p>x</p>", lang: str = "") -> str:
    attr = f' lang="{lang}"' if lang else ""
    return f"<!doctype html><html{attr}><head>{head}</head><body>{body}</body></html>"


def field(html: str, name: str) -> tuple[object, str | None]:
    preview = extract_preview(site_of(html, URL))
    return preview.fields[name], preview.sources.get(name)


def ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        (
            doc(
                '<meta property="og:title" content="OG"><meta name="twitter:title" content="TW"><title>T</title>'
            ),
            ("OG", "og:title"),
        ),
        (doc('<meta name="twitter:title" content="TW"><title>T</title>'), ("TW", "twitter:title")),
        (doc("<title> Page   title </title>"), ("Page title", "<title>")),
        (doc(ld({"@type": "Article", "headline": "LD"})), ("LD", "json-ld headline")),
        (doc(body='<h1 class="entry-title">Entry</h1>'), ("Entry", ".entry-title")),
        (doc(), (None, None)),
    ],
)
def test_title_fallbacks(html: str, expected: tuple[object, str | None]) -> None:
    assert field(html, "title") == expected


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (
            '<meta name="description" content="M"><meta property="og:description" content="OG">',
            ("OG", "og:description"),
        ),
        ('<meta name="description" content="M">', ("M", "meta description")),
        ('<meta itemprop="description" content="I">', ("I", "itemprop description")),
        (ld({"@type": "Article", "description": "LD"}), ("LD", "json-ld description")),
    ],
)
def test_description_fallbacks(head: str, expected: tuple[object, str | None]) -> None:
    assert field(doc(head), "description") == expected


@pytest.mark.parametrize(
    ("head", "body", "expected"),
    [
        (
            '<meta property="og:image" content="/og.png"><meta property="og:image:secure_url" content="https://cdn.test/s.png">',
            "",
            ("https://cdn.test/s.png", "og:image:secure_url"),
        ),
        (
            '<meta property="og:image" content="../og.png">',
            "",
            ("https://example.test/og.png", "og:image"),
        ),
        (
            '<meta name="twitter:image" content="tw.png">',
            "",
            ("https://example.test/blog/tw.png", "twitter:image"),
        ),
        (
            ld({"@type": "Article", "image": [{"url": "/ld.png"}]}),
            "",
            ("https://example.test/ld.png", "json-ld image"),
        ),
        (
            "",
            '<img src="hidden.png" aria-hidden="true"><img src="/first.png">',
            ("https://example.test/first.png", "first img"),
        ),
        (
            '<meta property="og:image" content="/clip.mp4">',
            '<img src="/still.png">',
            ("https://example.test/still.png", "first img"),
        ),
        ('<meta property="og:image" content="javascript:alert(1)">', "", (None, None)),
    ],
)
def test_image_fallbacks_are_absolute(
    head: str, body: str, expected: tuple[object, str | None]
) -> None:
    assert field(doc(head, body), "image") == expected


def test_other_fields() -> None:
    head = (
        '<meta property="og:site_name" content="Acme"><meta property="og:locale" content="pt_BR">'
        '<meta property="og:url" content="/canonical-ish"><link rel="canonical" href="https://example.test/c">'
        '<meta property="article:published_time" content="2026-01-02T03:04:05Z">'
        '<meta property="og:type" content="article"><meta property="og:video" content="/v.mp4">'
        + ld(
            {
                "@type": "Article",
                "dateModified": "2026-02-01",
                "author": {"name": "Ann"},
                "publisher": {
                    "@type": "Organization",
                    "name": "Acme Inc",
                    "logo": {"url": "/logo.png", "width": 60, "height": 60},
                },
            }
        )
    )
    fields = extract_preview(site_of(doc(head, lang="en"), URL)).fields
    assert fields["siteName"] == "Acme Inc"  # JSON-LD publisher first
    assert fields["lang"] == "pt"
    assert fields["url"] == "https://example.test/canonical-ish"
    assert fields["canonical"] == "https://example.test/c"
    assert fields["publishedAt"] == "2026-01-02T03:04:05+00:00"
    assert fields["modifiedAt"] == "2026-02-01T00:00:00"
    assert fields["author"] == "Ann"
    assert fields["type"] == "article"
    assert fields["video"] == "https://example.test/v.mp4"
    assert fields["logo"] == "https://example.test/logo.png"


def test_non_square_json_ld_logo_is_skipped_and_title_suffix_names_site() -> None:
    head = "<title>Post - Acme</title>" + ld(
        {"@type": "Organization", "logo": {"url": "/wide.png", "width": 600, "height": 60}}
    )
    fields = extract_preview(site_of(doc(head), URL)).fields
    assert fields["logo"] is None
    assert fields["siteName"] == "Acme"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-02", "2026-01-02T00:00:00"),
        ("2026-01-02T03:04:05Z", "2026-01-02T03:04:05+00:00"),
        (1767225600, "2026-01-01T00:00:00+00:00"),
        ("1767225600000", "2026-01-01T00:00:00+00:00"),
        ("yesterday", None),
        ("", None),
    ],
)
def test_normalize_date(value: object, expected: str | None) -> None:
    assert normalize_date(value) == expected


def test_icon_ranking_square_first_then_priority() -> None:
    head = (
        '<link rel="shortcut icon" href="/favicon.ico">'
        '<link rel="icon" href="/favicon-32x32.png">'
        '<link rel="apple-touch-icon" href="/apple.png" sizes="180x180">'
        '<link rel="icon" href="/wide.png" sizes="300x100">'
        '<link rel="icon" href="/vector.svg" sizes="any">'
        '<meta name="msapplication-TileImage" content="/mstile-144x144.png">'
        '<meta name="msapplication-TileColor" content="#ffffff">'
    )
    ranked = [c.url.rsplit("/", 1)[1] for c in icon_candidates(site_of(doc(head), URL).page)]
    assert ranked == [
        "apple.png",
        "mstile-144x144.png",
        "favicon-32x32.png",
        "vector.svg",
        "favicon.ico",
        "wide.png",
    ]


def test_og_images_zip_structured_properties() -> None:
    head = (
        '<meta property="og:image" content="/a.png"><meta property="og:image:width" content="10">'
        '<meta property="og:image" content="/b.png"><meta property="og:image:alt" content="B">'
    )
    assert og_images(site_of(doc(head), URL)) == [
        {"url": "https://example.test/a.png", "width": "10"},
        {"url": "https://example.test/b.png", "alt": "B"},
    ]


def test_oembed_discovery() -> None:
    head = (
        '<link rel="alternate" type="text/xml+oembed" href="/o.xml">'
        '<link rel="alternate" type="application/json+oembed" href="/o.json?url=x">'
    )
    assert oembed_links(site_of(doc(head), URL).page) == [
        {"url": "https://example.test/o.json?url=x", "format": "json"},
        {"url": "https://example.test/o.xml", "format": "xml"},
    ]


def test_analyze_without_probes_falls_back_to_favicon_ico() -> None:
    result = analyze(site_of(doc('<meta name="theme-color" content="#123456">'), URL))
    assert result.favicon is not None
    assert result.favicon.url == "https://example.test/favicon.ico"
    assert result.logo == "https://example.test/favicon.ico"
    assert result.sources["logo"] == "favicon"
    assert result.theme_color == "#123456"
    data = result.model_dump(by_alias=True)
    assert {
        "finalUrl",
        "statusCode",
        "fetchedAt",
        "timingMs",
        "siteName",
        "oEmbed",
        "themeColor",
    } <= set(data)
