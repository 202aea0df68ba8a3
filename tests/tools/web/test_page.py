from __future__ import annotations

import codecs

import pytest

from toolrun.tools.web.page import Page, decode_html, header_charset, meta_charset


@pytest.mark.parametrize(
    ("body", "declared", "expected_text", "expected_codec"),
    [
        ("<p>日本語のページ</p>".encode("shift_jis"), "shift_jis", "日本語のページ", "shift_jis"),
        ('<meta charset="gbk"><p>中文网页</p>'.encode("gbk"), None, "中文网页", "gbk"),
        (codecs.BOM_UTF8 + "<p>é</p>".encode(), "iso-8859-1", "é", "utf-8"),
        ("<p>café</p>".encode("latin-1"), None, "café", None),
        ("<p>café</p>".encode(), "no-such-codec", "café", "utf-8"),
    ],
)
def test_decode_html(
    body: bytes, declared: str | None, expected_text: str, expected_codec: str | None
) -> None:
    text, codec = decode_html(body, declared)
    assert expected_text in text
    if expected_codec:
        assert codec == codecs.lookup(expected_codec).name


def test_charset_helpers() -> None:
    assert header_charset('text/html; charset="UTF-8"') == "utf-8"
    assert header_charset("text/html") is None
    assert (
        meta_charset(b'<meta http-equiv="Content-Type" content="text/html; charset=windows-1252">')
        == "windows-1252"
    )
    assert meta_charset(b" " * 2000 + b"<meta charset=utf-8>") is None


def test_page_facts() -> None:
    page = Page.from_html(
        "<!-- c --><!DOCTYPE html><html lang=fr><head><base href='/base/'><title> Le  titre </title>"
        "<meta NAME=Description content=' d '><script type='application/ld+json'>{}</script>"
        "<script>var hidden = 'words words';</script><style>p{}</style></head>"
        "<body><p>Un deux trois, l'été</p><noscript>enable js</noscript>"
        "<template><p>not rendered</p></template><a href='x'>lien</a></body></html>",
        "https://example.test/a/b",
    )
    assert page.has_doctype
    assert page.title == "Le titre"
    assert page.meta("description") == "d"
    assert page.lang == "fr"
    assert page.json_ld_blocks == ["{}"]
    assert page.script_count == 2
    assert page.text == "Un deux trois, l'été lien"
    assert page.word_count == 5
    assert page.noscript_text == "enable js"
    assert page.base_url == "https://example.test/base/"
    assert page.anchors[0].href == "https://example.test/base/x"
    assert page.resolve("javascript:void(0)") is None
    assert page.origin == "https://example.test"


def test_missing_doctype_and_header_lookup() -> None:
    page = Page.from_html(
        "<html><p>x</p>", headers=[("X-Robots-Tag", "noindex"), ("x-robots-tag", "nofollow")]
    )
    assert not page.has_doctype
    assert page.header("x-robots-tag") == "noindex"
    assert page.header_values("X-Robots-Tag") == ["noindex", "nofollow"]


def test_nested_hidden_elements_are_removed() -> None:
    page = Page.from_html(
        "<html><head><noscript><style>p{}</style></noscript></head><body><p>kept</p>"
        "<noscript><script>x()</script><p>no js</p></noscript>"
        "<template><script>y()</script></template><style>b{}</style></body></html>"
    )
    assert page.text == "kept"
    assert "no js" in page.noscript_text
