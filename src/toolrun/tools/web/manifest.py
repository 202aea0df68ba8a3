"""The web app manifest a page links to: found, fetched (or read from a ``data:`` URI), parsed.

``parse_manifest`` is pure and never raises: a body that is not JSON, or JSON
that is not an object, comes back as a ``Manifest`` with ``error`` set, as does
a manifest that cannot be fetched. Members are read as the W3C Web Application
Manifest spec reads them (strings trimmed, members of the wrong type ignored,
icon ``src`` and ``start_url`` resolved against the manifest's URL).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes, urljoin, urlsplit

from toolrun.net.errors import NetError, TooLarge
from toolrun.net.fetch import Fetcher
from toolrun.tools.web.page import Page

MANIFEST_MAX_BYTES = 256 * 1024
MANIFEST_TIMEOUT_S = 8.0
ACCEPT = "application/manifest+json,application/json;q=0.9,*/*;q=0.5"
MAX_REPORTED_ICONS = 20
_DATA_URL_SHOWN = 100  # characters of a data: URI kept in reports
_SIZE = re.compile(r"(\d+)x(\d+)")


@dataclass(frozen=True)
class ManifestIcon:
    """One entry of ``icons``, ``src`` absolute."""

    src: str
    sizes: str | None = None
    type: str | None = None
    purpose: str | None = None

    @property
    def any_size(self) -> bool:
        """``sizes`` contains ``any`` (a scalable icon, usually SVG)."""
        return "any" in (self.sizes or "").lower().split()

    @property
    def dimensions(self) -> tuple[int, int] | None:
        """The largest ``WxH`` of ``sizes`` (by its shorter side), or None."""
        found = [
            (int(m.group(1)), int(m.group(2)))
            for token in (self.sizes or "").lower().split()
            if (m := _SIZE.fullmatch(token))
        ]
        return max(found, key=lambda size: (min(size), max(size))) if found else None

    @property
    def pixels(self) -> int:
        """The shorter side of the largest declared size; 0 when none is given."""
        size = self.dimensions
        return min(size) if size else 0

    @property
    def purposes(self) -> frozenset[str]:
        """Purpose keywords; the spec's default is ``any``."""
        return frozenset((self.purpose or "").lower().split()) or frozenset({"any"})

    def covers(self, pixels: int) -> bool:
        """Usable by a browser at ``pixels`` square: scalable or at least that large."""
        return self.any_size or self.pixels >= pixels

    def value(self) -> dict[str, str | None]:
        return {"src": self.src, "sizes": self.sizes, "type": self.type, "purpose": self.purpose}


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest, or why there is none (``error``)."""

    url: str
    error: str | None = None
    name: str | None = None
    short_name: str | None = None
    description: str | None = None
    lang: str | None = None
    start_url: str | None = None
    display: str | None = None
    theme_color: str | None = None
    icons: tuple[ManifestIcon, ...] = ()

    @property
    def shown_url(self) -> str:
        """``url``, with a long ``data:`` URI cut short for reports."""
        if self.url.startswith("data:") and len(self.url) > _DATA_URL_SHOWN:
            return self.url[:_DATA_URL_SHOWN] + "\u2026"
        return self.url

    def best_icon(self) -> ManifestIcon | None:
        """The largest icon not meant for monochrome use (metascraper-manifest's logo)."""
        usable = [icon for icon in self.icons if "monochrome" not in icon.purposes]
        return max(usable, key=lambda icon: icon.pixels) if usable else None

    def value(self) -> dict[str, Any]:
        """The manifest as a check reports it (camelCase keys)."""
        return {
            "url": self.shown_url,
            "name": self.name,
            "shortName": self.short_name,
            "lang": self.lang,
            "startUrl": self.start_url,
            "display": self.display,
            "themeColor": self.theme_color,
            "icons": [icon.value() for icon in self.icons[:MAX_REPORTED_ICONS]],
            "error": self.error,
        }


def manifest_link(page: Page) -> str | None:
    """The first ``<link rel=manifest href>``, resolved against the page (``data:`` kept)."""
    for node in page.elements("link"):
        rel = (node.attributes.get("rel") or "").lower().split()
        if "manifest" in rel and "href" in node.attrs:
            return page.resolve(node.attributes.get("href"))
    return None


def _string(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value.strip() or None if isinstance(value, str) else None


def _resolve(base: str, reference: str) -> str | None:
    reference = reference.strip()
    if not reference:
        return None
    try:
        url = urljoin(base, reference)
    except ValueError:
        return None
    return url if urlsplit(url).scheme in ("http", "https", "data") else None


def _icons(value: Any, base: str) -> tuple[ManifestIcon, ...]:
    if not isinstance(value, list):
        return ()
    icons = []
    for entry in value:
        if not isinstance(entry, dict) or not isinstance(entry.get("src"), str):
            continue
        src = _resolve(base, entry["src"])
        if src:
            icons.append(
                ManifestIcon(
                    src=src,
                    sizes=_string(entry, "sizes"),
                    type=_string(entry, "type"),
                    purpose=_string(entry, "purpose"),
                )
            )
    return tuple(icons)


def parse_manifest(body: bytes, url: str, base: str | None = None) -> Manifest:
    """Read a manifest body; ``base`` resolves its URLs (default ``url``, a data: URI needs one)."""
    base = base or url
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        reason = error.msg if isinstance(error, json.JSONDecodeError) else type(error).__name__
        return Manifest(url=url, error=f"not valid JSON ({reason})")
    if not isinstance(data, dict):
        return Manifest(url=url, error=f"not a JSON object (a {type(data).__name__})")
    start_url = data.get("start_url")
    return Manifest(
        url=url,
        name=_string(data, "name"),
        short_name=_string(data, "short_name"),
        description=_string(data, "description"),
        lang=_string(data, "lang"),
        start_url=_resolve(base, start_url) if isinstance(start_url, str) else None,
        display=_string(data, "display"),
        theme_color=_string(data, "theme_color"),
        icons=_icons(data.get("icons"), base),
    )


def data_uri_bytes(uri: str) -> bytes:
    """The payload of a ``data:`` URI (RFC 2397); ValueError when it is malformed."""
    header, comma, payload = uri[5:].partition(",")
    if not comma:
        raise ValueError("no comma")
    raw = unquote_to_bytes(payload)
    if header.lower().replace(" ", "").endswith(";base64"):
        try:
            return base64.b64decode(b"".join(raw.split()), validate=True)
        except binascii.Error as error:
            raise ValueError(str(error)) from None
    return raw


def read_data_manifest(uri: str, base: str) -> Manifest:
    """A manifest inlined as a ``data:`` URI, read without any request."""
    try:
        body = data_uri_bytes(uri)
    except ValueError as error:
        return Manifest(url=uri, error=f"not a valid data: URI ({error})")
    if len(body) > MANIFEST_MAX_BYTES:
        return Manifest(url=uri, error="larger than 256 KiB")
    return parse_manifest(body, uri, base)


async def fetch_manifest(fetcher: Fetcher, url: str, base: str) -> Manifest:
    """The manifest at ``url`` through the guard (``data:`` read in place); never raises.

    ``base`` is the page's base URL, used for a ``data:`` manifest's relative URLs.
    """
    if url.startswith("data:"):
        return read_data_manifest(url, base)
    try:
        async with asyncio.timeout(MANIFEST_TIMEOUT_S):
            result = await fetcher.fetch(url, max_bytes=MANIFEST_MAX_BYTES, accept=ACCEPT)
    except TimeoutError:
        return Manifest(url=url, error="timed out")
    except TooLarge:
        return Manifest(url=url, error="larger than 256 KiB")
    except NetError as error:
        return Manifest(url=url, error=error.message)
    if not 200 <= result.status_code < 300:
        return Manifest(url=url, error=f"answered {result.status_code}")
    # Icons resolve against the URL the manifest was finally served from.
    return parse_manifest(result.body, url, result.final_url)
