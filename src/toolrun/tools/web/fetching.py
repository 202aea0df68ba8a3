"""Fetching for the website tools: the page and its site files, concurrently, through the guard.

robots.txt, sitemap.xml, llms.txt and the other site files a tool names are
requested once per job, at the same time as the page, from the origin of the
submitted URL; if the page redirects to another origin they are fetched again
from the final origin (Lighthouse reads them at the final URL's origin).
Network errors become ``ToolFailure`` with the fetcher's public message: 400,
or 413 for a page over the size cap.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from toolrun.net.errors import NetError, format_seconds
from toolrun.net.fetch import Fetcher, FetchResult
from toolrun.tools.base import ToolContext, ToolFailure
from toolrun.tools.web.ai_files import (
    AI_JSON_MAX_BYTES,
    DISCOVERY_MAX_BYTES,
    EXTRA_FILE_TIMEOUT_S,
    LLMS_FULL_MAX_BYTES,
    MARKDOWN_MIRROR,
    MARKDOWN_MIRROR_MAX_BYTES,
    choose_llms_file,
    markdown_mirror_path,
)
from toolrun.tools.web.imagesize import HEADER_BYTES, sniff
from toolrun.tools.web.page import HTML_TYPES, Page
from toolrun.tools.web.preview import IconCandidate
from toolrun.tools.web.site import Site, SiteFile

PAGE_MAX_BYTES = 5 * 1024 * 1024
SITE_FILE_MAX_BYTES = 512 * 1024  # Google reads the first 500 KiB of robots.txt
OEMBED_MAX_BYTES = 256 * 1024
PROBE_TIMEOUT_S = 8.0
MAX_ICON_PROBES = 3
MARKDOWN = "text/markdown,text/plain;q=0.9,*/*;q=0.5"
JSON = "application/json,*/*;q=0.5"
DEADLINE_SHARE = 0.8  # of the job's remaining time a site file may take


class SiteFileSpec(NamedTuple):
    path: str | Callable[[str], str]  # or the path for a page URL (the Markdown mirror)
    accept: str
    max_bytes: int = SITE_FILE_MAX_BYTES
    timeout_s: float | None = None  # None: the fetcher's own timeout


SITE_FILES = {
    "robots": SiteFileSpec("/robots.txt", "text/plain,*/*;q=0.5"),
    "sitemap": SiteFileSpec("/sitemap.xml", "application/xml,text/xml;q=0.9,*/*;q=0.5"),
    "llms": SiteFileSpec("/llms.txt", MARKDOWN),
    "llms-well-known": SiteFileSpec(
        "/.well-known/llms.txt", MARKDOWN, timeout_s=EXTRA_FILE_TIMEOUT_S
    ),
    "llms-full": SiteFileSpec(
        "/llms-full.txt", MARKDOWN, LLMS_FULL_MAX_BYTES, EXTRA_FILE_TIMEOUT_S
    ),
    "llms-full-well-known": SiteFileSpec(
        "/.well-known/llms-full.txt", MARKDOWN, LLMS_FULL_MAX_BYTES, EXTRA_FILE_TIMEOUT_S
    ),
    "ai-txt-well-known": SiteFileSpec(
        "/.well-known/ai.txt", MARKDOWN, DISCOVERY_MAX_BYTES, EXTRA_FILE_TIMEOUT_S
    ),
    "ai-txt": SiteFileSpec("/ai.txt", MARKDOWN, DISCOVERY_MAX_BYTES, EXTRA_FILE_TIMEOUT_S),
    "agents-md": SiteFileSpec("/AGENTS.md", MARKDOWN, DISCOVERY_MAX_BYTES, EXTRA_FILE_TIMEOUT_S),
    "llms-docs": SiteFileSpec("/docs/llms.txt", MARKDOWN, timeout_s=EXTRA_FILE_TIMEOUT_S),
    **{
        name: SiteFileSpec(path, JSON, AI_JSON_MAX_BYTES, EXTRA_FILE_TIMEOUT_S)
        for name, path in (
            ("ai-summary-json", "/ai/summary.json"),
            ("ai-faq-json", "/ai/faq.json"),
            ("ai-service-json", "/ai/service.json"),
            ("agent-card", "/.well-known/agent-card.json"),
            ("ai-plugin", "/.well-known/ai-plugin.json"),
        )
    },
    MARKDOWN_MIRROR: SiteFileSpec(
        markdown_mirror_path, MARKDOWN, MARKDOWN_MIRROR_MAX_BYTES, EXTRA_FILE_TIMEOUT_S
    ),
}


@asynccontextmanager
async def open_fetcher(ctx: ToolContext) -> AsyncIterator[Fetcher]:
    """The worker's shared fetcher from ``ctx.services``, or a new one closed afterwards."""
    shared = ctx.services.get("fetcher")
    if shared is not None:
        yield shared
        return
    async with Fetcher(ctx.settings) as fetcher:
        yield fetcher


