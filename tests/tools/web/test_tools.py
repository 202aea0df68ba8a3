"""The four website tools end to end, against loopback HTTP(S) and DNS servers."""

from __future__ import annotations

import json
import socket
import time

import pytest

from tests.servers.http import HttpServer, Response
from tests.tools.web.conftest import image_bytes, make_ctx
from toolrun.config import Settings
from toolrun.net.fetch import Fetcher
from toolrun.tools.base import ToolContext, ToolFailure
from toolrun.tools.registry import Registry
from toolrun.tools.web import geo_checker, link_preview, meta_checker, seo_checker

HTML = [("Content-Type", "text/html; charset=utf-8")]
TEXT = [("Content-Type", "text/plain")]
PNG = [("Content-Type", "image/png")]
DEFINITIONS = [
    seo_checker.DEFINITION,
    meta_checker.DEFINITION,
    geo_checker.DEFINITION,
    link_preview.DEFINITION,
]


def page(head: str = "", body: str = "") -> bytes:
    words = "<p>" + "Plenty of server rendered words about rockets. " * 40 + "</p>"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<title>Rocket manuals and launch guides from Acme</title>"
        '<meta name="description" content="Step-by-step rocket manuals, launch checklists and '
        'safety notes written by the Acme engineering team.">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">{head}</head>'
        f"<body><main><h1>Rockets</h1>{words}{body}</main></body></html>"
    ).encode()


def serve_site(server: HttpServer, head: str = "", body: str = "") -> None:
    server.route("/", body=page(head, body), headers=HTML)
    server.route("/robots.txt", body=b"User-agent: *\nAllow: /\nSitemap: /bad\n", headers=TEXT)
    server.route(
        "/sitemap.xml",
        body=b"<urlset><url><loc>http://x/</loc></url></urlset>",
        headers=[("Content-Type", "application/xml")],
    )
    server.route(
        "/llms.txt",
        body=b"# Acme\n\n> Rockets.\n\n## Docs\n\n- [Manual](/manual.md): all of it\n",
        headers=TEXT,
    )


def paths(server: HttpServer) -> list[str]:
    return sorted(request.path for request in server.requests)


async def test_seo_checker_end_to_end(http_server: HttpServer, ctx: ToolContext) -> None:
    serve_site(http_server)
    http_server.redirect("/old", "/", status=301)
    result = await seo_checker.run(seo_checker.SeoCheckerInput(url=http_server.url("/old")), ctx)
    data = result.model_dump(mode="json", by_alias=True)
    assert data["url"] == http_server.url("/old")
    assert data["finalUrl"] == http_server.url("/")
    assert data["statusCode"] == 200
    assert data["redirects"] == [
        {"url": http_server.url("/old"), "statusCode": 301, "location": http_server.url("/")}
    ]
    assert set(data["summary"]) == {"status", "score", "passed", "warnings", "failed", "info"}
    assert 0 <= data["summary"]["score"] <= 100
    checks = {c["id"]: c for c in data["checks"]}
    assert set(checks["is-crawlable"]) == {
        "id",
        "title",
        "status",
        "value",
        "detail",
        "recommendation",
    }
    assert checks["robots-txt"]["status"] == "fail"  # "Sitemap: /bad"
    assert checks["sitemap"]["status"] == "pass"
    assert checks["is-on-https"]["status"] == "fail"
    assert data["relatedTools"][0] == "meta-checker"
    assert data["page"]["title"] == "Rocket manuals and launch guides from Acme"
    # Each site file is requested once, llms.txt not at all by the SEO checker.
    assert paths(http_server) == ["/", "/old", "/robots.txt", "/sitemap.xml"]


