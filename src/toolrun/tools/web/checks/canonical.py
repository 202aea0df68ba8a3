"""Canonical and hreflang, with Lighthouse's rules plus SEOnaut's self-reference checks.

Only ``<link>`` elements in ``<head>`` and HTTP ``Link`` headers count, as for
search engines; body links are ignored.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.links_header import links_with_rel
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site

HREFLANG = re.compile(r"^(x-default|[a-z]{2,3}(-[a-z]{4})?(-([a-z]{2}|[0-9]{3}))?)$", re.I)


def _same(a: str, b: str) -> bool:
    return a.split("#", 1)[0].rstrip("/") == b.split("#", 1)[0].rstrip("/")


def canonical_hrefs(site: Site) -> list[str]:
    """Raw canonical hrefs from the head and the Link header, in that order."""
    page = site.page
    hrefs = [
        (n.attributes.get("href") or "").strip()
        for n in page.head_nodes("link[rel]")
        if "canonical" in (n.attributes.get("rel") or "").lower().split()
    ]
    hrefs += [url for url, _ in links_with_rel(page.header_values("link"), "canonical")]
    return hrefs


def alternates(site: Site) -> list[tuple[str, str]]:
    """(hreflang, raw href) of head ``link[rel=alternate][hreflang]`` and Link headers."""
    page = site.page
    found = [
        ((n.attributes.get("hreflang") or "").strip(), (n.attributes.get("href") or "").strip())
        for n in page.head_nodes("link[hreflang]")
        if "alternate" in (n.attributes.get("rel") or "").lower().split()
    ]
    found += [
        (params.get("hreflang", ""), url)
        for url, params in links_with_rel(page.header_values("link"), "alternate")
        if "hreflang" in params
    ]
    return found


def _is_absolute_http(href: str) -> bool:
    parts = urlsplit(href)
    return parts.scheme in {"http", "https"} and bool(parts.netloc)


def check_canonical(site: Site) -> Check:
    page = site.page
    hrefs = canonical_hrefs(site)
    if not hrefs:
        return make(
            "canonical",
            "No canonical URL",
            "warn",
            None,
            "Without rel=canonical, engines choose among duplicate URLs themselves.",
            f'Add <link rel="canonical" href="{page.final_url}"> (self-referencing).',
        )
    distinct = list(dict.fromkeys(hrefs))
    if len(distinct) > 1:
        return make(
            "canonical",
            "Document has conflicting canonical URLs",
            "fail",
            distinct,
            f"Multiple conflicting URLs ({', '.join(distinct[:3])}).",
            "Keep exactly one canonical URL.",
        )
    href = distinct[0]
    parts = urlsplit(href)
    if not href or " " in href.strip() or (parts.scheme and not parts.netloc):
        return make(
            "canonical",
            "Canonical URL is not valid",
            "fail",
            href,
            f"Invalid URL ({href!r}).",
            "Use an absolute, valid URL.",
        )
    if not _is_absolute_http(href):
        return make(
            "canonical",
            "Canonical URL is relative",
            "fail",
            href,
            f"Is not an absolute URL ({href!r}).",
            "Use an absolute URL, e.g. " + (page.resolve(href) or page.final_url) + ".",
        )
    alternate_urls = {page.resolve(url) for _, url in alternates(site)}
    if (
        not _same(href, page.final_url)
        and href in alternate_urls
        and page.final_url in alternate_urls
    ):
        return make(
            "canonical",
            "Canonical points to another language version",
            "fail",
            href,
            "The page and its canonical are both hreflang alternates: the canonical "
            "must point to the same language version.",
            "Make each language version canonical to itself.",
        )
    page_parts = urlsplit(page.final_url)
    if (
        parts.path in ("", "/")
        and page_parts.path not in ("", "/")
        and parts.netloc == page_parts.netloc
    ):
        return make(
            "canonical",
            "Canonical points to the domain's root",
            "fail",
            href,
            "Points to the domain's root URL (the homepage) instead of an equivalent "
            "page of content.",
            "Point the canonical to this page's own URL.",
        )
    if not _same(href, page.final_url):
        return make(
            "canonical",
            "Canonical points to another URL",
            "info",
            href,
            f"This page declares {href} as its canonical: engines will index that URL "
            "instead of this one.",
            "Make sure this page is meant to be a duplicate of the canonical URL.",
        )
    return make(
        "canonical",
        "Document has a valid, self-referencing canonical",
        "pass",
        href,
        f"Canonical: {href}.",
    )


def check_hreflang(site: Site) -> Check | None:
    found = alternates(site)
    if not found:
        return None
    page = site.page
    problems = []
    for code, href in found:
        if not HREFLANG.match(code):
            problems.append({"hreflang": code, "href": href, "problem": "Unexpected language code"})
        elif not _is_absolute_http(href):
            problems.append({"hreflang": code, "href": href, "problem": "Relative href value"})
    value = {
        "alternates": [{"hreflang": c, "href": h} for c, h in found[:100]],
        "problems": problems,
    }
    if problems:
        return make(
            "hreflang",
            "Document doesn't have a valid hreflang",
            "fail",
            value,
            f"{plural(len(problems), 'alternate')} invalid: "
            f"{problems[0]['problem']} ({problems[0]['hreflang']!r}).",
            "Use ISO 639-1 codes (optionally with a region, or x-default) and absolute URLs.",
        )
    advice = []
    if not any(_same(page.resolve(h) or "", page.final_url) for _, h in found):
        advice.append("no alternate points back to this page (missing self-reference)")
    if not any(code.lower() == "x-default" for code, _ in found):
        advice.append("no x-default alternate")
    if advice:
        return make(
            "hreflang",
            "hreflang set is incomplete",
            "warn",
            value,
            "; ".join(advice).capitalize() + ".",
            "List every language version including this page itself, plus x-default.",
        )
    return make(
        "hreflang",
        "Document has a valid hreflang",
        "pass",
        value,
        f"{plural(len(found), 'alternate')}, all valid.",
    )


CANONICAL_CHECKS = (check_canonical, check_hreflang)