def failure(url: str, error: NetError) -> ToolFailure:
    """The job failure for a page that could not be fetched."""
    return ToolFailure(error.code, f"could not fetch {url}: {error.message}")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def looks_like_html(result: FetchResult) -> bool:
    if result.content_type in HTML_TYPES:
        return True
    if result.content_type and result.content_type not in {
        "text/plain",
        "application/octet-stream",
    }:
        return False
    start = (result.text or "")[:1024].lstrip().lower()
    return start.startswith(("<!doctype html", "<html", "<head", "<meta", "<title"))


async def fetch_page(fetcher: Fetcher, url: str) -> FetchResult:
    """GET the page; NetError -> ToolFailure."""
    try:
        return await fetcher.fetch(url, max_bytes=PAGE_MAX_BYTES)
    except NetError as error:
        raise failure(url, error) from None


def require_html(result: FetchResult) -> Page:
    """The parsed page, or a 400 failure for a response that is not HTML."""
    if not looks_like_html(result):
        kind = result.content_type or "no content type"
        raise ToolFailure(400, f"{result.final_url} is not an HTML page ({kind})")
    return Page.from_fetch(result)


def _time_limit(spec: SiteFileSpec, deadline_at: datetime | None) -> float | None:
    """The file's own bound, shortened to a share of the time left before the job's deadline."""
    if deadline_at is None:
        return spec.timeout_s
    left = max((deadline_at - datetime.now(UTC)).total_seconds() * DEADLINE_SHARE, 0.1)
    return left if spec.timeout_s is None else min(spec.timeout_s, left)


async def fetch_site_file(
    fetcher: Fetcher,
    origin: str,
    name: str,
    deadline_at: datetime | None = None,
    page_url: str = "",
) -> SiteFile:
    """One site file (the Markdown mirror of ``page_url``), its body truncated at the file's
    cap; a network error or timeout is recorded, never raised."""
    spec = SITE_FILES[name]
    url = origin + (spec.path if isinstance(spec.path, str) else spec.path(page_url))
    limit = _time_limit(spec, deadline_at)
    try:
        async with asyncio.timeout(limit):
            result = await fetcher.fetch(
                url, max_bytes=spec.max_bytes, accept=spec.accept, truncate=True
            )
    except NetError as error:
        return SiteFile(url=url, error=error.message)
    except TimeoutError:
        return SiteFile(url=url, error=f"timed out after {format_seconds(round(limit or 0, 1))}")
    text = result.text if result.text is not None else result.body.decode("utf-8", "replace")
    return SiteFile(
        url=url,
        status_code=result.status_code,
        content_type=result.content_type,
        text=text,
        truncated=result.truncated,
    )


async def _site_files(
    fetcher: Fetcher,
    origin: str,
    names: tuple[str, ...],
    deadline_at: datetime | None,
    page_url: str,
) -> dict[str, SiteFile]:
    files = await asyncio.gather(
        *(fetch_site_file(fetcher, origin, name, deadline_at, page_url) for name in names)
    )
    return dict(zip(names, files, strict=True))