async def test_site_files_are_fetched_concurrently_with_the_page(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    serve_site(http_server)
    http_server.route("/", Response(body=page(), headers=HTML, delay=0.4))
    http_server.route(
        "/robots.txt", Response(body=b"User-agent: *\nAllow: /\n", headers=TEXT, delay=0.4)
    )
    http_server.route("/sitemap.xml", Response(status=404, delay=0.4))
    http_server.route("/llms.txt", Response(status=404, delay=0.4))
    started = time.perf_counter()
    await geo_checker.run(geo_checker.GeoCheckerInput(url=http_server.url("/")), ctx)
    assert time.perf_counter() - started < 1.0


async def test_site_files_come_from_the_final_origin(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    serve_site(http_server)
    http_server.redirect("/go", http_server.url("/", host="other.test"))
    result = await geo_checker.run(
        geo_checker.GeoCheckerInput(url=http_server.url("/go", host="site.test")), ctx
    )
    assert result.final_url == http_server.url("/", host="other.test")
    robots_hosts = [r.header("host") for r in http_server.requests if r.path == "/robots.txt"]
    assert robots_hosts[-1] == f"other.test:{http_server.port}"
    assert result.llms_txt_url == http_server.url("/llms.txt", host="other.test")


async def test_error_page_is_still_analysed(http_server: HttpServer, ctx: ToolContext) -> None:
    http_server.route("/gone", status=404, body=page(), headers=HTML)
    result = await seo_checker.run(seo_checker.SeoCheckerInput(url=http_server.url("/gone")), ctx)
    checks = {c.id: c for c in result.checks}
    assert result.status_code == 404
    assert checks["http-status-code"].status == "fail"
    assert checks["http-status-code"].value == 404
    assert result.summary.score is not None
    assert result.summary.score <= 49


async def test_geo_checker_end_to_end(http_server: HttpServer, ctx: ToolContext) -> None:
    serve_site(http_server)
    http_server.route("/robots.txt", body=b"User-agent: GPTBot\nDisallow: /\n", headers=TEXT)
    result = await geo_checker.run(geo_checker.GeoCheckerInput(url=http_server.url("/")), ctx)
    checks = {c.id: c for c in result.checks}
    assert checks["ai-crawler-access"].status == "pass"
    assert checks["llms-txt"].status == "pass"
    assert checks["server-rendered-text"].status == "pass"
    access = {row.token: row for row in result.crawler_access}
    assert not access["GPTBot"].allowed
    assert access["GPTBot"].line == 2
    assert access["OAI-SearchBot"].allowed
    assert result.related_tools[0] == "seo-checker"


async def test_meta_checker_probes_image_and_favicon(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    head = (
        '<meta property="og:image" content="/og.png"><link rel="icon" href="/missing.png">'
        '<meta property="og:title" content="T">'
    )
    http_server.route("/", body=page(head), headers=HTML)
    http_server.route("/og.png", body=image_bytes(120, 80), headers=PNG)
    http_server.route(
        "/favicon.ico", body=image_bytes(16, 16, "ICO"), headers=[("Content-Type", "image/x-icon")]
    )
    result = await meta_checker.run(meta_checker.MetaCheckerInput(url=http_server.url("/")), ctx)
    checks = {c.id: c for c in result.checks}
    assert checks["og-image"].value["width"] == 120
    assert checks["og-image"].value["reachable"]
    assert checks["og-image"].status == "warn"  # relative, and small
    assert checks["favicon"].value["url"] == http_server.url("/favicon.ico")
    assert checks["favicon"].value["tried"] == [
        http_server.url("/missing.png"),
        http_server.url("/favicon.ico"),
    ]
    assert result.tags.title == "Rocket manuals and launch guides from Acme"
    assert {
        "name": "viewport",
        "content": "width=device-width, initial-scale=1",
        "inHead": True,
    } in result.tags.metas
    assert "/robots.txt" not in paths(http_server)


async def test_link_preview_end_to_end(http_server: HttpServer, ctx: ToolContext) -> None:
    head = (
        '<meta property="og:title" content="Launch day"><meta property="og:image" content="/card.webp">'
        '<meta property="og:image:width" content="1200"><meta property="og:site_name" content="Acme">'
        '<link rel="icon" href="/icon-192.png" sizes="192x192"><meta name="theme-color" content="#0af">'
        '<link rel="alternate" type="application/json+oembed" href="/oembed?format=json">'
    )
    http_server.route("/", body=page(head), headers=HTML)
    http_server.route(
        "/card.webp", body=image_bytes(640, 320, "WEBP"), headers=[("Content-Type", "image/webp")]
    )
    http_server.route("/icon-192.png", body=image_bytes(192, 192), headers=PNG)
    http_server.route(
        "/oembed",
        body=json.dumps(
            {
                "type": "rich",
                "version": "1.0",
                "title": "Launch",
                "html": "<iframe></iframe>",
                "secret": 1,
            }
        ).encode(),
        headers=[("Content-Type", "application/json")],
    )
    result = await link_preview.run(link_preview.LinkPreviewInput(url=http_server.url("/")), ctx)
    assert result.title == "Launch day"
    assert result.site_name == "Acme"
    assert result.image is not None
    assert (result.image.url, result.image.width, result.image.height) == (
        http_server.url("/card.webp"),
        640,
        320,
    )
    assert result.image.declared_width == 1200
    assert result.image.reachable
    assert result.image.type == "image/webp"
    assert result.favicon is not None
    assert result.favicon.url == http_server.url("/icon-192.png")
    assert result.theme_color == "#0af"
    assert result.o_embed is not None
    assert result.o_embed.data == {
        "type": "rich",
        "version": "1.0",
        "title": "Launch",
        "html": "<iframe></iframe>",
    }
    data = result.model_dump(mode="json", by_alias=True)
    assert data["oEmbed"]["format"] == "json"
    assert data["sources"]["title"] == "og:title"


async def test_link_preview_unreachable_image(http_server: HttpServer, ctx: ToolContext) -> None:
    http_server.route(
        "/", body=page('<meta property="og:image" content="/nope.png">'), headers=HTML
    )
    http_server.route("/nope.png", body=b"<html>not an image</html>", headers=HTML)
    result = await link_preview.run(link_preview.LinkPreviewInput(url=http_server.url("/")), ctx)
    assert result.image is not None
    assert result.image.reachable is False
    assert result.image.error is not None
    assert "not a recognised image" in result.image.error
    assert result.favicon is not None
    assert result.favicon.url is None


async def test_link_preview_of_an_image_url(http_server: HttpServer, ctx: ToolContext) -> None:
    http_server.route("/photo.png", body=image_bytes(33, 44), headers=PNG)
    result = await link_preview.run(
        link_preview.LinkPreviewInput(url=http_server.url("/photo.png")), ctx
    )
    assert result.type == "image"
    assert result.image is not None
    assert (result.image.width, result.image.height, result.image.type) == (33, 44, "image/png")


async def test_https_with_the_workers_fetcher(https_server: HttpServer, settings: Settings) -> None:
    serve_site(https_server)
    async with Fetcher(settings, ssl_context=https_server.client_ssl_context()) as fetcher:
        ctx = make_ctx(settings, fetcher=fetcher)
        result = await seo_checker.run(seo_checker.SeoCheckerInput(url=https_server.url("/")), ctx)
    assert {c.id: c.status for c in result.checks}["is-on-https"] == "pass"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda d: d.slug)
async def test_unreachable_target_fails_with_400(definition, ctx: ToolContext) -> None:
    url = f"http://127.0.0.1:{closed_port()}/"
    with pytest.raises(ToolFailure) as failure:
        await definition.run(definition.input_model(url=url), ctx)
    assert failure.value.code == 400
    assert url in failure.value.message


async def test_nxdomain_fails_with_400(ctx: ToolContext) -> None:
    with pytest.raises(ToolFailure) as failure:
        await seo_checker.run(seo_checker.SeoCheckerInput(url="http://nope.test/"), ctx)
    assert failure.value.code == 400
    assert "nope.test" in failure.value.message


async def test_tls_error_fails_with_400(https_server: HttpServer, ctx: ToolContext) -> None:
    https_server.route("/", body=page(), headers=HTML)
    with pytest.raises(ToolFailure) as failure:
        await meta_checker.run(meta_checker.MetaCheckerInput(url=https_server.url("/")), ctx)
    assert failure.value.code == 400


async def test_timeout_fails_with_400(http_server: HttpServer, dns) -> None:
    http_server.route("/", Response(body=page(), headers=HTML, delay=2))
    ctx = make_ctx(
        Settings(allow_private_networks=True, dns_nameservers=[dns.nameserver], http_timeout_s=0.3)
    )
    with pytest.raises(ToolFailure) as failure:
        await link_preview.run(link_preview.LinkPreviewInput(url=http_server.url("/")), ctx)
    assert failure.value.code == 400
    assert "timed out" in failure.value.message


async def test_too_large_fails_with_413(http_server: HttpServer, ctx: ToolContext) -> None:
    http_server.route("/", body=b"<html>" + b"x" * (5 * 1024 * 1024 + 10), headers=HTML)
    with pytest.raises(ToolFailure) as failure:
        await seo_checker.run(seo_checker.SeoCheckerInput(url=http_server.url("/")), ctx)
    assert failure.value.code == 413


@pytest.mark.parametrize("content_type", ["application/pdf", "application/json"])
async def test_not_html_fails_with_400(
    http_server: HttpServer, ctx: ToolContext, content_type: str
) -> None:
    http_server.route("/doc", body=b"%PDF-1.4 {}", headers=[("Content-Type", content_type)])
    with pytest.raises(ToolFailure) as failure:
        await seo_checker.run(seo_checker.SeoCheckerInput(url=http_server.url("/doc")), ctx)
    assert failure.value.code == 400
    assert "not an HTML page" in failure.value.message


async def test_html_without_content_type_is_accepted(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    http_server.route("/", body=page())
    result = await meta_checker.run(meta_checker.MetaCheckerInput(url=http_server.url("/")), ctx)
    assert result.status_code == 200


async def test_shift_jis_page_is_decoded(http_server: HttpServer, ctx: ToolContext) -> None:
    body = '<html><head><meta charset="shift_jis"><title>日本語のタイトル</title></head><body></body></html>'
    http_server.route("/", body=body.encode("shift_jis"), headers=[("Content-Type", "text/html")])
    result = await link_preview.run(link_preview.LinkPreviewInput(url=http_server.url("/")), ctx)
    assert result.title == "日本語のタイトル"


@pytest.mark.parametrize(
    ("definition", "aliases"),
    [
        (seo_checker.DEFINITION, ("seo-audit",)),
        (meta_checker.DEFINITION, ("meta",)),
        (geo_checker.DEFINITION, ("geo",)),
        (link_preview.DEFINITION, ()),
    ],
    ids=lambda value: getattr(value, "slug", ""),
)
def test_definitions(definition, aliases: tuple[str, ...]) -> None:
    assert definition.slug == definition.action
    assert (definition.kind, definition.category, definition.aliases) == (
        "tool",
        "website",
        aliases,
    )
    definition.input_model.model_validate(definition.example)
    schema = definition.output_model.model_json_schema(by_alias=True)
    assert {"url", "finalUrl", "statusCode", "fetchedAt", "timingMs"} <= set(schema["properties"])
    assert definition.input_model.model_json_schema()["required"] == ["url"]


def test_definitions_register_together() -> None:
    registry = Registry(DEFINITIONS)
    assert registry.by_alias("seo-audit") is seo_checker.DEFINITION
    assert registry.by_alias("link-preview") is link_preview.DEFINITION


@pytest.mark.parametrize("url", ["ftp://example.test/", "not a url", "example.test"])
def test_input_requires_http_url(url: str) -> None:
    with pytest.raises(ValueError, match="URL"):
        seo_checker.SeoCheckerInput.model_validate({"url": url})
