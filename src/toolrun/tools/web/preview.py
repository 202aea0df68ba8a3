"""Link-preview fields with metascraper's fallback orders, every URL made absolute.

Each field is a list of (source, rule) pairs tried in order; the first rule
that yields a valid value wins, and the winning source is reported. Network
work (image probe, favicon reachability, oEmbed, the web app manifest) is done
by the tool, not here; a fetched manifest is read from ``site.extras["manifest"]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from toolrun.tools.web.links_header import links_with_rel
from toolrun.tools.web.manifest import Manifest
from toolrun.tools.web.page import Page, normalize_space
from toolrun.tools.web.site import Site

Rule = tuple[str, Callable[[Site], Any]]
_SIZE_IN_URL = re.compile(r"(\d{2,4})x(\d{2,4})")
_AUDIO_EXT = (".mp3", ".ogg", ".oga", ".wav", ".m4a", ".aac", ".flac", ".opus")
_VIDEO_EXT = (".mp4", ".webm", ".ogv", ".mov", ".m4v", ".m3u8")
_MEDIA_EXT = _AUDIO_EXT + _VIDEO_EXT
_BY_PREFIX = re.compile(r"^\s*by\s+", re.I)
MAX_IMAGES = 10


@dataclass(frozen=True)
class IconCandidate:
    """A favicon candidate and the rank metascraper-logo-favicon would give it."""

    url: str
    rel: str
    sizes: str | None
    width: int | None
    height: int | None
    type: str | None

    @property
    def square(self) -> bool:
        return self.width is None or self.width == self.height

    @property
    def priority(self) -> int:
        lowered = self.url.lower().split("?", 1)[0]
        if "apple" in lowered or "android" in lowered or lowered.endswith(".png"):
            factor = 5
        elif lowered.endswith((".jpg", ".jpeg")):
            factor = 4
        elif lowered.endswith(".svg"):
            factor = 3
        elif lowered.endswith(".ico"):
            factor = 2
        else:
            factor = 1
        return (self.width or 1) * factor


@dataclass
class Preview:
    """The extracted fields and where each one came from."""

    fields: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)


def first(
    site: Site, rules: list[Rule], validate: Callable[[Any], Any] | None = None
) -> tuple[Any, str | None]:
    """The first valid value of ``rules`` and the source that produced it."""
    for source, rule in rules:
        value = rule(site)
        if validate is not None and value is not None:
            value = validate(value)
        if value not in (None, "", []):
            return value, source
    return None, None


def _meta(*keys: str) -> Callable[[Site], str | None]:
    return lambda site: site.page.meta(*keys)


def _css_attr(selector: str, attr: str, needs: str | None = None) -> Callable[[Site], str | None]:
    """``attr`` of the first match of ``selector``; ``needs`` is a tag or attribute selector
    every match implies, so that a page without one skips the walk."""

    def rule(site: Site) -> str | None:
        if needs is not None and not site.page.has(needs):
            return None
        node = site.page.tree.css_first(selector)
        return (node.attributes.get(attr) or "").strip() or None if node is not None else None

    return rule


def _css_text(
    selector: str, strict: bool = False, needs: str | None = None
) -> Callable[[Site], str | None]:
    def rule(site: Site) -> str | None:
        if needs is not None and not site.page.has(needs):
            return None
        for node in site.page.tree.css(selector):
            text = normalize_space(node.text(deep=True))
            if text and (not strict or len(text.split()) >= 2):
                return text
        return None

    return rule


def _ld(*path: str) -> Callable[[Site], Any]:
    return lambda site: site.json_ld.first_value(*path)


def _ld_text(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("name") or value.get("url") or value.get("@id")
    return normalize_space(value) if isinstance(value, str) else None


def _url(site: Site) -> Callable[[Any], str | None]:
    def validate(value: Any) -> str | None:
        text = _ld_text(value) if not isinstance(value, str) else value.strip()
        if not text or text.lower().startswith("javascript:"):
            return None
        if text.startswith("data:"):
            return text if text.startswith("data:image/") else None
        return site.page.resolve(text)

    return validate


def _image_url(site: Site) -> Callable[[Any], str | None]:
    as_url = _url(site)

    def validate(value: Any) -> str | None:
        url = as_url(value)
        if url and urlsplit(url).path.lower().endswith(_MEDIA_EXT):
            return None
        return url

    return validate


def _text(value: Any) -> str | None:
    text = _ld_text(value)
    return text or None


def clean_author(value: Any) -> str | None:
    text = _ld_text(value)
    if not text or text.startswith(("http://", "https://")) or _looks_like_date(text):
        return None
    text = _BY_PREFIX.sub("", text).strip()
    return text[:100] or None


def _looks_like_date(text: str) -> bool:
    return normalize_date(text) is not None and any(ch.isdigit() for ch in text)


def normalize_date(value: Any) -> str | None:
    """ISO 8601 for ISO-ish strings and epochs (s or ms); None when it does not parse."""
    if isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
        number = float(value)
        while number > 1e11:  # ms, µs, ns
            number /= 1000
        return datetime.fromtimestamp(number, UTC).isoformat()
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.isoformat()


def _lang(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    primary = re.split(r"[-_]", value.strip())[0].lower()
    return primary if re.fullmatch(r"[a-z]{2,3}", primary) else None


def _publisher_from_title(site: Site) -> str | None:
    title = site.page.title or ""
    for separator in (" | ", " - ", " \u2014 ", " \u2013 ", " \u00b7 "):
        if separator in title:
            return title.rsplit(separator, 1)[1].strip() or None
    return None


def _first_img(site: Site) -> str | None:
    for node in site.page.elements("img"):
        if "src" not in node.attrs:
            continue
        if (node.attributes.get("aria-hidden") or "").lower() != "true":
            return node.attributes.get("src")
    return None


def _square_logo(value: Any) -> Any:
    if isinstance(value, dict):
        width, height = value.get("width"), value.get("height")
        if width is not None and height is not None and str(width) != str(height):
            return None
        return value.get("url") or value.get("contentUrl")
    return value


def _ld_logo(site: Site) -> Any:
    for entity in site.json_ld.entities:
        for holder in ("brand", "organization", "place", "product", "service", "publisher"):
            nested = entity.data.get(holder)
            if isinstance(nested, dict) and nested.get("logo"):
                return _square_logo(nested["logo"])
        if entity.data.get("logo"):
            return _square_logo(entity.data["logo"])
    return None


def _manifest(member: str) -> Callable[[Site], Any]:
    """A member of the fetched manifest (``best_icon`` gives the logo's URL)."""

    def rule(site: Site) -> Any:
        manifest = site.extras.get("manifest")
        if not isinstance(manifest, Manifest) or manifest.error:
            return None
        if member == "best_icon":
            icon = manifest.best_icon()
            return icon.src if icon else None
        return getattr(manifest, member)

    return rule


def _alternate_x_default(site: Site) -> str | None:
    for node in site.page.head_nodes("link[hreflang]"):
        if (node.attributes.get("hreflang") or "").lower() == "x-default":
            return node.attributes.get("href")
    return None


def _canonical(site: Site) -> str | None:
    for node in site.page.head_nodes("link[rel]"):
        if "canonical" in (node.attributes.get("rel") or "").lower().split():
            return node.attributes.get("href")
    links = links_with_rel(site.page.header_values("link"), "canonical")
    return links[0][0] if links else None


TITLE: list[Rule] = [
    ("og:title", _meta("og:title")),
    ("twitter:title", _meta("twitter:title")),
    ("<title>", lambda site: site.page.title),
    ("json-ld headline", _ld("headline")),
    (".post-title", _css_text(".post-title")),
    (".entry-title", _css_text(".entry-title")),
    ("h1[class*=title] a", _css_text("h1[class*=title] a")),
    ("h1[class*=title]", _css_text("h1[class*=title]")),
]
DESCRIPTION: list[Rule] = [
    ("og:description", _meta("og:description")),
    ("twitter:description", _meta("twitter:description")),
    ("meta description", _meta("description")),
    (
        "itemprop description",
        _css_attr("meta[itemprop=description]", "content", needs="[itemprop]"),
    ),
    ("json-ld articleBody", _ld("articleBody")),
    ("json-ld description", _ld("description")),
    ("manifest description", _manifest("description")),
]
IMAGE: list[Rule] = [
    ("og:image:secure_url", _meta("og:image:secure_url")),
    ("og:image:url", _meta("og:image:url")),
    ("og:image", _meta("og:image")),
    ("twitter:image:src", _meta("twitter:image:src")),
    ("twitter:image", _meta("twitter:image")),
    ("itemprop image", _css_attr("meta[itemprop=image]", "content", needs="[itemprop]")),
    ("json-ld image", _ld("image")),
    ("article img", _css_attr("article img[src]", "src", needs="article")),
    ("#content img", _css_attr("#content img[src]", "src")),
    ("img[alt*=author]", _css_attr("img[alt*=author i][src]", "src")),
    ("first img", _first_img),
]
LOGO: list[Rule] = [
    ("og:logo", _meta("og:logo")),
    ("itemprop logo", _css_attr("meta[itemprop=logo]", "content", needs="[itemprop]")),
    ("img[itemprop=logo]", _css_attr("img[itemprop=logo]", "src", needs="[itemprop]")),
    ("[itemprop=logo] img", _css_attr("[itemprop=logo] img", "src", needs="[itemprop]")),
    ("json-ld logo", _ld_logo),
    ("manifest icon", _manifest("best_icon")),
]
AUTHOR: list[Rule] = [
    ("json-ld author", _ld("author")),
    ("json-ld brand", _ld("brand")),
    ("meta author", _meta("author")),
    ("article:author", _meta("article:author")),
    ("itemprop author name", _css_text("[itemprop*=author] [itemprop=name]", needs="[itemprop]")),
    ("itemprop author", _css_text("[itemprop*=author]", needs="[itemprop]")),
    ("rel=author", _css_text("[rel=author]")),
    ("a[class*=author]", _css_text("a[class*=author]", strict=True)),
    ("[class*=author] a", _css_text("[class*=author] a", strict=True)),
    ("a[href*=/author/]", _css_text("a[href*='/author/']", strict=True)),
    ("[class*=byline]", _css_text("[class*=byline]", strict=True)),
    ("twitter:creator", _meta("twitter:creator")),
]
PUBLISHED: list[Rule] = [
    ("json-ld datePublished", _ld("datePublished")),
    ("json-ld dateCreated", _ld("dateCreated")),
    (
        "article:published_time",
        _meta("article:published_time", "og:published_time", "published_time"),
    ),
    (
        "itemprop datePublished",
        lambda s: (
            _css_attr("[itemprop=datePublished i]", "content", needs="[itemprop]")(s)
            or _css_attr("[itemprop=datePublished i]", "datetime", needs="[itemprop]")(s)
        ),
    ),
    ("meta date", _meta("date", "dc.date", "dcterms.created")),
    ("time[datetime]", _css_attr("time[datetime]", "datetime", needs="time")),
]
MODIFIED: list[Rule] = [
    ("json-ld dateModified", _ld("dateModified")),
    ("article:modified_time", _meta("article:modified_time", "og:updated_time", "modified_time")),
    (
        "itemprop dateModified",
        _css_attr("[itemprop=dateModified i]", "content", needs="[itemprop]"),
    ),
]
SITE_NAME: list[Rule] = [
    ("json-ld publisher", _ld("publisher", "name")),
    ("og:site_name", _meta("og:site_name")),
    ("application-name", _meta("application-name")),
    ("apple-mobile-web-app-title", _meta("apple-mobile-web-app-title")),
    ("meta publisher", _meta("publisher")),
    ("twitter:app:name", _meta("twitter:app:name:iphone", "twitter:app:name:googleplay")),
    ("manifest short_name", _manifest("short_name")),
    ("manifest name", _manifest("name")),
    ("title suffix", _publisher_from_title),
]
LANG: list[Rule] = [
    ("og:locale", _meta("og:locale")),
    ("itemprop inLanguage", _css_attr("meta[itemprop=inLanguage]", "content", needs="[itemprop]")),
    ("html lang", lambda site: site.page.lang),
    ("manifest lang", _manifest("lang")),
]
URL: list[Rule] = [
    ("og:url", _meta("og:url")),
    ("twitter:url", _meta("twitter:url")),
    ("canonical", _canonical),
    ("x-default alternate", _alternate_x_default),
    ("final URL", lambda site: site.page.final_url),
]
TYPE: list[Rule] = [
    ("og:type", _meta("og:type")),
    (
        "meta medium",
        lambda site: {"image": "photo"}.get(
            site.page.meta("medium") or "", site.page.meta("medium")
        ),
    ),
]
VIDEO: list[Rule] = [
    ("og:video:secure_url", _meta("og:video:secure_url")),
    ("og:video:url", _meta("og:video:url")),
    ("og:video", _meta("og:video")),
    ("twitter:player:stream", _meta("twitter:player:stream")),
    ("json-ld contentUrl", _ld("contentUrl")),
    ("<video src>", _css_attr("video[src]", "src", needs="video")),
    ("<video><source>", _css_attr("video source[src]", "src", needs="video")),
]
AUDIO: list[Rule] = [
    ("og:audio:secure_url", _meta("og:audio:secure_url")),
    ("og:audio:url", _meta("og:audio:url")),
    ("og:audio", _meta("og:audio")),
    ("<audio src>", _css_attr("audio[src]", "src", needs="audio")),
    ("<audio><source>", _css_attr("audio source[src]", "src", needs="audio")),
]


def icon_candidates(page: Page) -> list[IconCandidate]:
    """Icons declared by the page, best first: square before non-square, then by priority."""
    found: list[IconCandidate] = []
    for node in page.elements("link"):
        if "rel" not in node.attrs or "href" not in node.attrs:
            continue
        rel = (node.attributes.get("rel") or "").lower()
        if "icon" not in rel:
            continue
        url = page.resolve(node.attributes.get("href"))
        if not url:
            continue
        sizes = node.attributes.get("sizes")
        width, height = _icon_size(sizes, url)
        found.append(IconCandidate(url, rel, sizes, width, height, node.attributes.get("type")))
    for node in page.metas:
        if "name" not in node.attrs or "content" not in node.attrs:
            continue
        if "msapplication" in (node.attributes.get("name") or "").lower():
            content = node.attributes.get("content") or ""
            if not content.startswith("#") and (url := page.resolve(content)):
                width, height = _icon_size(None, url)
                found.append(IconCandidate(url, "msapplication", None, width, height, None))
    unique = list({candidate.url: candidate for candidate in reversed(found)}.values())
    return sorted(unique, key=_rank)


def manifest_icon_candidates(manifest: Manifest) -> list[IconCandidate]:
    """The manifest's icons (monochrome ones left out), ranked as ``icon_candidates`` ranks."""
    found = []
    for icon in manifest.icons:
        if "monochrome" in icon.purposes:
            continue
        width, height = icon.dimensions or _icon_size(None, icon.src)
        found.append(IconCandidate(icon.src, "manifest", icon.sizes, width, height, icon.type))
    return sorted(found, key=_rank)


def _rank(candidate: IconCandidate) -> tuple[bool, int]:
    return (not candidate.square, -candidate.priority)


def _icon_size(sizes: str | None, url: str) -> tuple[int | None, int | None]:
    if sizes and sizes.strip().lower() != "any":
        best = (0, 0)
        for size in sizes.lower().split():
            width, _, height = size.partition("x")
            if (
                width.isdigit()
                and height.isdigit()
                and int(width) * int(height) > best[0] * best[1]
            ):
                best = (int(width), int(height))
        if best[0]:
            return best
    match = _SIZE_IN_URL.search(url)
    return (int(match.group(1)), int(match.group(2))) if match else (None, None)


def feeds(page: Page) -> list[dict[str, str]]:
    """RSS, JSON Feed and Atom links of the page."""
    kinds = ("application/rss+xml", "application/feed+json", "application/atom+xml")
    found = []
    for node in page.head_nodes("link[type][href]"):
        kind = (node.attributes.get("type") or "").lower()
        if kind in kinds and (url := page.resolve(node.attributes.get("href"))):
            found.append({"url": url, "type": kind, "title": node.attributes.get("title") or ""})
    return found


def oembed_links(page: Page) -> list[dict[str, str]]:
    """oEmbed endpoints the page declares (JSON first)."""
    found = []
    for kind, fmt in (("application/json+oembed", "json"), ("text/xml+oembed", "xml")):
        for node in page.head_nodes("link[type][href]"):
            if (node.attributes.get("type") or "").lower() == kind:
                url = page.resolve(node.attributes.get("href"))
                if url:
                    found.append({"url": url, "format": fmt})
    return found


def theme_colors(page: Page) -> list[dict[str, str | None]]:
    colors = [
        {"color": (n.attributes.get("content") or "").strip(), "media": n.attributes.get("media")}
        for n in page.head_nodes("meta[name=theme-color i]")
    ]
    return [c for c in colors if c["color"]]


def og_images(site: Site) -> list[dict[str, Any]]:
    """All og:image entries (structured properties zipped to their root), at most 10."""
    images: list[dict[str, Any]] = []
    page = site.page
    for node in page.metas:
        key = (node.attributes.get("property") or node.attributes.get("name") or "").lower()
        content = (node.attributes.get("content") or "").strip()
        if not content:
            continue
        if key in ("og:image", "og:image:url"):
            url = page.resolve(content)
            if url and not (images and images[-1].get("url") == url):
                images.append({"url": url})
        elif key.startswith("og:image:") and images:
            images[-1].setdefault(
                key.removeprefix("og:image:").replace("secure_url", "secureUrl"), content
            )
    return images[:MAX_IMAGES]


def extract_preview(site: Site) -> Preview:
    """Every link-preview field with the winning source (no network access)."""
    preview = Preview()
    plan: list[tuple[str, list[Rule], Callable[[Any], Any] | None]] = [
        ("title", TITLE, _text),
        ("description", DESCRIPTION, _text),
        ("image", IMAGE, _image_url(site)),
        ("logo", LOGO, _url(site)),
        ("author", AUTHOR, clean_author),
        ("publishedAt", PUBLISHED, normalize_date),
        ("modifiedAt", MODIFIED, normalize_date),
        ("siteName", SITE_NAME, _text),
        ("lang", LANG, _lang),
        ("url", URL, _url(site)),
        ("type", TYPE, _text),
        ("video", VIDEO, _url(site)),
        ("audio", AUDIO, _url(site)),
    ]
    for name, rules, validate in plan:
        value, source = first(site, rules, validate)
        preview.fields[name] = value
        if source:
            preview.sources[name] = source
    if preview.fields["type"] is None:
        preview.fields["type"] = "website"
        preview.sources["type"] = "default"
    canonical = _canonical(site)
    preview.fields["canonical"] = site.page.resolve(canonical) if canonical else None
    return preview
