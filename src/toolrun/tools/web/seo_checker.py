"""seo-checker: Lighthouse's browser-free SEO audits plus the open-source analyzers' checks."""

from __future__ import annotations

from pydantic import Field

from toolrun.tools.base import ToolContext, ToolDefinition
from toolrun.tools.web.checker import base_fields, evaluate
from toolrun.tools.web.checks import CheckFunction
from toolrun.tools.web.checks.canonical import CANONICAL_CHECKS
from toolrun.tools.web.checks.content import CONTENT_CHECKS
from toolrun.tools.web.checks.crawl import CRAWL_CHECKS
from toolrun.tools.web.checks.discovery import DISCOVERY_CHECKS
from toolrun.tools.web.checks.images import IMAGE_CHECKS
from toolrun.tools.web.checks.keywords import check_keywords
from toolrun.tools.web.checks.links import LINK_CHECKS
from toolrun.tools.web.checks.performance import PERFORMANCE_CHECKS
from toolrun.tools.web.checks.probed import PROBED_CHECKS
from toolrun.tools.web.checks.security import SECURITY_CHECKS
from toolrun.tools.web.checks.social import check_open_graph, check_twitter_card
from toolrun.tools.web.checks.structured import STRUCTURED_CHECKS
from toolrun.tools.web.fetching import load_site, open_fetcher
from toolrun.tools.web.models import CamelModel, CheckerResult, UrlInput
from toolrun.tools.web.probes import probe_site
from toolrun.tools.web.site import Site

RELATED = ("meta-checker", "geo-checker", "link-preview", "domain-setup-checker", "dns-lookup")
SEO_CHECKS: tuple[CheckFunction, ...] = (
    *CRAWL_CHECKS,
    *CONTENT_CHECKS,
    *CANONICAL_CHECKS,
    *LINK_CHECKS,
    *IMAGE_CHECKS,
    *PROBED_CHECKS,
    check_keywords,
    *STRUCTURED_CHECKS,
    *DISCOVERY_CHECKS,
    check_open_graph,
    check_twitter_card,
    *PERFORMANCE_CHECKS,
    *SECURITY_CHECKS,
)


class SeoCheckerInput(UrlInput):
    """Body of POST /openapi/tools/seo-checker/execute."""


class PageFacts(CamelModel):
    """Headline facts about the page, for display next to the checks."""

    title: str | None
    description: str | None
    lang: str | None
    h1: list[str]
    word_count: int
    content_type: str
    encoding: str | None
    html_bytes: int


class SeoCheckerResult(CheckerResult):
    """SPEC's SEO checker result plus fetch facts and ``page``."""

    page: PageFacts = Field(description="Title, description, language and size of the page.")


def analyze(site: Site) -> SeoCheckerResult:
    """All SEO checks of an already fetched site (pure)."""
    site.page.index_elements(heading_text_levels=())
    checks, summary = evaluate(site, SEO_CHECKS)
    page = site.page
    facts = PageFacts(
        title=page.title,
        description=page.meta("description"),
        lang=page.lang,
        h1=page.h1_texts[:5],
        word_count=page.word_count,
        content_type=page.content_type,
        encoding=page.encoding,
        html_bytes=len(page.body),
    )
    return SeoCheckerResult.model_validate(
        {**base_fields(site, checks, summary, RELATED), "page": facts}
    )


async def run(payload: SeoCheckerInput, ctx: ToolContext) -> SeoCheckerResult:
    """Fetch the page with robots.txt and sitemap.xml (concurrently), probe its links,
    hreflang alternates and images (bounded by the job's deadline), then analyse it."""
    async with open_fetcher(ctx) as fetcher:
        site = await load_site(fetcher, str(payload.url), ("robots", "sitemap"))
        await probe_site(fetcher, site, ctx.deadline_at)
    return analyze(site)


DEFINITION = ToolDefinition(
    slug="seo-checker",
    kind="tool",
    action="seo-checker",
    category="website",
    name="SEO checker",
    description=(
        "Checks one page for search-engine readiness: indexability (meta robots, X-Robots-Tag, "
        "robots.txt), status and redirects, title and description, headings, canonical and "
        "hreflang, links (broken and redirecting targets probed), images (weight probed), "
        "structured data, sitemap, speed and HTTPS. Reports no "
        "ranking data and guarantees no indexing outcome."
    ),
    input_model=SeoCheckerInput,
    output_model=SeoCheckerResult,
    run=run,
    example={"url": "https://example.com/"},
    aliases=("seo-audit",),
)
