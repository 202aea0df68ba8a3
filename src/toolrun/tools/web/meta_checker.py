"""meta-checker: the page's meta tags, social cards and icons, inventoried and checked."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from toolrun.tools.base import ToolContext, ToolDefinition
from toolrun.tools.web.checker import base_fields, evaluate
from toolrun.tools.web.checks import CheckFunction
from toolrun.tools.web.checks.canonical import check_canonical, check_hreflang
from toolrun.tools.web.checks.content import (
    check_charset,
    check_description,
    check_description_length,
    check_head_in_body,
    check_lang,
    check_meta_keywords,
    check_single_title,
    check_title,
    check_title_length,
    check_viewport,
)
from toolrun.tools.web.checks.discovery import check_favicon, check_manifest, check_theme_color
from toolrun.tools.web.checks.meta import (
    check_duplicate_tags,
    check_meta_robots,
    link_inventory,
    meta_inventory,
)
from toolrun.tools.web.checks.social import SOCIAL_CHECKS
from toolrun.tools.web.fetching import choose_favicon, load_site, open_fetcher, probe_image
from toolrun.tools.web.manifest import fetch_manifest, manifest_link
from toolrun.tools.web.models import CamelModel, CheckerResult, UrlInput
from toolrun.tools.web.preview import icon_candidates
from toolrun.tools.web.site import Site

RELATED = ("link-preview", "seo-checker", "geo-checker")
CHECKS: tuple[CheckFunction, ...] = (
    check_title,
    check_title_length,
    check_single_title,
    check_description,
    check_description_length,
    check_viewport,
    check_charset,
    check_lang,
    check_meta_robots,
    check_canonical,
    check_hreflang,
    *SOCIAL_CHECKS,
    check_favicon,
    check_theme_color,
    check_manifest,
    check_duplicate_tags,
    check_meta_keywords,
    check_head_in_body,
)


class MetaCheckerInput(UrlInput):
    """Body of POST /openapi/tools/meta-checker/execute."""


class TagInventory(CamelModel):
    """Every <title>, <meta> and <link> of the document (at most 200 of each)."""

    title: str | None
    metas: list[dict[str, Any]]
    links: list[dict[str, Any]]


class MetaCheckerResult(CheckerResult):
    """The checker shape plus the tag inventory."""

    tags: TagInventory


def analyze(site: Site) -> MetaCheckerResult:
    """All meta checks of an already fetched page (pure; probes are read from ``site.extras``)."""
    checks, summary = evaluate(site, CHECKS)
    tags = TagInventory(
        title=site.page.title, metas=meta_inventory(site), links=link_inventory(site)
    )
    return MetaCheckerResult.model_validate(
        {**base_fields(site, checks, summary, RELATED), "tags": tags}
    )


async def run(payload: MetaCheckerInput, ctx: ToolContext) -> MetaCheckerResult:
    """Fetch the page, then probe og:image, the favicon and the manifest concurrently."""
    async with open_fetcher(ctx) as fetcher:
        site = await load_site(fetcher, str(payload.url), ())
        page = site.page
        jobs: dict[str, Awaitable[object]] = {
            "favicon_probe": choose_favicon(fetcher, icon_candidates(page), page.final_url)
        }
        image = page.resolve(page.meta("og:image:secure_url", "og:image", "og:image:url"))
        if image:
            jobs["og_image_probe"] = probe_image(fetcher, image)
        manifest_url = manifest_link(page)
        if manifest_url:
            jobs["manifest"] = fetch_manifest(fetcher, manifest_url, page.base_url)
        values = await asyncio.gather(*jobs.values())
    site.extras.update(zip(jobs, values, strict=True))
    return analyze(site)


DEFINITION = ToolDefinition(
    slug="meta-checker",
    kind="tool",
    action="meta-checker",
    category="website",
    name="Meta tag checker",
    description=(
        "Lists and checks a page's meta tags: title, description, viewport, charset, lang, "
        "robots, canonical, hreflang, Open Graph (with the og:image loaded and measured), "
        "Twitter card, favicon, theme-color and manifest."
    ),
    input_model=MetaCheckerInput,
    output_model=MetaCheckerResult,
    run=run,
    example={"url": "https://example.com/"},
    aliases=("meta",),
)
