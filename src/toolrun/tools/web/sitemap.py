"""sitemap.xml: recognise a URL set or a sitemap index and list its locations.

The document is read with regular expressions, not an XML parser: nothing in
it is expanded (no entities, no DTD), so a hostile sitemap cannot blow up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import unescape
from typing import Literal

SitemapKind = Literal["urlset", "sitemapindex", "text", "invalid"]
_ROOT = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?(urlset|sitemapindex)\b", re.I)
_LOC = re.compile(
    r"<(?:[A-Za-z_][\w.-]*:)?loc\s*>\s*(?:<!\[CDATA\[)?(.*?)(?:\]\]>)?\s*</", re.I | re.S
)
_LASTMOD = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?lastmod\s*>\s*([^<]+?)\s*<", re.I)
MAX_SITEMAP_URLS = 50_000  # sitemaps.org protocol limit per file


@dataclass(frozen=True)
class Sitemap:
    """What a sitemap file holds."""

    kind: SitemapKind
    locations: list[str]
    lastmod_count: int

    @property
    def url_count(self) -> int:
        return len(self.locations)

    def lists(self, url: str) -> bool:
        """True if ``url`` (ignoring a trailing slash and the fragment) is one of the locations."""
        wanted = _key(url)
        return any(_key(location) == wanted for location in self.locations)


def parse_sitemap(text: str) -> Sitemap:
    """Parse an XML sitemap, a sitemap index, or a plain-text list of URLs."""
    head = text.lstrip("\ufeff \t\r\n")[:2048]
    root = _ROOT.search(text[:65536])
    if root is not None and head.startswith("<"):
        kind: SitemapKind = "urlset" if root.group(1).lower() == "urlset" else "sitemapindex"
        locations = [
            unescape(loc.strip()) if "&" in loc else loc.strip() for loc in _LOC.findall(text)
        ]
        return Sitemap(kind, locations[:MAX_SITEMAP_URLS], len(_LASTMOD.findall(text)))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and all(line.startswith(("http://", "https://")) for line in lines[:100]):
        return Sitemap("text", lines[:MAX_SITEMAP_URLS], 0)
    return Sitemap("invalid", [], 0)


def _key(url: str) -> str:
    return url.split("#", 1)[0].rstrip("/").lower()
