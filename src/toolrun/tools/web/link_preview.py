"""link-preview: the card a chat app would show for a URL, with every field's source.

Fields follow metascraper's fallback orders (``preview.py``). The chosen image
is fetched through the guard (first 64 KiB only) to tell whether it loads and
its real pixel size from its header; the favicon is the best-ranked declared
icon that loads, else /favicon.ico; the oEmbed JSON endpoint, when declared,
is fetched too. The web app manifest is fetched only when a field it can fill
(description, lang, site name, logo, favicon) is missing from the page. A URL
that is itself an image gives an image-only preview.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from toolrun.net.fetch import Fetcher, FetchResult
from toolrun.tools.base import ToolContext, ToolDefinition
from toolrun.tools.web.fetching import (
    choose_favicon,
    fetch_oembed,
    fetch_page,
    open_fetcher,
    probe_image,
    require_html,
)
from toolrun.tools.web.imagesize import sniff
from toolrun.tools.web.manifest import Manifest, fetch_manifest, manifest_link
from toolrun.tools.web.models import CamelModel, FetchFacts, RedirectHop, UrlInput
from toolrun.tools.web.page import Page
from toolrun.tools.web.preview import (
    Preview,
    extract_preview,
    feeds,
    icon_candidates,
    manifest_icon_candidates,
    oembed_links,
    og_images,
    theme_colors,
)
from toolrun.tools.web.site import Site

RELATED = ("meta-checker", "seo-checker", "geo-checker")


class LinkPreviewInput(UrlInput):
    """Body of POST /openapi/tools/link-preview/execute."""


class PreviewImage(CamelModel):
    """The preview image: where it is, whether it loads, and its real size."""

    url: str
    width: int | None = None
    height: int | None = None
    declared_width: int | None = None
    declared_height: int | None = None
    reachable: bool | None = None
    type: str | None = None
    alt: str | None = None
    error: str | None = None


class Favicon(CamelModel):
    """The chosen icon (None when none loads) and the candidates tried."""

    url: str | None
    type: str | None = None
    width: int | None = None
    height: int | None = None
    tried: list[str] = Field(default_factory=list)


class OEmbed(CamelModel):
    """A declared oEmbed endpoint and, for JSON, what it answered."""

    url: str
    format: str
    data: dict[str, Any] | None = None


class LinkPreviewResult(FetchFacts):
    """Preview fields; ``sources`` names the tag or rule each field came from."""

    title: str | None = None
    description: str | None = None
    image: PreviewImage | None = None
    images: list[dict[str, Any]] = Field(default_factory=list)
    favicon: Favicon | None = None
    logo: str | None = None
    site_name: str | None = None
    type: str = "website"
    canonical: str | None = None
    preview_url: str | None = None
    author: str | None = None
    published_at: str | None = None
    modified_at: str | None = None
    lang: str | None = None
    theme_color: str | None = None
    theme_colors: list[dict[str, Any]] = Field(default_factory=list)
    o_embed: OEmbed | None = None
    feeds: list[dict[str, str]] = Field(default_factory=list)
    video: str | None = None
    audio: str | None = None
    twitter: dict[str, str | None] = Field(default_factory=dict)
    content_type: str
    charset: str | None = None
    sources: dict[str, str] = Field(default_factory=dict)
    related_tools: list[str] = Field(default_factory=lambda: list(RELATED))


def _int(value: str | None) -> int | None:
    try:
        return int(float(value)) if value else None
    except ValueError:
        return None


def _facts(result: FetchResult | Page) -> dict[str, Any]:
    return {
        "url": result.url,
        "final_url": result.final_url,
        "status_code": result.status_code,
        "timing_ms": round(result.timing_ms, 1),
        "content_type": result.content_type,
        "charset": result.encoding,
    }


def analyze(site: Site, probes: dict[str, Any] | None = None) -> LinkPreviewResult:
    """Build the preview from a fetched page and the results of the network probes."""
    probes = probes or {}
    page = site.page
    preview = extract_preview(site)
    fields = preview.fields
    image = None
    if fields["image"]:
        declared = og_images(site)[:1]
        first = declared[0] if declared and declared[0]["url"] == fields["image"] else {}
        probe = probes.get("image") or {}
        image = PreviewImage(
            url=fields["image"],
            width=probe.get("width") or _int(first.get("width")),
            height=probe.get("height") or _int(first.get("height")),
            declared_width=_int(first.get("width")),
            declared_height=_int(first.get("height")),
            reachable=probe.get("reachable"),
            type=probe.get("type") or first.get("type"),
            alt=first.get("alt") or page.meta("twitter:image:alt"),
            error=probe.get("error"),
        )
    favicon_probe = probes.get("favicon")
    favicon = Favicon.model_validate(favicon_probe) if favicon_probe else None
    if favicon is None:
        candidates = icon_candidates(page)
        fallback = candidates[0].url if candidates else page.origin + "/favicon.ico"
        favicon = Favicon(url=fallback)
    logo = fields["logo"]
    sources = dict(preview.sources)
    if logo is None and favicon.url:
        logo, sources["logo"] = favicon.url, "favicon"
    colors = theme_colors(page)
    oembed = probes.get("oembed")
    return LinkPreviewResult.model_validate(
        {
            **_facts(page),
            "fetched_at": page.fetched_at,
            "redirects": page.redirects,
            "title": fields["title"],
            "description": fields["description"],
            "image": image,
            "images": og_images(site),
            "favicon": favicon,
            "logo": logo,
            "site_name": fields["siteName"],
            "type": fields["type"],
            "canonical": fields["canonical"],
            "preview_url": fields["url"],
            "author": fields["author"],
            "published_at": fields["publishedAt"],
            "modified_at": fields["modifiedAt"],
            "lang": fields["lang"],
            "theme_color": colors[0]["color"] if colors else page.meta("msapplication-tilecolor"),
            "theme_colors": colors,
            "o_embed": oembed,
            "feeds": feeds(page),
            "video": fields["video"],
            "audio": fields["audio"],
            "twitter": {k: page.meta(f"twitter:{k}") for k in ("card", "site", "creator")},
            "sources": sources,
        }
    )


def image_only(result: FetchResult) -> LinkPreviewResult:
    """The preview of a URL that is itself an image."""
    info = sniff(result.body)
    image = PreviewImage(
        url=result.final_url,
        width=info.width if info else None,
        height=info.height if info else None,
        reachable=info is not None,
        type=info.type if info else result.content_type,
    )
    return LinkPreviewResult.model_validate(
        {
            **_facts(result),
            "fetched_at": datetime.now(UTC),
            "redirects": [
                RedirectHop(url=r.url, status_code=r.status_code, location=r.location)
                for r in result.redirects
            ],
            "image": image,
            "type": "image",
            "preview_url": result.final_url,
            "sources": {"image": "response body"},
        }
    )


def manifest_can_help(preview: Preview, page: Page) -> bool:
    """Whether the manifest could fill a field the page leaves empty (or only guesses)."""
    fields = preview.fields
    return (
        fields["description"] is None
        or fields["lang"] is None
        or fields["logo"] is None
        or preview.sources.get("siteName") in (None, "title suffix")
        or not icon_candidates(page)
    )


async def _favicon(
    fetcher: Fetcher, page: Page, manifest: Awaitable[Manifest] | None
) -> dict[str, Any]:
    """The best reachable icon; the manifest's icons stand in when the page declares none."""
    candidates = icon_candidates(page)
    if not candidates and manifest is not None:
        candidates = manifest_icon_candidates(await manifest)
    return await choose_favicon(fetcher, candidates, page.final_url)


