"""geo-checker: readiness of a page for AI search, assistants and answer engines."""

from __future__ import annotations

from pydantic import Field

from toolrun.tools.base import ToolContext, ToolDefinition
from toolrun.tools.web.ai_files import (
    DISCOVERY_FILES,
    LLMS_FILES,
    LLMS_FULL_FILES,
    MARKDOWN_MIRROR,
)
from toolrun.tools.web.checker import base_fields, evaluate
from toolrun.tools.web.checks import CheckFunction
from toolrun.tools.web.checks.agents import check_agent_accessibility
from toolrun.tools.web.checks.canonical import check_canonical
from toolrun.tools.web.checks.content import (
    check_description,
    check_h1,
    check_heading_order,
    check_lang,
)
from toolrun.tools.web.checks.crawl import check_https, check_is_crawlable
from toolrun.tools.web.checks.discovery import check_feed, check_sitemap
from toolrun.tools.web.checks.geo import (
    check_ai_crawlers,
    check_author,
    check_content_signals,
    check_dates,
    check_faq,
    check_hidden_instructions,
    check_landmarks,
    check_llms_txt,
    check_quotable_content,
    check_rendered_text,
    crawler_access,
)
from toolrun.tools.web.checks.geo_files import (
    check_ai_discovery_files,
    check_llms_full_txt,
    check_markdown_mirror,
)
from toolrun.tools.web.checks.images import check_image_alt
from toolrun.tools.web.checks.performance import check_response_time
from toolrun.tools.web.checks.social import check_open_graph
from toolrun.tools.web.checks.structured import check_identity, check_structured_data
from toolrun.tools.web.checks.webmcp import check_webmcp
from toolrun.tools.web.fetching import load_site, open_fetcher
from toolrun.tools.web.models import CamelModel, CheckerResult, UrlInput
from toolrun.tools.web.site import Site

RELATED = ("seo-checker", "meta-checker", "link-preview", "domain-setup-checker")
FILES = (
    "robots",
    "sitemap",
    *LLMS_FILES,
    *LLMS_FULL_FILES,
    *DISCOVERY_FILES,
    MARKDOWN_MIRROR,
)
CHECKS: tuple[CheckFunction, ...] = (
    check_ai_crawlers,
    check_llms_txt,
    check_llms_full_txt,
    check_ai_discovery_files,
    check_markdown_mirror,
    check_content_signals,
    check_is_crawlable,
    check_rendered_text,
    check_faq,
    check_author,
    check_dates,
    check_landmarks,
    check_quotable_content,
    check_hidden_instructions,
    check_structured_data,
    check_identity,
    check_agent_accessibility,
    check_webmcp,
    check_h1,
    check_heading_order,
    check_lang,
    check_description,
    check_canonical,
    check_open_graph,
    check_image_alt,
    check_sitemap,
    check_feed,
    check_https,
    check_response_time,
)


class GeoCheckerInput(UrlInput):
    """Body of POST /openapi/tools/geo-checker/execute."""


class CrawlerAccess(CamelModel):
    """Whether one AI crawler token may fetch the page under robots.txt."""

    token: str
    operator: str
    tier: str = Field(description="training, search or user (user-initiated fetches)")
    allowed: bool
    group: str | None = Field(description="robots.txt group that applied: the token or '*'")
    line: int | None = Field(description="robots.txt line of the deciding rule")


class GeoCheckerResult(CheckerResult):
    """The checker shape plus the AI crawler access table and the JSON-LD types found."""

    crawler_access: list[CrawlerAccess]
    structured_data_types: list[str]
    llms_txt_url: str | None


def analyze(site: Site) -> GeoCheckerResult:
    """All GEO checks of an already fetched site (pure)."""
    site.page.index_elements(heading_text_levels=(2, 3, 4))
    checks, summary = evaluate(site, CHECKS)
    return GeoCheckerResult.model_validate(
        {
            **base_fields(site, checks, summary, RELATED),
            "crawler_access": crawler_access(site),
            "structured_data_types": site.json_ld.types,
            "llms_txt_url": site.llms_file.url
            if site.llms is not None and site.llms_file
            else None,
        }
    )


async def run(payload: GeoCheckerInput, ctx: ToolContext) -> GeoCheckerResult:
    """Fetch the page with robots.txt, sitemap.xml, llms.txt and the AI files beside it
    (concurrently, each within a share of the deadline), then analyse."""
    async with open_fetcher(ctx) as fetcher:
        site = await load_site(fetcher, str(payload.url), FILES, deadline_at=ctx.deadline_at)
    return analyze(site)


DEFINITION = ToolDefinition(
    slug="geo-checker",
    kind="tool",
    action="geo-checker",
    category="website",
    name="GEO checker",
    description=(
        "Checks how ready a page is for AI search and assistants: AI crawler access in "
        "robots.txt (training, search, user fetchers), llms.txt and llms-full.txt, ai.txt, "
        "AGENTS.md, /ai/*.json and the page's Markdown version, Content-Signal, "
        "server-rendered text, JSON-LD with required properties, "
        "FAQ, author and date signals."
    ),
    input_model=GeoCheckerInput,
    output_model=GeoCheckerResult,
    run=run,
    example={"url": "https://example.com/"},
    aliases=("geo",),
)
