from __future__ import annotations

import pytest

from tests.tools.web.conftest import site_of
from toolrun.tools.web.checks.discovery import (
    check_favicon,
    check_feed,
    check_manifest,
    check_sitemap,
    check_theme_color,
)
from toolrun.tools.web.checks.meta import (
    check_duplicate_tags,
    check_meta_robots,
    link_inventory,
    meta_inventory,
)
from toolrun.tools.web.checks.performance import (
    check_compression,
    check_dom_size,
    check_page_weight,
    check_response_time,
)
from toolrun.tools.web.checks.security import (
    check_mixed_content,
    check_security_headers,
    check_url_hygiene,
)
from toolrun.tools.web.checks.social import check_og_image, check_open_graph, check_twitter_card

OG_FULL = "".join(
    f'<meta property="og:{k}" content="{v}">'
    for k, v in [
        ("title", "T"),
        ("type", "website"),
        ("image", "https://example.test/i.png"),
        ("url", "https://example.test/"),
        ("description", "D"),
        ("site_name", "S"),
        ("image:width", "1200"),
        ("image:height", "630"),
    ]
)


def doc(head: str = "", body: str = "<p>x</p>") -> str:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>"


@pytest.mark.parametrize(
    ("head", "status"),
    [
        ("", "fail"),
        ('<meta property="og:title" content="T">', "warn"),
        (OG_FULL, "pass"),
        # OGS matches name= as well as property=
        (OG_FULL.replace("property=", "name="), "pass"),
    ],
)
def test_open_graph(head: str, status: str) -> None:
    assert check_open_graph(site_of(doc(head))).status == status


@pytest.mark.parametrize(
    ("head", "probe", "status"),
    [
        ("", None, None),
        ('<meta property="og:image" content="/i.png">', None, "warn"),
        (OG_FULL, None, "pass"),
        (OG_FULL, {"reachable": False, "error": "answered 404"}, "fail"),
        (OG_FULL, {"reachable": True, "width": 100, "height": 100}, "warn"),
        (OG_FULL, {"reachable": True, "width": 1200, "height": 630}, "pass"),
        ('<meta property="og:image" content="https://example.test/i.png">', None, "warn"),
    ],
)
def test_og_image(head: str, probe: dict[str, object] | None, status: str | None) -> None:
    site = site_of(doc(head))
    if probe is not None:
        site.extras["og_image_probe"] = probe
    check = check_og_image(site)
    assert (check.status if check else None) == status


@pytest.mark.parametrize(
    ("head", "status"),
    [
        ("", "warn"),
        ('<meta name="twitter:card" content="summary_large_image">' + OG_FULL, "pass"),
        ('<meta name="twitter:card" content="huge">', "warn"),
        ('<meta name="twitter:card" content="summary">', "warn"),
    ],
)
def test_twitter_card(head: str, status: str) -> None:
    check = check_twitter_card(site_of(doc(head)))
    assert check.status == status


def test_twitter_falls_back_to_open_graph() -> None:
    check = check_twitter_card(
        site_of(doc('<meta name="twitter:card" content="summary">' + OG_FULL))
    )
    assert check.value["fallsBackToOpenGraph"] == {
        "title": True,
        "description": True,
        "image": True,
    }


URLSET = "<urlset><url><loc>https://example.test/page</loc></url></urlset>"


@pytest.mark.parametrize(
    ("sitemap", "robots", "status", "title"),
    [
        (URLSET, None, "pass", "Sitemap found"),
        ("<html>spa</html>", None, "warn", "not a sitemap"),
        (None, "User-agent: *\nSitemap: https://example.test/s.xml", "pass", "declared"),
        (None, None, "warn", "No sitemap"),
    ],
)
def test_sitemap(sitemap: str | None, robots: str | None, status: str, title: str) -> None:
    check = check_sitemap(site_of(doc(), sitemap=sitemap, robots=robots))
    assert check.status == status
    assert title in check.title


def test_sitemap_lists_page() -> None:
    check = check_sitemap(site_of(doc(), sitemap=URLSET))
    assert check.value["listsPage"] is True
    assert check.value["urls"] == 1


def test_feed_theme_manifest() -> None:
    head = (
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml" title="Blog">'
        '<meta name="theme-color" content="#fff" media="(prefers-color-scheme: light)">'
        '<link rel="manifest" href="/site.webmanifest">'
    )
    site = site_of(doc(head))
    feed = check_feed(site)
    assert feed.status == "pass"
    assert feed.value[0]["url"] == "https://example.test/feed.xml"
    assert check_theme_color(site).value == [
        {"color": "#fff", "media": "(prefers-color-scheme: light)"}
    ]
    manifest = check_manifest(site)  # not fetched: analysed without network access
    assert (manifest.status, manifest.value) == (
        "info",
        {"url": "https://example.test/site.webmanifest"},
    )
    assert check_feed(site_of(doc())).status == "info"
    assert check_theme_color(site_of(doc())).status == "info"


