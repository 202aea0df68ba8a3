"""The shared page facts give what the selectors and list operations they replace give."""

from __future__ import annotations

import sys

import pytest
from selectolax.lexbor import LexborHTMLParser

from tests.tools.web.conftest import site_of
from toolrun.tools.web.checks.links import _host_of, _phrase_of, link_facts, phrase_candidates
from toolrun.tools.web.css import has_token_ci, starts_with_ci
from toolrun.tools.web.page import _SELECTORS, UNICODE_SPACES, Page
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


def test_unicode_spaces_are_what_str_split_splits_on() -> None:
    beyond_ascii = (chr(code) for code in range(128, sys.maxunicode + 1))
    assert "".join(char for char in beyond_ascii if char.isspace()) == UNICODE_SPACES


@pytest.mark.parametrize("text", TEXTS)
def test_word_facts_match_split(text: str) -> None:
    page = Page.from_html(f"<body><p>{text}</p><p>{text}</p></body>")
    words = page.body_text.split()
    assert page.word_count == len(words)
    assert page.text_length == len(" ".join(words))
    assert page.leading_words(3) == words[:3]
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


def test_elements_skip_removed_noscript_and_template_content() -> None:
    page = Page.from_html(MIXED)
    assert [node.attributes.get("href") for node in page.elements("a")] == ["/a", "/s"]
    assert [node.attributes.get("src") for node in page.elements("img")] == ["/i"]
    assert [level for level, _ in page.heading_nodes] == [2, 1]


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
