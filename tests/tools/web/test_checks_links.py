from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tools.web.conftest import site_of
from toolrun.tools.web.checks.canonical import check_canonical, check_hreflang
from toolrun.tools.web.checks.images import check_image_alt, check_image_dimensions
from toolrun.tools.web.checks.links import (
    LinkFacts,
    _all_leave_the_page,
    check_crawlable_anchors,
    check_link_text,
    check_links,
)

PAGE = "https://example.test/page"


def doc(body: str, lang: str = "", head: str = "") -> str:
    lang_attr = f' lang="{lang}"' if lang else ""
    return f"<!doctype html><html{lang_attr}><head>{head}</head><body>{body}</body></html>"


@pytest.mark.parametrize(
    ("link", "lang", "fails"),
    [
        ('<a href="/a">click here</a>', "", True),
        ('<a href="/a">  Read MORE </a>', "en", True),
        ('<a href="/a">pricing plans</a>', "", False),
        ('<a href="/a">hier</a>', "de", True),
        ('<a href="/a">hier</a>', "en", False),  # language picks the list
        ('<a href="/a" lang="de">hier</a>', "en", True),  # the closest lang wins
        ('<a href="/a">hier</a>', "", True),  # no language: every list
        ('<a href="/a">続きを読む</a>', "ja", True),
        ('<a href="/a" rel="nofollow">click here</a>', "", False),
        ('<a href="javascript:go()">click here</a>', "", False),
        ('<a href="mailto:a@b.test">here</a>', "", False),
        ('<a href="#section">here</a>', "", False),  # same page apart from the fragment
        ('<a href="/a">https://example.test/a</a>', "", True),  # bare URL
        ('<a href="/a" aria-label="Pricing">here</a>', "", True),  # aria-label is ignored
    ],
)
def test_link_text(link: str, lang: str, fails: bool) -> None:
    check = check_link_text(site_of(doc(link, lang), PAGE))
    assert check is not None
    assert (check.status == "fail") is fails


@pytest.mark.parametrize(
    ("link", "reason"),
    [
        ('<a href="/ok">ok</a>', None),
        ('<a href="javascript:void(0)">x</a>', "javascript:void(0)"),
        ('<a href="javascript: void 0">x</a>', "javascript:void(0)"),
        ('<a href="file:///etc/passwd">x</a>', "file: URL"),
        ('<a onclick="go()">x</a>', "no href, click handler only"),
        ('<a onclick="go()" target="_blank">x</a>', None),
        ('<a role="button" onclick="go()">x</a>', None),
        ('<a name="anchor"></a>', None),
        ('<a href="mailto:x@y.test">x</a>', None),
        ('<a href="javascript:doThing()">x</a>', "javascript: URL"),
    ],
)
def test_crawlable_anchors(link: str, reason: str | None) -> None:
    check = check_crawlable_anchors(site_of(doc(link), PAGE))
    assert check is not None
    assert (check.value[0]["reason"] if check.status == "fail" else None) == reason


def test_links_hygiene() -> None:
    body = (
        '<a href="/a" rel="nofollow">a</a><a href="http://other.test/">b</a>'
        '<a href="http://localhost:3000/">c</a>'
    )
    check = check_links(site_of(doc(body), PAGE))
    assert check is not None
    assert check.status == "warn"
    assert check.value["nofollowInternal"] == 1
    assert check.value["insecure"] == ["http://other.test/", "http://localhost:3000/"]
    assert check.value["localhost"] == ["http://localhost:3000/"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ('<img src="a.png" alt="A">', "pass"),
        ('<img src="a.png" alt="">', "pass"),
        ('<img src="a.png" role="presentation">', "pass"),
        ('<img src="a.png" aria-label="A">', "pass"),
        ('<img src="a.png" title="A">', "pass"),
        ('<img src="a.png" title=" ">', "fail"),
        ('<img src="a.png">', "fail"),
        (f'<img src="a.png" alt="{"x" * 101}">', "warn"),
    ],
)
def test_image_alt(body: str, status: str) -> None:
    check = check_image_alt(site_of(doc(body), PAGE))
    assert check is not None
    assert check.status == status


def test_image_alt_reports_coverage_and_absolute_urls() -> None:
    check = check_image_alt(site_of(doc('<img src="a.png" alt="a"><img src="/b.png">'), PAGE))
    assert check is not None
    assert check.value["coveragePercent"] == 50.0
    assert check.value["withoutAlt"] == ["https://example.test/b.png"]
    assert check_image_alt(site_of(doc("<p>no images</p>"), PAGE)) is None


def test_image_dimensions() -> None:
    check = check_image_dimensions(
        site_of(doc('<img src="a.png" width="1" height="1"><img src="b.png">'))
    )
    assert check is not None
    assert check.status == "warn"
    assert check.value["unsized"] == ["b.png"]


