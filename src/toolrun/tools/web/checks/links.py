"""Links: Lighthouse's link-text and crawlable-anchors, plus link hygiene.

``link-text`` fails a followable link whose trimmed, lower-cased text equals a
non-descriptive phrase of Lighthouse's lists (the link's language picks the
list; without one every list applies), or whose text is a bare http(s) URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from selectolax.lexbor import LexborNode

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check
from toolrun.tools.web.page import Anchor, clean_text
from toolrun.tools.web.site import Site

# Lighthouse core/audits/seo/link-text.js (Apache-2.0), by language.
NON_DESCRIPTIVE: dict[str, frozenset[str]] = {
    "en": frozenset(
        {
            "click here",
            "click this",
            "go",
            "here",
            "information",
            "learn more",
            "more",
            "more info",
            "more information",
            "right here",
            "read more",
            "see more",
            "start",
            "this",
        }
    ),
    "ja": frozenset(
        {"ここをクリック", "こちらをクリック", "リンク", "続きを読む", "続く", "全文表示"}
    ),
    "es": frozenset(
        {
            "click aquí",
            "click aqui",
            "clicka aquí",
            "clicka aqui",
            "pincha aquí",
            "pincha aqui",
            "aquí",
            "aqui",
            "más",
            "mas",
            "más información",
            "más informacion",
            "mas información",
            "mas informacion",
            "este",
            "enlace",
            "este enlace",
            "empezar",
        }
    ),
    "pt": frozenset(
        {"clique aqui", "ir", "mais informação", "mais informações", "mais", "veja mais"}
    ),
    "ko": frozenset(
        {
            "여기",
            "여기를 클릭",
            "클릭",
            "링크",
            "자세히",
            "자세히 보기",
            "계속",
            "이동",
            "전체 보기",
        }
    ),
    "sv": frozenset({"här", "klicka här", "läs mer", "mer", "mer info", "mer information"}),
    "de": frozenset(
        {"klicke hier", "hier klicken", "hier", "mehr", "siehe", "dies", "das", "weiterlesen"}
    ),
    "ta": frozenset(
        {
            "அடுத்த பக்கம்",
            "மறுபக்கம்",
            "முந்தைய பக்கம்",
            "முன்பக்கம்",
            "மேலும் அறிக",
            "மேலும் தகவலுக்கு",
            "மேலும் தரவுகளுக்கு",
            "தயவுசெய்து இங்கே அழுத்தவும்",
            "இங்கே கிளிக் செய்யவும்",
        }
    ),
    "fa": frozenset(
        {
            "اطلاعات بیشتر",
            "اطلاعات",
            "این",
            "اینجا بزنید",
            "اینجا کلیک کنید",
            "اینجا",
            "برو",
            "بیشتر بخوانید",
            "بیشتر بدانید",
            "بیشتر",
            "شروع",
        }
    ),
}
ALL_PHRASES = frozenset().union(*NON_DESCRIPTIVE.values())
_JS_VOID = re.compile(r"javascript:void(\(|)0(\)|)", re.I)
_HREF_ATTRS = ("target", "download", "ping", "rel", "hreflang", "type", "referrerpolicy")
_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1", "0.0.0.0"})
MAX_LINKS = 300


def _without_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def _lang_of(node: LexborNode) -> str | None:
    current: LexborNode | None = node
    while current is not None:
        lang = current.attributes.get("lang") if current.tag != "-document" else None
        if lang:
            return lang.strip().lower()
        current = current.parent
    return None


def _is_full_url(text: str) -> bool:
    parts = urlsplit(text)
    return parts.scheme in {"http", "https"} and bool(parts.netloc) and " " not in text


def uncrawlable_reason(anchor: Anchor) -> str | None:
    """Lighthouse's crawlable-anchors rule (listeners approximated by ``on*`` attributes)."""
    attrs = anchor.attrs
    href = anchor.raw_href
    if href and href[0] in "/#" and href.isprintable() and " " not in href:
        return None  # the common case: a plain path or fragment is always crawlable
    raw = re.sub(r"\s", "", href or "")
    if (attrs.get("role") or "").strip():
        return None
    if raw.lower().startswith("mailto:"):
        return None
    if raw.lower().startswith("file:"):
        return "file: URL"
    if not raw and ((attrs.get("name") or "").strip() or (attrs.get("id") or "").strip()):
        return None
    if _JS_VOID.search(raw):
        return "javascript:void(0)"
    if anchor.raw_href is None:
        has_listener = any(name.lower().startswith("on") for name in attrs)
        if has_listener and not any(name in attrs for name in _HREF_ATTRS):
            return "no href, click handler only"
        return None
    if raw.lower().startswith("javascript:"):
        return "javascript: URL"
    if anchor.href is None or not anchor.href:
        return "empty href"
    return None


