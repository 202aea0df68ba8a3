"""The shared page facts give what the selectors and list operations they replace give."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from tests.tools.web.conftest import site_of
from toolrun.tools.web.checks.geo import _SPA_ROOTS, _app_roots
from toolrun.tools.web.checks.keywords import _PUNCTUATION, STOPWORDS, _phrases, usable_terms
from toolrun.tools.web.checks.links import (
    LinkCounts,
    _host_of,
    _is_printable,
    _phrase_of,
    _tally_hrefs,
    link_facts,
    phrase_candidates,
)
from toolrun.tools.web.css import has_token_ci, starting_ci, starts_with_ci
from toolrun.tools.web.page import _SELECTORS, Page
from toolrun.tools.web.sitemap import parse_sitemap

TEXTS = [
    "",
    " ",
    "one",
    "  two words  ",
    "tab\tand\nnewline\r",
    "no\xa0break\u2003em\u3000ideographic",
    "\x1cfile\x1dseparators\x1e\x1f",
    "zero\u200bwidth is not a space",
    "caf\xe9 \u6771\u4eac",
]


@pytest.mark.parametrize("text", TEXTS)
def test_word_facts_match_split(text: str) -> None:
    page = Page.from_html(f"<body><p>{text}</p><p>{text}</p></body>")
    words = page.body_text.split()
    assert page.word_count == len(words)
    assert page.text_length == len(" ".join(words))
    assert page.word_counts(3, 2) == (dict(Counter(words[:3])), words[:2])
    assert page.text_prefix(7) == " ".join(words)[:7]


def test_text_prefix_of_a_long_text() -> None:
    body = "".join(f"<p>word{index}\n\n  end</p>" for index in range(5000))
    page = Page.from_html(f"<body>{body}</body>")
    assert page.text_prefix(10_000) == " ".join(page.body_text.split())[:10_000]


@pytest.mark.parametrize(
    "value",
    [
        "JavaScript:x",
        "javascript",
        "java\u212ascript",
        "JAVASCR\u0130PT:x",
        "fILE:/x",
        "http://a",
        "HTTP:x",
        "https://a",
        " http:x",
    ],
)
@pytest.mark.parametrize("prefix", ["javascript", "file:", "http:", "https://"])
def test_starts_with_ci_is_the_css_prefix_match(value: str, prefix: str) -> None:
    node = LexborHTMLParser(f'<a href="{value}">x</a>').css_first("a")
    assert node is not None
    assert starts_with_ci(value, prefix) is node.css_matches(f'[href^="{prefix}" i]')


@pytest.mark.parametrize(
    "value",
    [
        "nofollow",
        "NoFollow noopener",
        "a\tnofollow",
        "a\x0cnofollow",
        "a\x0bnofollow",
        "nofollow\xa0x",
        "nofoll\u212aow",
        "nofollowed",
        "",
    ],
)
def test_has_token_ci_is_the_css_word_match(value: str) -> None:
    node = LexborHTMLParser(f'<a rel="{value}" href="/">x</a>').css_first("a")
    assert node is not None
    assert has_token_ci(value, "nofollow") is node.css_matches('[rel~="nofollow" i]')


MIXED = """<!doctype html><html><head><title>t</title><meta name=a content=b>
<link rel=icon href=/i.png><base href=/b/><noscript><link rel=stylesheet href=/n.css></noscript>
</head><body><h2>x</h2><a href=/a>a</a><template><a href=/t>t</a><h1>t</h1></template>
<svg><a href=/s>s</a><title>svg</title></svg><h1>y</h1><img src=/i><form action=/f>
<input><select></select><textarea></textarea></form><video src=/v></video><iframe src=/f>
</iframe><noscript><img src=/n.png><h3>n</h3></noscript><ul><li>l</li></ul><ol></ol><table>
<tr><td>c</td></tr></table><details><summary>s</summary></details><dl><dt>d</dt></dl>
<label for=x>l</label><button>b</button><time datetime=2020-01-01>t</time><main></main>
<article></article><section></section><nav></nav><aside></aside><header></header>
<footer></footer><audio src=/a></audio><source src=/s></body></html>"""


@pytest.mark.parametrize("indexed", [False, True])
def test_elements_are_what_their_selectors_find(indexed: bool) -> None:
    page = Page.from_html(MIXED)
    if indexed:
        page.elements("a")  # a dense list: indexes every tag in one walk
    for name, selector in _SELECTORS.items():
        expected = [node.mem_id for node in page.tree.css(selector)]
        assert [node.mem_id for node in page.elements(name)] == expected, name


def test_index_elements_reads_what_the_lazy_facts_read() -> None:
    html = MIXED.replace(
        "</body>", '<svg><a href="/svg">s</a></svg><math><a href=/m>m</a></math></body>'
    )
    lazy, read = Page.from_html(html), Page.from_html(html)
    lazy.elements("heading")  # indexes without reading
    read.index_elements()
    facts = ("anchor_attrs", "anchor_hrefs", "anchor_rels", "anchor_texts", "images")
    for fact in (*facts, "image_columns"):
        assert getattr(read, fact) == getattr(lazy, fact), fact
    assert read.image_srcs == lazy.image_srcs
    root = read.tree.root
    assert root is not None
    for tag in ("a", "img"):  # not kept by the reading walk: found again by tag
        walked = [node.mem_id for node in root.traverse() if node.tag == tag]
        assert [node.mem_id for node in read.elements(tag)] == walked
    assert len(read.anchor_nodes) == len(read.anchor_texts) == 4


HIDDEN_IN_LINKS = """<a href=/s>buy<script>track()</script></a><a href=/y>see<style>.a{}</style></a>
<a href=/n>click<noscript>here</noscript></a><noscript><noscript><a href=/nn>x</a></noscript>
<script type="application/ld+json">{"@type": "Person"}</script><h2>n</h2></noscript>
<template><a href=/t>t</a><script src=/t.js></script></template><svg><style>s</style></svg>"""


def test_one_walk_finds_and_removes_the_hidden_elements() -> None:
    html = MIXED.replace("</body>", HIDDEN_IN_LINKS + "</body>")
    merged, apart = Page.from_html(html), Page.from_html(html)
    merged.index_elements()  # the hidden elements found in the index walk
    assert apart.tree is not None  # removed first, by a selector walk
    apart.index_elements()
    for fact in ("script_count", "json_ld_blocks", "external_scripts", "noscript_text"):
        assert getattr(merged, fact) == getattr(apart, fact), fact
    assert merged.anchor_texts == apart.anchor_texts
    assert merged.anchor_attrs == apart.anchor_attrs
    assert merged.heading_levels == apart.heading_levels
    assert merged.heading_texts == apart.heading_texts
    assert merged.count("ul") == apart.count("ul") == 1
    for name in _SELECTORS:
        assert [n.attributes for n in merged.elements(name)] == [
            n.attributes for n in apart.elements(name)
        ], name
    assert merged.body_text == apart.body_text
    assert "track" not in " ".join(merged.anchor_texts)


def test_elements_skip_removed_noscript_and_template_content() -> None:
    page = Page.from_html(MIXED)
    assert [node.attributes.get("href") for node in page.elements("a")] == ["/a", "/s"]
    assert [node.attributes.get("src") for node in page.elements("img")] == ["/i"]
    assert page.heading_levels == [2, 1]


def test_phrase_candidates_include_every_phrase_and_url() -> None:
    texts = [
        "here",
        " Click\n here ",
        "click \u2003here",
        "click\xa0here",
        "https://a.test/",
        "HTTP://A.TEST",
        "x" * 70 + "\n",
        "pricing plans",
        "more  info",
        "mer info",
    ]
    candidates = set(phrase_candidates(texts))
    assert {i for i, text in enumerate(texts) if _phrase_of(text) is not None} <= candidates
    assert 7 not in candidates


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Example.test/a", "example.test"),
        ("https://example.test", "example.test"),
        ("http://user:pw@example.test:8080/x", "example.test"),
        ("https://[2001:DB8::1]:443/p", "[2001:db8::1]"),
        ("//cdn.test/x", "cdn.test"),
        ("https://example.test?q", "example.test?q"),  # as the former split("/") reading did
    ],
)
def test_host_of(url: str, host: str) -> None:
    assert _host_of(url, "https") == host


def test_link_counts_by_href_shape() -> None:
    links = [
        "/a",
        "page.html",
        "?q",
        "",
        "//example.test/x",
        "https://EXAMPLE.test/",
        "HTTP://other.test/",
        "https://localhost/x",
        "http://127.0.0.1:8000/",
        "mailto:x@y.test",
        "httpx://weird",
    ]
    body = "".join(f'<a href="{href}">{index}</a>' for index, href in enumerate(links))
    body += '<a>no href</a><a href="/n" rel="NoFollow">n</a><a href="http://x.test" rel=x>x</a>'
    counts = link_facts(site_of(f"<body>{body}</body>", "https://example.test/page")).counts
    assert (counts.internal, counts.external, counts.nofollow_internal) == (7, 4, 1)
    assert counts.local == ["https://localhost/x", "http://127.0.0.1:8000/"]
    assert counts.insecure == ["HTTP://other.test/", "http://127.0.0.1:8000/", "http://x.test"]


@pytest.mark.parametrize(
    ("xml", "locations", "lastmods"),
    [
        ("<urlset><url><loc> https://a.test/ </loc></url></urlset>", ["https://a.test/"], 0),
        (
            "<urlset><loc><![CDATA[https://a.test/?a=1&b=2]]> </loc></urlset>",
            ["https://a.test/?a=1&b=2"],
            0,
        ),
        ("<urlset><loc>a<b</loc><loc>x&amp;y</loc></urlset>", ["a<b", "x&y"], 0),
        (
            "<urlset><sm:loc>https://a.test/</sm:loc><LOC >u</LOC></urlset>",
            ["https://a.test/", "u"],
            0,
        ),
        ("<urlset><loc>unterminated", [], 0),
        (
            "<urlset><loc>u</loc><lastmod>2025</lastmod><la\u017ftmod>1</la\u017ftmod></urlset>",
            ["u"],
            2,
        ),
    ],
)
def test_sitemap_locations(xml: str, locations: list[str], lastmods: int) -> None:
    sitemap = parse_sitemap(xml)
    assert (sitemap.locations, sitemap.lastmod_count) == (locations, lastmods)


def test_sitemap_lists_ignores_case_fragment_and_trailing_slash() -> None:
    sitemap = parse_sitemap("<urlset><loc>https://A.test/Page/</loc></urlset>")
    assert sitemap.lists("https://a.test/page#top")
    assert not sitemap.lists("https://a.test/other")


SPELLINGS = [
    ("<p lang=de>x</p>", 1),
    ('<p title="x"lang="de">x</p>', 1),
    ("<p/lang>x</p>", 1),
    ("<p\nLANG=de>x</p>", 1),
    ('<p hreflang="de" xml:lang="de" data-lang=x>lang</p>', 0),
    ("<lang>x</lang>", 0),
    ("<p> lang in text</p>", 1),  # counted, though text: the count is an upper bound
]


@pytest.mark.parametrize(("body", "count"), SPELLINGS)
def test_attribute_spellings(body: str, count: int) -> None:
    page = Page.from_html(f"<body>{body}</body>")
    assert page.attribute_spellings("lang", 5) == count
    if count == 0:
        assert page.tree.css_first("[lang]") is None


@pytest.mark.parametrize(
    ("html", "below"),
    [
        ('<html lang="en"><head><link rel=alternate hreflang=de href=/de></head><p>x</p>', False),
        ('<html lang="en"><p lang="de">x</p>', True),
        ("<html><p lang=de>x</p>", True),
        ('<html lang="en"><p xml:lang="de">x</p>', False),
        ('<html lang="en"><body lang="de"><p>x</p>', False),
        ("<html><p>lang</p>", False),
    ],
)
def test_has_lang_below_root(html: str, below: bool) -> None:
    page = Page.from_html(html)
    assert page.has_lang_below_root is below
    assert below is (page.tree.css_first("body [lang]") is not None)


@pytest.mark.parametrize(
    "body",
    [
        '<div id="app">x</div>',
        "<div id=ROOT>x</div>",
        "<div id = '__next'>x</div>",
        '<div id="r&#111;ot">x</div>',
        '<div id="app ">x</div>',
        "<div id=app/>x</div>",
        '<script src="/app.js"></script><p>app root</p>',
    ],
)
def test_app_roots_are_what_the_selector_finds(body: str) -> None:
    for doctype in ("", "<!doctype html>"):  # quirks mode compares ids case-insensitively
        page = Page.from_html(f"{doctype}<body>{body}</body>")
        ids = [node.id or "" for node in page.tree.css("[id]")]
        named = any(value.lower() in {"root", "app", "__next"} for value in ids)
        expected = page.tree.css(_SPA_ROOTS) if named else []
        found = _app_roots(page)
        assert [n.mem_id for n in found] == [n.mem_id for n in expected], (doctype, body)


@pytest.mark.parametrize(
    "values",
    [
        ["http://a", "HTTP:x", "https://b", "", " http:x", "Http:y", "htt\u0440:z"],
        ["a\0b", "http:\0c", "http:d"],  # a NUL: tested one by one
        [],
    ],
)
def test_starting_ci(values: list[str]) -> None:
    assert starting_ci(values, "http:") == [v for v in values if starts_with_ci(v, "http:")]


def test_link_counts_match_the_href_loop() -> None:
    hrefs = [
        "https://example.test  /x",
        "https://example.test  ",
        "https://Example.Test:443",
        "https://u@example.test/",
        "//example.test",
        "HTTP://localhost:1/",
        "hTTp:rel",
        "mailto:a@b",
        "http://[::1]/",
        "/p",
    ]
    body = "".join(f'<a href="{href}">x</a>' for href in hrefs)
    site = site_of(f"<body>{body}</body>", "https://example.test/page")
    counts = link_facts(site).counts
    expected = LinkCounts()
    rest = [h for h in hrefs if ":" in h or h.startswith("//")]
    insecure = _tally_hrefs(expected, rest, "example.test", "https")
    expected.internal += len(hrefs) - len(rest)
    assert (counts.internal, counts.external, counts.local) == (
        expected.internal,
        expected.external,
        expected.local,
    )
    assert counts.insecure == [site.page.resolve(href) for href in insecure]


def _pairwise_phrases(words: list[str]) -> Counter[str]:
    """The former implementation: clean every word, count every usable pair."""
    cleaned = [w.lower().strip(_PUNCTUATION) for w in words]
    usable = [w if len(w) > 2 and w not in STOPWORDS else None for w in cleaned]
    return Counter(f"{a} {b}" for a, b in pairwise(usable) if a is not None and b is not None)


def test_phrases_count_what_pairs_of_cleaned_words_count() -> None:
    words = [
        "The",
        "Rocket",
        "rocket,",
        "burns;",
        "the",
        "ROCKET",
        "burns",
        "fuel.",
        "Fuel",
        "burns!",
        "rocket",
        "burns",
    ]
    words += ["\u03a3\u03a3", "\u03c3\u03c2", "x"] * 3
    assert list(_phrases(words).items()) == list(_pairwise_phrases(words).items())
    assert _phrases(words).most_common(3) == _pairwise_phrases(words).most_common(3)


LINK_TEXTS = [
    "here",
    "Here ",
    "read more",
    "Read  More",
    "click\u2003here",
    "hier",
    "続きを読む",
    "pricing plans",
    "the stage 4 manual",
    "https://a.test/",
    " HTTP://A.TEST",
    "",
    " ",
    "see http://a.test",
    "x" * 70,
    "more\ninformation",
]


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.sampled_from(LINK_TEXTS)))
def test_phrase_candidates_hold_every_text_the_rule_accepts(texts: list[str]) -> None:
    candidates = phrase_candidates(texts)
    assert candidates == sorted(set(candidates))
    assert {i for i, text in enumerate(texts) if _phrase_of(text) is not None} <= set(candidates)


@pytest.mark.parametrize(
    "text", ["", "plain text", "tab\there", "bell\x07", "del\x7f", "caf\u00e9", "a\u2028b"]
)
def test_is_printable_is_str_isprintable(text: str) -> None:
    assert _is_printable(text) is text.isprintable()


@settings(max_examples=200, deadline=None)
@given(
    tokens=st.lists(
        st.sampled_from(
            ["The", "the.", "rockets,", "ROCKETS", "ab", "(x)", "42", "\u00e9t\u00e9", "--"]
        )
    )
)
def test_usable_terms_clean_each_token_once(tokens: list[str]) -> None:
    expected = {}
    for token in tokens:
        term = token.lower().strip(_PUNCTUATION)
        expected[token] = term if len(term) > 2 and term not in STOPWORDS else None
    assert list(usable_terms(tokens).items()) == list(expected.items())