async def run(payload: LinkPreviewInput, ctx: ToolContext) -> LinkPreviewResult:
    """Fetch the page, then probe image, favicon, oEmbed and manifest concurrently."""
    async with open_fetcher(ctx) as fetcher:
        result = await fetch_page(fetcher, str(payload.url))
        if result.content_type.startswith("image/"):
            return image_only(result)
        site = Site(page=require_html(result))
        page = site.page
        preview = extract_preview(site)
        endpoints = [e for e in oembed_links(page) if e["format"] == "json"]
        manifest_url = manifest_link(page)
        manifest = None
        if manifest_url and manifest_can_help(preview, page):
            manifest = asyncio.ensure_future(fetch_manifest(fetcher, manifest_url, page.base_url))
        jobs: dict[str, Awaitable[Any]] = {"favicon": _favicon(fetcher, page, manifest)}
        if preview.fields["image"]:
            jobs["image"] = probe_image(fetcher, preview.fields["image"])
        if endpoints:
            jobs["oembed_data"] = fetch_oembed(fetcher, endpoints[0]["url"])
        if manifest is not None:
            jobs["manifest"] = manifest
        values = await asyncio.gather(*jobs.values())
    probes = dict(zip(jobs, values, strict=True))
    if "manifest" in probes:
        site.extras["manifest"] = probes.pop("manifest")
    declared = oembed_links(page)
    if declared:
        probes["oembed"] = {**declared[0], "data": probes.pop("oembed_data", None)}
    return analyze(site, probes)


DEFINITION = ToolDefinition(
    slug="link-preview",
    kind="tool",
    action="link-preview",
    category="website",
    name="Link preview",
    description=(
        "Builds the preview card of a URL: title, description, image (checked to load, with its "
        "real size), favicon, logo, site name, type, canonical URL, author, dates, language, "
        "theme colour, oEmbed and feeds, using Open Graph, Twitter, JSON-LD and HTML fallbacks."
    ),
    input_model=LinkPreviewInput,
    output_model=LinkPreviewResult,
    run=run,
    example={"url": "https://example.com/"},
)