@dataclass
class LinkScan:
    """Everything the link checks need, from one pass over the anchors."""

    total: int = 0
    non_descriptive: list[dict[str, str | None]] = field(default_factory=list)
    non_descriptive_count: int = 0
    uncrawlable: list[dict[str, str | None]] = field(default_factory=list)
    internal: int = 0
    external: int = 0
    nofollow_internal: int = 0
    insecure: list[str] = field(default_factory=list)
    local: list[str] = field(default_factory=list)


# Anchors that may be uncrawlable; every other <a> has a plain href (checked in C by lexbor).
_CRAWL_SUSPECTS = (
    'a:not([href]), a[href=""], a[href^="javascript" i], a[href^="file:" i], '
    r'a[href^=" "], a[href^="\9 "], a[href^="\a "], a[href^="\d "]'
)
_ABSOLUTE = 'a[href^="http://" i], a[href^="https://" i], a[href^="//"]'
_RELATIVE = 'a[href]:not([href*=":"]):not([href^="//"])'
_LOOSE = re.compile(r"\s\s|[\n\t\r\xa0]")
MAX_PHRASE_CHARS = 64
MAX_LISTED = 50


def _host_of(url: str, scheme: str) -> str:
    """Host of an absolute or scheme-relative URL, lower-cased, without a urlsplit per link."""
    if url.startswith("//"):
        url = scheme + ":" + url
    netloc = url.split("/", 3)[2].rpartition("@")[2]
    if netloc.startswith("["):
        return netloc[: netloc.find("]") + 1].lower()
    return netloc.partition(":")[0].lower()


# Links Lighthouse's link-text rule can fail: an href, not nofollow, not javascript:/mailto:,
# not a bare fragment (same page).
_TEXT_SUSPECTS = (
    'a[href]:not([rel~="nofollow" i]):not([href^="javascript:" i]):not([href^="mailto:" i])'
    ':not([href^="#"])'
)


def _phrase_of(text: str) -> str | None:
    """The lower-cased, space-normalised text if it is a listed phrase or a bare URL."""
    low = text.strip().lower()
    if low in ALL_PHRASES or low.startswith(("http://", "https://")):
        return low
    if len(low) > MAX_PHRASE_CHARS or _LOOSE.search(low) is None:
        return None
    low = " ".join(low.split())
    return low if low in ALL_PHRASES else None


def _non_descriptive_links(site: Site) -> tuple[int, list[dict[str, str | None]]]:
    """Lighthouse's link-text rule over the page: the count and the first ``MAX_LISTED``."""
    page = site.page
    page_key = _without_fragment(page.final_url)
    page_path = page_key[len(page.origin) :] or "/"
    same_base = page.base_is_origin
    page_lang = None if page.has_lang_below_root else (page.lang or "").strip().lower()
    count = 0
    failing: list[dict[str, str | None]] = []
    for node in page.tree.css(_TEXT_SUSPECTS):
        text = node.text(deep=True)
        low = _phrase_of(text)
        if low is None:
            continue
        raw = (node.attrs.get("href") or "").strip()
        if same_base and raw[:1] == "/" and raw[:2] != "//":
            if _without_fragment(raw) == page_path:
                continue
        else:
            href = page.resolve(raw)
            if not href or _without_fragment(href) == page_key:
                continue
        is_url = low.startswith(("http://", "https://")) and _is_full_url(text.strip())
        if not is_url:
            if low not in ALL_PHRASES:
                continue
            lang = _lang_of(node) if page_lang is None else page_lang
            if lang and low not in NON_DESCRIPTIVE.get(lang.split("-")[0], frozenset()):
                continue
        count += 1
        if len(failing) < MAX_LISTED:
            failing.append({"href": page.resolve(raw), "text": clean_text(text)})
    return count, failing