async def fetch_site(
    fetcher: Fetcher,
    url: str,
    files: tuple[str, ...] = ("robots", "sitemap", "llms"),
    *,
    deadline_at: datetime | None = None,
) -> tuple[FetchResult, dict[str, SiteFile]]:
    """The page and the named site files, fetched concurrently; with ``deadline_at`` each
    file gets at most a share of the job's remaining time."""
    origin = origin_of(url)
    side = asyncio.ensure_future(_site_files(fetcher, origin, files, deadline_at, url))
    try:
        result = await fetch_page(fetcher, url)
    except BaseException:
        side.cancel()
        await asyncio.gather(side, return_exceptions=True)
        raise
    site_files = await side
    final_origin = origin_of(result.final_url)
    if files and final_origin != origin:
        site_files = await _site_files(fetcher, final_origin, files, deadline_at, result.final_url)
    elif MARKDOWN_MIRROR in files and (
        markdown_mirror_path(result.final_url) != markdown_mirror_path(url)
    ):  # redirected on the same origin: the final page's mirror
        site_files[MARKDOWN_MIRROR] = await fetch_site_file(
            fetcher, final_origin, MARKDOWN_MIRROR, deadline_at, result.final_url
        )
    return result, site_files


async def load_site(
    fetcher: Fetcher, url: str, files: tuple[str, ...], *, deadline_at: datetime | None = None
) -> Site:
    """Fetch the page and site files and build the ``Site`` the checks read."""
    result, site_files = await fetch_site(fetcher, url, files, deadline_at=deadline_at)
    page = require_html(result)
    return Site(
        page=page,
        robots_file=site_files.get("robots"),
        sitemap_file=site_files.get("sitemap"),
        llms_file=choose_llms_file(site_files),
        files=site_files,
    )


async def probe_image(fetcher: Fetcher, url: str) -> dict[str, Any]:
    """Fetch the first bytes of an image: reachable, type and real dimensions."""
    if url.startswith("data:"):
        return {
            "reachable": True,
            "type": url[5:].split(";", 1)[0] or None,
            "width": None,
            "height": None,
            "error": None,
        }
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            result = await fetcher.fetch(
                url, max_bytes=HEADER_BYTES, accept="image/*,*/*;q=0.5", truncate=True
            )
    except TimeoutError:
        return {"reachable": False, "error": "timed out"}
    except NetError as error:
        return {"reachable": False, "error": error.message}
    if not 200 <= result.status_code < 300:
        return {
            "reachable": False,
            "statusCode": result.status_code,
            "error": f"answered {result.status_code}",
        }
    info = sniff(result.body)
    if info is None:
        return {
            "reachable": False,
            "statusCode": result.status_code,
            "type": result.content_type,
            "error": f"not a recognised image ({result.content_type or 'no content type'})",
        }
    return {
        "reachable": True,
        "statusCode": result.status_code,
        "type": info.type,
        "width": info.width,
        "height": info.height,
        "error": None,
    }


async def choose_favicon(
    fetcher: Fetcher, candidates: list[IconCandidate], page_url: str
) -> dict[str, Any]:
    """The first reachable icon among the best declared ones, then /favicon.ico."""
    tried: list[str] = []
    urls = [c.url for c in candidates[:MAX_ICON_PROBES]] + [origin_of(page_url) + "/favicon.ico"]
    for url in dict.fromkeys(urls):
        probe = await probe_image(fetcher, url)
        tried.append(url)
        if probe.get("reachable"):
            return {
                "url": url,
                "type": probe.get("type"),
                "width": probe.get("width"),
                "height": probe.get("height"),
                "tried": tried,
            }
    return {"url": None, "tried": tried}


async def fetch_oembed(fetcher: Fetcher, url: str) -> dict[str, Any] | None:
    """The oEmbed JSON document at ``url`` (only the fields a preview needs)."""
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            result = await fetcher.fetch(
                url, max_bytes=OEMBED_MAX_BYTES, accept="application/json", truncate=False
            )
        data = json.loads(result.body) if 200 <= result.status_code < 300 else None
    except (NetError, TimeoutError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    keys = (
        "type",
        "version",
        "title",
        "author_name",
        "author_url",
        "provider_name",
        "provider_url",
        "thumbnail_url",
        "thumbnail_width",
        "thumbnail_height",
        "html",
        "width",
        "height",
    )
    return {key: data[key] for key in keys if key in data}
