"""Meta tag inventory, duplicate tags and the robots meta tag (for meta-checker)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.checks.crawl import directives, is_blocking, robots_header_rules
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site

# Properties that may legitimately repeat (arrays in Open Graph and friends).
REPEATABLE_PREFIXES = (
    "og:image",
    "og:video",
    "og:audio",
    "og:locale:alternate",
    "article:tag",
    "article:author",
    "book:tag",
    "video:tag",
    "theme-color",
    "music:",
    "profile:",
    "al:",
    "fb:",
)
INVENTORY_LIMIT = 200


def meta_inventory(site: Site) -> list[dict[str, Any]]:
    """Every <meta> in document order: its key attribute and content, and whether it is in <head>."""
    head = site.page.head
    in_head = {n.mem_id for n in head.css("meta")} if head is not None else set()
    found = []
    for node in site.page.metas[:INVENTORY_LIMIT]:
        attrs = node.attributes
        entry: dict[str, Any] = {}
        for key in ("charset", "name", "property", "http-equiv", "itemprop"):
            if attrs.get(key) is not None:
                entry["httpEquiv" if key == "http-equiv" else key] = attrs.get(key)
        if "content" in attrs:
            entry["content"] = attrs.get("content")
        if attrs.get("media"):
            entry["media"] = attrs.get("media")
        entry["inHead"] = node.mem_id in in_head
        found.append(entry)
    return found


def link_inventory(site: Site) -> list[dict[str, Any]]:
    """Every <link> with its rel, absolute href and descriptive attributes."""
    found = []
    for node in site.page.elements("link")[:INVENTORY_LIMIT]:
        attrs = node.attributes
        entry = {"rel": attrs.get("rel"), "href": site.page.resolve(attrs.get("href"))}
        entry.update(
            {
                k: attrs.get(k)
                for k in ("hreflang", "sizes", "type", "media", "title")
                if attrs.get(k)
            }
        )
        found.append(entry)
    return found


def check_duplicate_tags(site: Site) -> Check:
    counts: Counter[str] = Counter()
    for node in site.page.metas:
        key = (node.attributes.get("property") or node.attributes.get("name") or "").lower()
        if key and not key.startswith(REPEATABLE_PREFIXES):
            counts[key] += 1
    charsets = sum(1 for node in site.page.metas if node.attributes.get("charset"))
    if charsets > 1:
        counts["charset"] = charsets
    duplicated = {key: count for key, count in counts.items() if count > 1}
    if duplicated:
        return make(
            "duplicate-tags",
            "Duplicate meta tags",
            "warn",
            duplicated,
            f"{plural(len(duplicated), 'tag')} appear more than once: "
            f"{', '.join(list(duplicated)[:5])}. Consumers pick either copy.",
            "Keep one of each meta tag.",
        )
    return make("duplicate-tags", "No duplicate meta tags", "pass", {}, "Each tag appears once.")


def check_meta_robots(site: Site) -> Check:
    page = site.page
    values = {key: page.meta(key) for key in ("robots", "googlebot", "bingbot")}
    values["X-Robots-Tag"] = ", ".join(page.header_values("x-robots-tag")) or None
    present = {key: value for key, value in values.items() if value}
    found = [d for key in ("robots", "googlebot", "bingbot") for d in directives(values[key] or "")]
    found += [d for _, d in robots_header_rules(page.header_values("x-robots-tag"))]
    blocking = sorted({d for d in found if is_blocking(d)})
    if blocking:
        return make(
            "meta-robots",
            "Robots directives block indexing",
            "warn",
            present,
            f"Found {', '.join(blocking)}: search engines will drop this page.",
            "Remove noindex/none if the page should be found.",
        )
    detail = (
        "; ".join(f"{k}: {v}" for k, v in present.items())
        if present
        else "No robots meta tag: indexing and following are allowed by default."
    )
    return make("meta-robots", "Robots directives allow indexing", "pass", present, detail)