@pytest.mark.parametrize(
    ("head", "status", "title_part"),
    [
        ("", "warn", "No canonical"),
        ('<link rel="canonical" href="https://example.test/page">', "pass", "self-referencing"),
        ('<link rel="canonical" href="/page">', "fail", "relative"),
        (
            '<link rel="canonical" href="https://example.test/a"><link rel="canonical" href="https://example.test/b">',
            "fail",
            "conflicting",
        ),
        ('<link rel="canonical" href="https://example.test/">', "fail", "root"),
        ('<link rel="canonical" href="https://example.test/other">', "info", "another URL"),
        ('<link rel="canonical" href="http://">', "fail", "not valid"),
        (
            '<link rel="canonical" href="https://example.test/de/page"><link rel="alternate" hreflang="de" href="https://example.test/de/page"><link rel="alternate" hreflang="en" href="https://example.test/page">',
            "fail",
            "language",
        ),
    ],
)
def test_canonical(head: str, status: str, title_part: str) -> None:
    check = check_canonical(site_of(doc("<p>x</p>", head=head), PAGE))
    assert check.status == status
    assert title_part in check.title


def test_canonical_from_link_header_and_body_ignored() -> None:
    headers = [
        ("content-type", "text/html"),
        ("link", '<https://example.test/page>; rel="canonical"'),
    ]
    assert check_canonical(site_of(doc("<p>x</p>"), PAGE, headers=headers)).status == "pass"
    body_only = doc('<div></div><link rel="canonical" href="/x">')
    assert check_canonical(site_of(body_only, PAGE)).status == "warn"


@pytest.mark.parametrize(
    ("alternates", "status"),
    [
        ([("en", "https://example.test/page"), ("x-default", "https://example.test/")], "pass"),
        (
            [("en-GB", "https://example.test/page"), ("zh-Hant-TW", "https://example.test/tw")],
            "warn",
        ),
        ([("english", "https://example.test/page")], "fail"),
        ([("en", "/page")], "fail"),
        ([("de", "https://example.test/de"), ("x-default", "https://example.test/")], "warn"),
    ],
)
def test_hreflang(alternates: list[tuple[str, str]], status: str) -> None:
    head = "".join(f'<link rel="alternate" hreflang="{c}" href="{h}">' for c, h in alternates)
    check = check_hreflang(site_of(doc("<p>x</p>", head=head), PAGE))
    assert check is not None
    assert check.status == status


def test_link_text_lists_fifty_and_counts_all() -> None:
    body = "".join(f'<a href="/p/{i}">here</a>' for i in range(60))
    check = check_link_text(site_of(doc(body), PAGE))
    assert check is not None
    assert len(check.value) == 50
    assert check.detail.startswith("60 links")
    assert check.value[0] == {"href": "https://example.test/p/0", "text": "here"}


def test_link_text_same_page_path_with_fragment_is_skipped() -> None:
    check = check_link_text(site_of(doc('<a href="/page#top">here</a>'), PAGE))
    assert check is not None
    assert check.status == "pass"


def test_links_with_foreign_base_are_resolved_against_it() -> None:
    body = '<a href="/x">x</a><a href="https://example.test/y">y</a>'
    check = check_links(site_of(doc(body, head='<base href="https://cdn.test/">'), PAGE))
    assert check is not None
    assert (check.value["internal"], check.value["external"]) == (1, 1)


def test_whitespace_before_javascript_is_uncrawlable() -> None:
    check = check_crawlable_anchors(site_of(doc('<a href=" javascript:void(0)">x</a>'), PAGE))
    assert check is not None
    assert check.value[0]["reason"] == "javascript:void(0)"


TRICKY_HREFS = [
    "/a",
    "/a#x",
    "/page",
    "/page#top",
    "/page ",
    "/page?q=1",
    " /a",
    "/a\t",
    "//other.test/a",
    "#top",
    "javascript:go()",
    "MailTo:x@y",
    "page",
    "",
    "https://example.test/page",
    "/p\0q",
    None,
]


@settings(max_examples=300, deadline=None)
@given(
    links=st.lists(
        st.tuples(
            st.sampled_from(TRICKY_HREFS), st.sampled_from([None, "", "nofollow", "noopener"])
        ),
        min_size=1,
    )
)
def test_links_judged_at_once_are_each_followed_off_the_page(
    links: list[tuple[str | None, str | None]],
) -> None:
    facts = LinkFacts(site_of(doc("<p>x</p>")).page)
    hrefs = [href for href, _ in links]
    rels = [rel for _, rel in links]
    if _all_leave_the_page(hrefs, rels, "/page"):
        assert all(facts.followed_off_page(h, r) is not None for h, r in links)


def test_link_text_fails_every_here_link_judged_at_once() -> None:
    body = (
        "".join(f'<a href="/p/{i}#more">here</a>' for i in range(60)) + '<a href="/page">here</a>'
    )
    check = check_link_text(site_of(doc(body + "<p>x</p>")))
    assert check is not None
    assert check.status == "fail"
    assert check.detail.startswith("60 links")  # the link back to the page does not count
    assert len(check.value) == 50
    assert check.value[0] == {"href": "https://example.test/p/0#more", "text": "here"}


@settings(max_examples=300, deadline=None)
@given(
    hrefs=st.lists(
        st.sampled_from(
            ["/a", "a:b", "https://x.test/", "https://x.test/a:b", "//x.test/", "//x:1/", "::"]
        ),
        min_size=1,
    )
)
def test_absolute_links_counted_from_the_colons_are_counted_one_by_one(hrefs: list[str]) -> None:
    page = site_of(doc("".join(f'<a href="{href}">x</a>' for href in hrefs))).page
    page.index_elements()
    facts = LinkFacts(page)
    joined = facts._joined
    assert joined is not None
    expected = sum(1 for href in hrefs if ":" in href or href[:2] == "//")
    assert facts._absolute_count(joined) == expected
