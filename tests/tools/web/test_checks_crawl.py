from __future__ import annotations

from typing import Any

import pytest

from tests.tools.web.conftest import site_of
from toolrun.tools.web.checks.crawl import (
    check_https,
    check_indexing_hints,
    check_is_crawlable,
    check_redirects,
    check_robots_txt,
    check_status_code,
    is_blocking,
    robots_header_rules,
)
from toolrun.tools.web.models import RedirectHop
from toolrun.tools.web.site import SiteFile


def html(head: str = "") -> str:
    return f"<!doctype html><html><head>{head}</head><body><p>x</p></body></html>"


@pytest.mark.parametrize(
    ("head", "headers", "robots", "status", "blocked"),
    [
        ("", [], None, "pass", []),
        (
            '<meta name="robots" content="noindex">',
            [],
            None,
            "fail",
            ["generic", "Googlebot", "bingbot", "DuckDuckBot", "archive.org_bot"],
        ),
        ('<meta name="robots" content="NONE">', [], None, "fail", None),
        ('<meta name="robots" content="nofollow">', [], None, "pass", []),
        ('<meta name="googlebot" content="noindex">', [], None, "warn", ["Googlebot"]),
        # An agent-specific meta replaces the generic one for that agent.
        (
            '<meta name="robots" content="noindex"><meta name="googlebot" content="index">',
            [],
            None,
            "warn",
            ["generic", "bingbot", "DuckDuckBot", "archive.org_bot"],
        ),
        ("", [("x-robots-tag", "noindex")], None, "fail", None),
        ("", [("x-robots-tag", "googlebot: noindex")], None, "warn", ["Googlebot"]),
        ("", [("x-robots-tag", "otherbot: noindex")], None, "pass", []),
        ("", [("x-robots-tag", "unavailable_after: 2001-01-01")], None, "fail", None),
        ("", [("x-robots-tag", "unavailable_after: 2999-01-01")], None, "pass", []),
        ("", [], "User-agent: *\nDisallow: /", "fail", None),
        (
            "",
            [],
            "User-agent: *\nDisallow: /\nUser-agent: Googlebot\nAllow: /",
            "warn",
            ["generic", "bingbot", "DuckDuckBot", "archive.org_bot"],
        ),
        ("", [], "User-agent: bingbot\nDisallow: /page", "warn", ["bingbot"]),
    ],
)
def test_is_crawlable(
    head: str,
    headers: list[tuple[str, str]],
    robots: str | None,
    status: str,
    blocked: list[str] | None,
) -> None:
    site = site_of(html(head), headers=[("content-type", "text/html"), *headers], robots=robots)
    check = check_is_crawlable(site)
    assert check.status == status
    if blocked is not None:
        assert [row["agent"] for row in check.value if row["blocked"]] == blocked


def test_is_crawlable_names_the_robots_line() -> None:
    site = site_of(html(), robots="User-agent: *\n\nDisallow: /page")
    assert check_is_crawlable(site).value[0]["by"] == ["robots.txt line 3: Disallow: /page"]


@pytest.mark.parametrize(
    ("directive", "blocking"),
    [
        ("noindex", True),
        ("none", True),
        ("nofollow", False),
        ("unavailable_after: 25 Jun 2010 15:00:00 PST", True),
        ("unavailable_after: 2999-06-25T15:00:00Z", False),
        ("unavailable_after: garbage", False),
    ],
)
def test_is_blocking(directive: str, blocking: bool) -> None:
    assert is_blocking(directive) is blocking


def test_robots_header_rules() -> None:
    assert robots_header_rules(["googlebot: noindex, nofollow", "max-snippet: 20", "none"]) == [
        ("googlebot", "noindex"),
        ("googlebot", "nofollow"),
        (None, "max-snippet: 20"),
        (None, "none"),
    ]


@pytest.mark.parametrize(
    ("code", "status"), [(200, "pass"), (204, "pass"), (301, "warn"), (404, "fail"), (503, "fail")]
)
def test_status_code(code: int, status: str) -> None:
    assert check_status_code(site_of(html(), status_code=code)).status == status


def robots_site(file: SiteFile) -> Any:
    site = site_of(html())
    site.robots_file = file
    return site


@pytest.mark.parametrize(
    ("file", "status"),
    [
        (SiteFile(url="u", status_code=404, text="nope"), "info"),
        (SiteFile(url="u", status_code=503, text="down"), "fail"),
        (SiteFile(url="u", error="timed out after 3 s"), "fail"),
        (SiteFile(url="u", status_code=200, text="User-agent: *\nDisallow: /x\n"), "pass"),
        (SiteFile(url="u", status_code=200, text="User-agent: *\nDisalow: /x\n"), "fail"),
    ],
)
def test_robots_txt(file: SiteFile, status: str) -> None:
    assert check_robots_txt(robots_site(file)).status == status


def test_robots_txt_lists_bad_lines() -> None:
    site = robots_site(
        SiteFile(url="u", status_code=200, text="User-agent: *\nfoo\nSitemap: /rel.xml")
    )
    check = check_robots_txt(site)
    assert [(i["line"], i["message"]) for i in check.value] == [
        (2, "Syntax not understood"),
        (3, "Invalid sitemap URL"),
    ]


@pytest.mark.parametrize(
    ("hops", "status"), [(0, "pass"), (1, "pass"), (2, "warn"), (3, "warn"), (4, "fail")]
)
def test_redirect_chain(hops: int, status: str) -> None:
    site = site_of(html())
    site.page.redirects = [
        RedirectHop(url=f"https://example.test/{i}", status_code=301, location="x")
        for i in range(hops)
    ]
    assert check_redirects(site).status == status


def test_temporary_single_redirect_is_info() -> None:
    site = site_of(html())
    site.page.redirects = [RedirectHop(url="https://example.test/a", status_code=302, location="x")]
    assert check_redirects(site).status == "info"


def test_https() -> None:
    assert check_https(site_of(html(), "https://example.test/")).status == "pass"
    assert check_https(site_of(html(), "http://example.test/")).status == "fail"


def test_snippet_directives_are_reported() -> None:
    site = site_of(html('<meta name="robots" content="nosnippet, max-snippet:0">'))
    check = check_indexing_hints(site)
    assert check is not None
    assert check.status == "info"
    assert check.value == ["max-snippet:0", "nosnippet"]
    assert check_indexing_hints(site_of(html())) is None