def _count_links(site: Site, scan: LinkScan) -> None:
    page = site.page
    tree = page.tree
    host = page.host
    scheme = page.final_url.split(":", 1)[0]
    if not page.base_is_origin:  # <base href> elsewhere: resolve every link
        for anchor in page.anchors:
            _tally(scan, page.anchor_host(anchor), host, anchor)
        return
    scan.internal += len(tree.css(_RELATIVE))
    for node in tree.css(_ABSOLUTE):
        raw = (node.attributes.get("href") or "").strip()
        link_host = _host_of(raw, scheme)
        if link_host == host:
            scan.internal += 1
        else:
            scan.external += 1
            if link_host in _LOCAL_HOSTS:
                scan.local.append(raw)
    for node in tree.css('a[rel~="nofollow" i][href]'):
        anchor = Anchor(node, node.attributes, "", page.resolve)
        scan.nofollow_internal += page.anchor_host(anchor) == host


def _tally(scan: LinkScan, link_host: str | None, host: str, anchor: Anchor) -> None:
    if link_host is None:
        return
    if link_host == host:
        scan.internal += 1
        scan.nofollow_internal += "nofollow" in anchor.rel
    else:
        scan.external += 1
        if link_host in _LOCAL_HOSTS:
            scan.local.append(anchor.href or "")


def scan_links(site: Site) -> LinkScan:
    """Link facts for link-text, crawlable-anchors and links, computed once per site.

    Selectors narrow the anchors in C (lexbor); Python looks only at the few that
    could fail, so a page with thousands of links stays cheap.
    """
    cached = site.extras.get("link_scan")
    if isinstance(cached, LinkScan):
        return cached
    page = site.page
    tree = page.tree
    scan = LinkScan(total=len(tree.css("a")))
    scan.non_descriptive_count, scan.non_descriptive = _non_descriptive_links(site)
    for node in tree.css(_CRAWL_SUSPECTS):
        anchor = Anchor(node, node.attributes, clean_text(node.text(deep=True)), page.resolve)
        reason = uncrawlable_reason(anchor)
        if reason:
            scan.uncrawlable.append(
                {"href": anchor.raw_href, "text": anchor.text[:80], "reason": reason}
            )
    _count_links(site, scan)
    if page.final_url.startswith("https:"):
        scan.insecure = [
            page.resolve(node.attributes.get("href")) or ""
            for node in tree.css('a[href^="http:" i]')
        ]
    site.extras["link_scan"] = scan
    return scan


def check_link_text(site: Site) -> Check | None:
    scan = scan_links(site)
    if not scan.total:
        return None
    failing = scan.non_descriptive
    if failing:
        return make(
            "link-text",
            "Links do not have descriptive text",
            "fail",
            failing,
            f"{plural(scan.non_descriptive_count, 'link')} with text like "
            f"{failing[0]['text']!r} that says nothing about the target.",
            "Describe the destination in the link text ('pricing plans', not 'click here').",
        )
    return make(
        "link-text",
        "Links have descriptive text",
        "pass",
        scan.total,
        f"{plural(scan.total, 'link')} checked.",
    )


def check_crawlable_anchors(site: Site) -> Check | None:
    scan = scan_links(site)
    if not scan.total:
        return None
    bad = scan.uncrawlable
    if bad:
        return make(
            "crawlable-anchors",
            "Links are not crawlable",
            "fail",
            bad[:50],
            f"{plural(len(bad), 'link')} cannot be followed by crawlers (e.g. {bad[0]['reason']}).",
            "Use <a href> with a real URL for every navigation link.",
        )
    return make(
        "crawlable-anchors",
        "Links are crawlable",
        "pass",
        scan.total,
        "Every link has a resolvable href.",
    )


def check_links(site: Site) -> Check | None:
    scan = scan_links(site)
    internal, external, nofollow_internal = scan.internal, scan.external, scan.nofollow_internal
    insecure, local = scan.insecure, scan.local
    value = {
        "internal": internal,
        "external": external,
        "nofollowInternal": nofollow_internal,
        "insecure": insecure[:20],
        "localhost": local[:20],
    }
    problems = []
    if internal + external > MAX_LINKS:
        problems.append(f"{internal + external} links (more than {MAX_LINKS})")
    if nofollow_internal:
        problems.append(f"{plural(nofollow_internal, 'internal link')} marked nofollow")
    if insecure:
        problems.append(f"{plural(len(insecure), 'link')} to http:// URLs")
    if local:
        problems.append(f"{plural(len(local), 'link')} to localhost")
    detail = f"{internal} internal and {external} external links."
    if problems:
        return make(
            "links",
            "Link hygiene issues",
            "warn",
            value,
            detail + " " + "; ".join(problems) + ".",
            "Link internally without nofollow, use https:// targets and drop development URLs.",
        )
    return make("links", "Links look healthy", "pass", value, detail)


LINK_CHECKS = (check_link_text, check_crawlable_anchors, check_links)