@pytest.mark.parametrize(
    ("head", "probe", "status"),
    [
        ("", {"url": "https://example.test/favicon.ico"}, "warn"),
        ('<link rel="icon" href="/i.png">', {"url": None, "tried": ["x"]}, "fail"),
        ('<link rel="icon" href="/i.png">', {"url": "https://example.test/i.png"}, "warn"),
        (
            '<link rel="icon" href="/i.png"><link rel="apple-touch-icon" href="/a.png">',
            {"url": "https://example.test/a.png"},
            "pass",
        ),
    ],
)
def test_favicon(head: str, probe: dict[str, object], status: str) -> None:
    site = site_of(doc(head))
    site.extras["favicon_probe"] = probe
    assert check_favicon(site).status == status


def test_meta_inventory_duplicates_and_robots() -> None:
    head = (
        '<meta charset="utf-8"><meta name="description" content="a">'
        '<meta name="description" content="b"><meta property="og:image" content="/1.png">'
        '<meta property="og:image" content="/2.png"><meta name="robots" content="noindex">'
        '<link rel="icon" href="/i.png" sizes="32x32">'
    )
    site = site_of(doc(head))
    inventory = meta_inventory(site)
    assert inventory[0] == {"charset": "utf-8", "inHead": True}
    assert inventory[1] == {"name": "description", "content": "a", "inHead": True}
    assert link_inventory(site) == [
        {"rel": "icon", "href": "https://example.test/i.png", "sizes": "32x32"}
    ]
    duplicates = check_duplicate_tags(site)
    assert duplicates.status == "warn"
    assert duplicates.value == {"description": 2}
    assert check_meta_robots(site).status == "warn"
    headers = [("content-type", "text/html"), ("x-robots-tag", "googlebot: noindex")]
    assert check_meta_robots(site_of(doc(), headers=headers)).status == "warn"
    assert check_meta_robots(site_of(doc())).status == "pass"


@pytest.mark.parametrize(
    ("ttfb", "status"), [(100, "pass"), (800, "pass"), (801, "warn"), (1801, "fail")]
)
def test_response_time(ttfb: float, status: str) -> None:
    site = site_of(doc())
    site.page.ttfb_ms = ttfb
    assert check_response_time(site).status == status


def test_weight_compression_dom() -> None:
    big = doc(body="<p>" + "x" * 2000 + "</p>")
    assert check_compression(site_of(big)) is not None
    assert check_compression(site_of(big)).status == "warn"  # type: ignore[union-attr]
    gz = [("content-type", "text/html"), ("content-encoding", "br")]
    assert check_compression(site_of(big, headers=gz)).status == "pass"  # type: ignore[union-attr]
    assert check_compression(site_of(doc())) is None
    assert check_page_weight(site_of(doc(body="x" * (600 * 1024)))).status == "warn"
    assert check_dom_size(site_of(doc(body="<i></i>" * 1600))).status == "warn"
    assert check_dom_size(site_of(doc())).status == "pass"


def test_security() -> None:
    headers = [
        ("content-type", "text/html"),
        ("strict-transport-security", "max-age=1"),
        ("content-security-policy", "default-src 'self'"),
        ("x-content-type-options", "nosniff"),
    ]
    assert check_security_headers(site_of(doc(), headers=headers)).status == "pass"
    assert check_security_headers(site_of(doc())).status == "warn"
    mixed = check_mixed_content(
        site_of(doc(body='<img src="http://cdn.test/a.png"><form action="http://x.test/"></form>'))
    )
    assert mixed is not None
    assert mixed.status == "fail"
    assert len(mixed.value) == 2
    assert check_mixed_content(site_of(doc(), "http://example.test/")) is None


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("https://example.test/blog/post", "pass"),
        ("https://example.test/My_Post", "warn"),
        ("https://example.test/a/b/c/d/e", "warn"),
        ("https://example.test/a//b", "warn"),
    ],
)
def test_url_hygiene(url: str, status: str) -> None:
    assert check_url_hygiene(site_of(doc(), url)).status == status


def test_mixed_content_sees_stripped_scripts_and_stylesheets() -> None:
    body = (
        '<script src="http://cdn.test/app.js"></script><link rel="stylesheet" href="http://cdn.test/a.css">'
        '<script src="https://cdn.test/ok.js"></script><img src="/relative.png">'
    )
    check = check_mixed_content(site_of(doc(body=body)))
    assert check is not None
    assert check.value == ["http://cdn.test/app.js", "http://cdn.test/a.css"]
