"""geo-checker's AI files on loopback: llms.txt locations, llms-full.txt, ai.txt, AGENTS.md,
/ai/*.json and the page's Markdown mirror."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from tests.servers.http import HttpServer, Response
from tests.tools.web.conftest import make_ctx
from toolrun.config import Settings
from toolrun.tools.base import ToolContext
from toolrun.tools.web import geo_checker
from toolrun.tools.web.ai_files import (
    LLMS_FULL_MAX_BYTES,
    answer,
    choose_llms_file,
    markdown_mirror_path,
)
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import SiteFile

HTML = [("Content-Type", "text/html; charset=utf-8")]
TEXT = [("Content-Type", "text/plain; charset=utf-8")]
MARKDOWN = [("Content-Type", "text/markdown; charset=utf-8")]
LLMS = b"# Acme\n\n> Rockets.\n\n## Docs\n\n- [Manual](/manual.md): all of it\n"
FULL = b"# Acme\n\nThe whole manual in one file, five words.\n"
SPA = b"<!doctype html><html><head><title>App</title></head><body><div id=root></div></body></html>"
EXTRA_PATHS = (
    "/.well-known/llms.txt",
    "/docs/llms.txt",
    "/llms-full.txt",
    "/.well-known/llms-full.txt",
    "/.well-known/ai.txt",
    "/ai.txt",
    "/AGENTS.md",
    "/ai/summary.json",
    "/ai/faq.json",
    "/ai/service.json",
    "/.well-known/agent-card.json",
    "/.well-known/ai-plugin.json",
    "/index.html.md",  # the page's Markdown mirror
)
JSON = [("Content-Type", "application/json")]


def page() -> bytes:
    words = "<p>" + "Plenty of server rendered words about rockets. " * 40 + "</p>"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Rockets</title>'
        f"</head><body><main><h1>Rockets</h1>{words}</main></body></html>"
    ).encode()


async def geo(server: HttpServer, ctx: ToolContext) -> geo_checker.GeoCheckerResult:
    server.route("/", body=page(), headers=HTML)
    return await geo_checker.run(geo_checker.GeoCheckerInput(url=server.url("/")), ctx)


def by_id(result: geo_checker.GeoCheckerResult) -> dict[str, Check]:
    return {check.id: check for check in result.checks}


# -- llms.txt locations -------------------------------------------------------------


async def test_llms_txt_only_at_well_known_is_used(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/.well-known/llms.txt", body=LLMS, headers=MARKDOWN)
    result = await geo(http_server, ctx)
    check = by_id(result)["llms-txt"]
    url = http_server.url("/.well-known/llms.txt")
    assert result.llms_txt_url == url
    assert check.status == "pass"
    assert check.value["url"] == url
    assert f"Found at {url} ({http_server.url('/llms.txt')} answered 404)" in check.detail


async def test_llms_txt_html_fallback_gives_way_to_well_known(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route("/llms.txt", body=SPA, headers=HTML)
    http_server.route("/.well-known/llms.txt", body=LLMS, headers=TEXT)
    result = await geo(http_server, ctx)
    assert by_id(result)["llms-txt"].status == "pass"
    assert result.llms_txt_url == http_server.url("/.well-known/llms.txt")
    assert "answered 200 with an HTML page" in by_id(result)["llms-txt"].detail


async def test_llms_txt_html_fallback_without_well_known_still_fails(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route("/llms.txt", body=SPA, headers=[("Content-Type", "text/plain")])
    result = await geo(http_server, ctx)
    check = by_id(result)["llms-txt"]
    assert check.status == "fail"
    assert "HTML page" in check.detail
    assert check.value["url"] == http_server.url("/llms.txt")


async def test_llms_txt_at_root_wins_over_well_known(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/llms.txt", body=LLMS, headers=TEXT)
    http_server.route("/.well-known/llms.txt", body=b"# Other\n\n[x](/x)\n" * 4, headers=TEXT)
    result = await geo(http_server, ctx)
    assert result.llms_txt_url == http_server.url("/llms.txt")
    assert "Found at" not in by_id(result)["llms-txt"].detail


async def test_llms_txt_absent_everywhere_warns_naming_each_place(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route("/.well-known/llms.txt", body=SPA, headers=HTML)
    result = await geo(http_server, ctx)
    check = by_id(result)["llms-txt"]
    assert check.status == "warn"
    assert result.llms_txt_url is None
    assert check.detail == (
        f"{http_server.url('/llms.txt')} answered 404; "
        f"{http_server.url('/.well-known/llms.txt')} answered 200 with an HTML page; "
        f"{http_server.url('/docs/llms.txt')} answered 404."
    )


def test_choose_llms_file_prefers_a_text_answer() -> None:
    root = SiteFile(url="https://x.test/llms.txt", status_code=404, text="nope")
    known = SiteFile(url="https://x.test/.well-known/llms.txt", status_code=200, text="# A")
    error = SiteFile(url="https://x.test/llms.txt", error="timed out after 8 s")
    assert choose_llms_file({"llms": root, "llms-well-known": known}) is known
    assert choose_llms_file({"llms": error, "llms-well-known": known}) is known
    assert choose_llms_file({"llms": root}) is root
    assert choose_llms_file({}) is None
    assert answer(error) == "could not be fetched (timed out after 8 s)"
    assert answer(replace(known, text=" ")) == "answered 200 with an empty body"


# -- llms-full.txt ------------------------------------------------------------------


async def test_llms_full_txt_found_reports_size(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/llms-full.txt", body=FULL, headers=MARKDOWN)
    check = by_id(await geo(http_server, ctx))["llms-full-txt"]
    url = http_server.url("/llms-full.txt")
    assert check.status == "pass"
    assert check.value == {"url": url, "bytes": len(FULL), "words": 10, "truncated": False}
    assert check.detail == f"{url}: 10 words, {len(FULL)} bytes."
    assert check.recommendation is None


async def test_llms_full_txt_falls_back_to_well_known(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/llms-full.txt", body=SPA, headers=HTML)
    http_server.route("/.well-known/llms-full.txt", body=FULL, headers=TEXT)
    check = by_id(await geo(http_server, ctx))["llms-full-txt"]
    assert check.status == "pass"
    assert check.value["url"] == http_server.url("/.well-known/llms-full.txt")


async def test_llms_full_txt_html_fallback_warns(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/llms-full.txt", body=SPA, headers=[("Content-Type", "text/plain")])
    check = by_id(await geo(http_server, ctx))["llms-full-txt"]
    assert check.status == "warn"
    assert check.value == {
        "url": http_server.url("/llms-full.txt"),
        "status": 200,
        "contentType": "text/plain",
    }
    assert check.recommendation


async def test_llms_full_txt_missing_is_info(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/.well-known/llms-full.txt", status=500, body=b"oops")
    check = by_id(await geo(http_server, ctx))["llms-full-txt"]
    assert check.status == "info"
    assert [row["status"] for row in check.value] == [404, 500]
    assert check.detail.startswith(
        f"{http_server.url('/llms-full.txt')} answered 404; "
        f"{http_server.url('/.well-known/llms-full.txt')} answered 500. llms-full.txt is optional"
    )


async def test_llms_full_txt_oversize_is_read_up_to_the_cap(
    http_server: HttpServer, ctx: ToolContext
):
    body = b"# Big\n\n" + b"word " * (LLMS_FULL_MAX_BYTES // 4)
    http_server.route("/llms-full.txt", body=body, headers=TEXT)
    check = by_id(await geo(http_server, ctx))["llms-full-txt"]
    assert check.status == "pass"
    assert check.value["truncated"] is True
    assert check.value["bytes"] == LLMS_FULL_MAX_BYTES
    assert check.detail.endswith("(only the first 1 MiB read).")


# -- ai.txt, AGENTS.md ---------------------------------------------------------------


async def test_ai_discovery_files_present_pass(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/.well-known/ai.txt", body=b"User-Agent: *\nDisallow: /\n", headers=TEXT)
    http_server.route("/AGENTS.md", body=b"# Agents\n\nUse the API.\n", headers=MARKDOWN)
    http_server.route("/ai.txt", body=SPA, headers=HTML)  # a fallback page does not count
    check = by_id(await geo(http_server, ctx))["ai-discovery-files"]
    assert check.status == "pass"
    assert check.value == [
        {"url": http_server.url("/.well-known/ai.txt"), "status": 200, "present": True},
        {"url": http_server.url("/ai.txt"), "status": 200, "present": False},
        {"url": http_server.url("/AGENTS.md"), "status": 200, "present": True},
        *(
            {"url": http_server.url(path), "status": 404, "present": False, "json": False}
            for path in (
                "/ai/summary.json",
                "/ai/faq.json",
                "/ai/service.json",
                "/.well-known/agent-card.json",
                "/.well-known/ai-plugin.json",
            )
        ),
    ]
    assert check.detail == (
        f"Found 2 files: {http_server.url('/.well-known/ai.txt')}, {http_server.url('/AGENTS.md')}."
    )


async def test_ai_discovery_files_absent_is_info(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/AGENTS.md", body=SPA, headers=HTML)
    check = by_id(await geo(http_server, ctx))["ai-discovery-files"]
    assert check.status == "info"
    assert not any(row["present"] for row in check.value)
    assert "answered 200 with an HTML page" in check.detail


async def test_ai_discovery_file_over_its_cap_still_counts(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route("/ai.txt", body=b"a" * 1_000_000, headers=TEXT)
    check = by_id(await geo(http_server, ctx))["ai-discovery-files"]
    assert check.status == "pass"


# -- fetching: once each, concurrently, within the deadline ---------------------------


async def test_each_file_is_requested_once(http_server: HttpServer, ctx: ToolContext):
    await geo(http_server, ctx)
    paths = sorted(request.path for request in http_server.requests)
    assert paths == sorted(["/", "/robots.txt", "/sitemap.xml", "/llms.txt", *EXTRA_PATHS])


async def test_extra_files_are_fetched_concurrently(http_server: HttpServer, ctx: ToolContext):
    files = ("/robots.txt", "/sitemap.xml", "/llms.txt", *EXTRA_PATHS)
    for path in files:
        http_server.route(path, Response(status=404, delay=1.0))
    http_server.route("/", Response(body=page(), headers=HTML, delay=1.0))
    started = time.perf_counter()
    await geo_checker.run(geo_checker.GeoCheckerInput(url=http_server.url("/")), ctx)
    # the page, then the files side by side: ~2 s; one after another would be 10 s
    assert time.perf_counter() - started < len(files) / 2


@pytest.mark.parametrize("hanging", [EXTRA_PATHS, ("/robots.txt", "/llms.txt", *EXTRA_PATHS)])
async def test_hanging_files_end_within_the_deadline(
    http_server: HttpServer, settings: Settings, hanging: tuple[str, ...]
):
    for path in hanging:
        http_server.route(path, Response(status=200, body=b"late", delay=30))
    slow_fetcher = settings.model_copy(update={"http_timeout_s": 30})
    ctx = make_ctx(slow_fetcher)
    ctx = replace(ctx, deadline_at=datetime.now(UTC) + timedelta(seconds=3))
    started = time.perf_counter()
    result = await geo(http_server, ctx)
    # cut at 80 % of the 3 s left, not at the 30 s fetch timeout (loose: machines are noisy)
    assert time.perf_counter() - started < 10.0
    checks = by_id(result)
    assert checks["llms-full-txt"].status == "info"
    assert "timed out after" in checks["llms-full-txt"].detail
    assert checks["ai-discovery-files"].status == "info"


# -- /docs/llms.txt, /ai/*.json, the Markdown mirror ----------------------------------


async def test_llms_txt_under_docs_is_the_last_place_looked(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route("/docs/llms.txt", body=LLMS, headers=MARKDOWN)
    result = await geo(http_server, ctx)
    assert result.llms_txt_url == http_server.url("/docs/llms.txt")
    assert by_id(result)["llms-txt"].status == "pass"
    http_server.route("/.well-known/llms.txt", body=LLMS, headers=MARKDOWN)
    assert (await geo(http_server, ctx)).llms_txt_url == http_server.url("/.well-known/llms.txt")


async def test_ai_json_files_count_only_when_they_hold_json(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route(
        "/ai/summary.json", body=b'{"name": "Acme", "summary": "Rockets"}', headers=JSON
    )
    http_server.route("/ai/faq.json", body=b'{"faq": [', headers=JSON)  # cut short
    check = by_id(await geo(http_server, ctx))["ai-discovery-files"]
    assert check.status == "warn"
    rows = {row["url"]: row for row in check.value}
    assert rows[http_server.url("/ai/summary.json")] == {
        "url": http_server.url("/ai/summary.json"),
        "status": 200,
        "present": True,
        "json": True,
    }
    assert rows[http_server.url("/ai/faq.json")]["json"] is False
    assert rows[http_server.url("/ai/faq.json")]["present"] is False
    assert rows[http_server.url("/ai/service.json")] == {
        "url": http_server.url("/ai/service.json"),
        "status": 404,
        "present": False,
        "json": False,
    }
    assert http_server.url("/ai/faq.json") in check.detail
    assert f"found {http_server.url('/ai/summary.json')}" in check.detail


async def test_an_agent_card_counts_as_an_ai_discovery_file(
    http_server: HttpServer, ctx: ToolContext
):
    card = b'{"name": "Acme agent", "url": "https://acme.test/a2a", "skills": []}'
    http_server.route("/.well-known/agent-card.json", body=card, headers=JSON)
    check = by_id(await geo(http_server, ctx))["ai-discovery-files"]
    assert check.status == "pass"
    assert http_server.url("/.well-known/agent-card.json") in check.detail


async def test_ai_json_file_answered_with_the_spa_page_is_absent(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route("/ai/summary.json", body=SPA, headers=HTML)
    check = by_id(await geo(http_server, ctx))["ai-discovery-files"]
    assert check.status == "info"


async def test_markdown_mirror_found(http_server: HttpServer, ctx: ToolContext):
    http_server.route("/index.html.md", body=b"# Rockets\n\nPlenty of words.\n", headers=MARKDOWN)
    check = by_id(await geo(http_server, ctx))["markdown-mirror"]
    assert check.status == "pass"
    assert check.value == {
        "url": http_server.url("/index.html.md"),
        "status": 200,
        "words": 5,
        "truncated": False,
    }


async def test_markdown_mirror_that_is_the_spa_page_warns(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route("/index.html.md", body=SPA, headers=HTML)
    check = by_id(await geo(http_server, ctx))["markdown-mirror"]
    assert check.status == "warn"
    assert check.recommendation is not None


async def test_no_markdown_mirror_is_info(http_server: HttpServer, ctx: ToolContext):
    check = by_id(await geo(http_server, ctx))["markdown-mirror"]
    assert check.status == "info"
    assert check.value == {"url": http_server.url("/index.html.md"), "status": 404}
    assert "answered 404" in check.detail


async def test_markdown_mirror_follows_a_redirect_on_the_same_origin(
    http_server: HttpServer, ctx: ToolContext
):
    http_server.route("/old", Response(status=301, headers=[("Location", "/guide/rockets")]))
    http_server.route("/guide/rockets", body=page(), headers=HTML)
    http_server.route("/guide/rockets.md", body=b"# Rockets\n", headers=MARKDOWN)
    url = http_server.url("/old")
    result = await geo_checker.run(geo_checker.GeoCheckerInput(url=url), ctx)
    check = by_id(result)["markdown-mirror"]
    assert check.status == "pass"
    assert check.value["url"] == http_server.url("/guide/rockets.md")
    paths = [request.path for request in http_server.requests]
    assert paths.count("/old.md") == 1  # asked with the page, before the redirect was known
    assert paths.count("/guide/rockets.md") == 1


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://x.test/", "/index.html.md"),
        ("https://x.test", "/index.html.md"),
        ("https://x.test/docs/", "/docs/index.html.md"),
        ("https://x.test/docs/intro", "/docs/intro.md"),
        ("https://x.test/a.html?q=1#top", "/a.html.md"),
    ],
)
def test_markdown_mirror_path(url: str, path: str) -> None:
    assert markdown_mirror_path(url) == path
