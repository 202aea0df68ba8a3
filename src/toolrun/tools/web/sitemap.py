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
# A <loc> runs to the first "</"; its trailing whitespace and "]]>" are cut in Python
# (``_loc_text``), which is what a lazy ``(.*?)(?:]]>)?\s*</`` would match, without
# trying the tail at every character.
_LOC = re.compile(
    r"<(?:[A-Za-z_][\w.-]*+:)?loc\s*>\s*(?:<!\[CDATA\[)?([^<]*+(?:<(?!/)[^<]*+)*+)</", re.I
)
_LASTMOD = re.compile(r"<(?:[A-Za-z_][\w.-]*+:)?lastmod\s*>[^<]+<", re.I)
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
        # A listed location contains ``wanted``: most pages are answered by one search.
        if wanted not in "\n".join(self.locations).lower():
            return False
        return any(_key(location) == wanted for location in self.locations)


def parse_sitemap(text: str) -> Sitemap:
    """Parse an XML sitemap, a sitemap index, or a plain-text list of URLs."""
    head = text.lstrip("\ufeff \t\r\n")[:2048]
    root = _ROOT.search(text[:65536])
    if root is not None and head.startswith("<"):
        kind: SitemapKind = "urlset" if root.group(1).lower() == "urlset" else "sitemapindex"
        found = _LOC.findall(text)
        if "]]>" in text or "&" in text:
            locations = [
                unescape(loc.strip()) if "&" in loc else loc.strip()
                for loc in map(_loc_text, found)
            ]
        else:  # no CDATA end to cut, nothing to unescape
            locations = list(map(str.strip, found))
        # Case-folded, "lastmod" is in every text the case-insensitive pattern can match.
        lastmods = len(_LASTMOD.findall(text)) if "lastmod" in text.casefold() else 0
        return Sitemap(kind, locations[:MAX_SITEMAP_URLS], lastmods)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and all(line.startswith(("http://", "https://")) for line in lines[:100]):
        return Sitemap("text", lines[:MAX_SITEMAP_URLS], 0)
    return Sitemap("invalid", [], 0)


def _loc_text(match: str) -> str:
    """A <loc>'s text: what precedes its closing tag, less trailing space and a CDATA end."""
    text = match.rstrip()
    return text[:-3] if text.endswith("]]>") else text


def _key(url: str) -> str:
    return url.split("#", 1)[0].rstrip("/").lower()
