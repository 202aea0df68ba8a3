"""seo-checker's probes beyond the page (links, hreflang alternates, images), on loopback servers."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.servers.dns import DnsServer
from tests.servers.http import HttpServer, Request, Response
from tests.tools.web.conftest import image_bytes, make_ctx, site_of
from tests.tools.web.test_tools import HTML, PNG, page
from toolrun.config import Settings
from toolrun.net.fetch import Fetcher
from toolrun.tools.base import ToolContext
from toolrun.tools.web import seo_checker
from toolrun.tools.web.checks.probed import check_broken_links
from toolrun.tools.web.page import Page
from toolrun.tools.web.probes import (
    LINKS,
    MAX_LINKS,
    LinkProbes,
    Prober,
    link_targets,
    probe_links,
    probe_site,
)

JPEG = [("Content-Type", "image/jpeg")]


async def seo(server: HttpServer, ctx: ToolContext, path: str = "/") -> dict[str, Any]:
    result = await seo_checker.run(seo_checker.SeoCheckerInput(url=server.url(path)), ctx)
    return {check.id: check for check in result.checks}


def paths_probed(server: HttpServer) -> list[str]:
    site = {"/", "/robots.txt", "/sitemap.xml"}
    return [r.path for r in server.requests if r.path not in site]


def head_refused(request: Request) -> Response:
    if request.method == "HEAD":
        return Response(405, [("Allow", "GET")])
    return Response(200, HTML, b"<html>" + b"x" * 100_000)


def serve_links(server: HttpServer, *links: str) -> None:
    body = "".join(f'<a href="{href}">Target {i}</a>' for i, href in enumerate(links))
    server.route("/", body=page(body=body), headers=HTML)
    server.route("/ok", body=page(), headers=HTML)
    server.route("/error", status=500, body=b"boom")
    server.redirect("/moved", "/ok", status=301)
    server.route("/head-refused", head_refused)


# -- broken-links ------------------------------------------------------------------


async def test_broken_links_pass(http_server: HttpServer, ctx: ToolContext) -> None:
    serve_links(http_server, "/ok", "/ok#part", "/head-refused", "#top", "/", "mailto:a@b.test")
    check = (await seo(http_server, ctx))["broken-links"]
    assert check.status == "pass"
    assert check.value == {
        "targets": 2,
        "probed": 2,
        "broken": [],
        "redirecting": [],
        "notChecked": [],
    }
    # HEAD first; GET (first bytes only) where HEAD is refused; the page itself never.
    probes = [
        (r.method, r.path) for r in http_server.requests if r.path in {"/ok", "/head-refused"}
    ]
    assert sorted(probes) == [("GET", "/head-refused"), ("HEAD", "/head-refused"), ("HEAD", "/ok")]
    assert [r.method for r in http_server.requests if r.path == "/"] == ["GET"]


async def test_broken_links_fail_on_4xx_5xx_and_unreachable(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    closed = "http://127.0.0.1:1/"  # port 1 is refused before any connection: not checked
    serve_links(http_server, "/ok", "/missing", "/error", "http://nope.test/", "/moved", closed)
    check = (await seo(http_server, ctx))["broken-links"]
    assert check.status == "fail"
    broken = {item["url"]: item for item in check.value["broken"]}
    assert broken[http_server.url("/missing")] == {
        "url": http_server.url("/missing"),
        "statusCode": 404,
        "error": None,
    }
    assert broken[http_server.url("/error")]["statusCode"] == 500
    assert broken["http://nope.test/"]["statusCode"] is None
    assert "nope.test" in broken["http://nope.test/"]["error"]
    assert check.value["redirecting"] == [
        {"url": http_server.url("/moved"), "statusCode": 301, "location": http_server.url("/ok")}
    ]
    assert check.value["notChecked"] == [
        {"url": closed, "reason": "port 1 is not allowed (allowed: 80, 443 or 1024-65535)"}
    ]
    assert (check.value["targets"], check.value["probed"]) == (6, 5)
    assert "5 of 6 distinct link targets probed (1 not checked): 3 links broken" in check.detail


async def test_broken_links_warn_on_redirects(http_server: HttpServer, ctx: ToolContext) -> None:
    other = http_server.url("/moved", host="other.test")
    serve_links(http_server, "/ok", other)
    check = (await seo(http_server, ctx))["broken-links"]
    assert check.status == "warn"
    assert check.value["redirecting"] == [
        {"url": other, "statusCode": 301, "location": http_server.url("/ok", host="other.test")}
    ]
    assert check.recommendation is not None


def test_link_targets_internal_first_distinct_without_fragments() -> None:
    html = (
        '<a href="https://elsewhere.test/a">x</a><a href="/b#one">b</a><a href="/b#two">b</a>'
        '<a href="https://example.test/page#self">self</a><a href="ftp://example.test/f">f</a>'
        '<a href="HTTPS://Example.test/c">c</a><a href="javascript:go()">j</a><a>none</a>'
    )
    page = site_of(html, "https://example.test/page").page
    assert link_targets(page) == [
        "https://example.test/b",
        "https://example.test/c",  # internal: hosts compare case-insensitively
        "https://elsewhere.test/a",
    ]


async def test_at_most_20_links_are_probed(http_server: HttpServer, ctx: ToolContext) -> None:
    serve_links(http_server, *(f"/ok?{i}" for i in range(MAX_LINKS + 5)))
    check = (await seo(http_server, ctx))["broken-links"]
    assert (check.value["targets"], check.value["probed"]) == (25, 20)
    assert sum(r.path == "/ok" for r in http_server.requests) == 20


async def test_probes_run_five_at_a_time(http_server: HttpServer, settings: Settings) -> None:
    running = peak = 0

    async def slow(_request: Request) -> Response:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.1)
        running -= 1
        return Response(200, HTML)

    http_server.route("/slow", slow)
    site = site_of("".join(f'<a href="/slow?{i}">x</a>' for i in range(12)), http_server.url("/"))
    async with Fetcher(settings) as fetcher:
        probes = await probe_links(
            Prober(fetcher, asyncio.get_running_loop().time() + 10), site.page
        )
    assert peak == 5
    assert [a.status_code for a in probes.answers] == [200] * 12


async def test_a_hanging_link_times_out_as_unreachable(
    http_server: HttpServer, settings: Settings
) -> None:
    http_server.route("/hang", Response(delay=5))
    site = site_of('<a href="/hang">x</a>', http_server.url("/"))
    async with Fetcher(settings) as fetcher:
        prober = Prober(fetcher, asyncio.get_running_loop().time() + 10, timeout_s=0.3)
        site.extras[LINKS] = await probe_links(prober, site.page)
    check = check_broken_links(site)
    assert check is not None
    assert check.status == "fail"
    assert check.value["broken"] == [
        {"url": http_server.url("/hang"), "statusCode": None, "error": "timed out after 0.3 s"}
    ]


async def test_probing_stops_near_the_deadline(http_server: HttpServer, settings: Settings) -> None:
    # Every target hangs; 11.5 s before the deadline leaves 1.5 s for probes (10 s margin).
    http_server.route("/", body=page(body='<a href="/hang1">x</a><img src="/hang2.png">'))
    http_server.route("/hang1", Response(delay=5))
    http_server.route("/hang2.png", Response(delay=5))
    ctx = ToolContext(
        settings=settings,
        job_id="job",
        account_id="account",
        deadline_at=datetime.now(UTC) + timedelta(seconds=11.5),
    )
    started = time.perf_counter()
    checks = await seo(http_server, ctx)
    assert time.perf_counter() - started < 4.5  # cut before the 5 s the targets take
    assert checks["broken-links"].status == "info"
    assert checks["broken-links"].value["notChecked"] == [
        {
            "url": http_server.url("/hang1"),
            "reason": "not probed: the job's time for probes ran out",
        }
    ]
    assert checks["image-weight"].status == "info"


async def test_guarded_fetcher_does_not_probe_private_addresses(
    http_server: HttpServer, dns: DnsServer
) -> None:
    # The guard on (no allow_private_networks): loopback targets, by IP or by a name
    # resolving to 127.0.0.1, are refused before any connection and not reported broken.
    guarded = Settings(dns_nameservers=[dns.nameserver], http_timeout_s=3)
    assert not guarded.allow_private_networks
    http_server.route("/ok", body=b"ok")
    by_ip = http_server.url("/ok")
    by_name = http_server.url("/ok", host="site.test")
    site = site_of(f'<a href="{by_ip}">a</a><a href="{by_name}">b</a>')
    async with Fetcher(guarded) as fetcher:
        await probe_site(fetcher, site, make_ctx(guarded).deadline_at)
    assert http_server.requests == []
    probes = site.extras[LINKS]
    assert isinstance(probes, LinkProbes)
    assert [a.not_checked is not None for a in probes.answers] == [True, True]
    check = check_broken_links(site)
    assert check is not None
    assert check.status == "info"
    assert check.value["broken"] == []
    assert [item["url"] for item in check.value["notChecked"]] == [by_ip, by_name]


# -- hreflang-return-links ---------------------------------------------------------------


def hreflang_head(server: HttpServer, **alternates: str) -> str:
    return "".join(
        f'<link rel="alternate" hreflang="{code.replace("_", "-")}" href="{server.url(path)}">'
        for code, path in alternates.items()
    )


async def test_hreflang_return_links_pass(http_server: HttpServer, ctx: ToolContext) -> None:
    head = hreflang_head(http_server, en="/", de="/de", x_default="/")
    http_server.route("/", body=page(head), headers=HTML)
    http_server.route("/de", body=page(head), headers=HTML)
    checks = await seo(http_server, ctx)
    check = checks["hreflang-return-links"]
    assert check.status == "pass"
    assert check.value == {"probed": 1, "missing": [], "notChecked": []}
    assert checks["hreflang"].status == "pass"


async def test_hreflang_return_links_warn(http_server: HttpServer, ctx: ToolContext) -> None:
    head = hreflang_head(http_server, en="/", de="/de", fr="/fr", es="/es", x_default="/")
    http_server.route("/", body=page(head), headers=HTML)
    http_server.route("/de", body=page(head), headers=HTML)
    # /fr lists only itself; /es is missing
    http_server.route("/fr", body=page(hreflang_head(http_server, fr="/fr")), headers=HTML)
    checks = await seo(http_server, ctx)
    check = checks["hreflang-return-links"]
    assert check.status == "warn"
    assert check.value["missing"] == [
        {
            "url": http_server.url("/fr"),
            "hreflang": "fr",
            "problem": "no hreflang link back to this page",
        },
        {"url": http_server.url("/es"), "hreflang": "es", "problem": "answered 404"},
    ]
    assert check.value["probed"] == 3


async def test_hreflang_return_link_in_a_link_header(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    head = hreflang_head(http_server, en="/", it="/it")
    http_server.route("/", body=page(head), headers=HTML)
    link = f'<{http_server.url("/")}>; rel="alternate"; hreflang="en"'
    http_server.route("/it", body=page(), headers=[*HTML, ("Link", link)])
    check = (await seo(http_server, ctx))["hreflang-return-links"]
    assert check.status == "pass"


async def test_no_hreflang_no_return_link_check(http_server: HttpServer, ctx: ToolContext) -> None:
    http_server.route("/", body=page(hreflang_head(http_server, en="/")), headers=HTML)
    checks = await seo(http_server, ctx)
    assert "hreflang-return-links" not in checks
    assert paths_probed(http_server) == []


# -- image-weight and image-aspect-ratio -----------------------------------------------------


async def test_image_weight_warns_over_500_kib(http_server: HttpServer, ctx: ToolContext) -> None:
    heavy = b"\xff\xd8" + bytes(600 * 1024)
    images = (
        '<img src="/heavy.jpg" alt=""><img src="/light.png" alt=""><img src="/gone.png" alt="">'
    )
    http_server.route("/", body=page(body=images), headers=HTML)
    http_server.route("/heavy.jpg", body=heavy, headers=JPEG)
    http_server.route("/light.png", body=image_bytes(40, 20), headers=PNG)
    check = (await seo(http_server, ctx))["image-weight"]
    assert check.status == "warn"
    assert check.value["heavy"] == [{"url": http_server.url("/heavy.jpg"), "bytes": len(heavy)}]
    assert check.value["unmeasured"] == [
        {"url": http_server.url("/gone.png"), "reason": "answered 404"}
    ]
    assert (check.value["images"], check.value["measured"]) == (3, 2)
    # Unsized images are weighed with HEAD alone: no image body was sent.
    assert {r.method for r in http_server.requests if r.path.endswith((".jpg", ".png"))} == {"HEAD"}


async def test_image_weight_pass(http_server: HttpServer, ctx: ToolContext) -> None:
    http_server.route("/", body=page(body='<img src="/light.png" alt="">'), headers=HTML)
    http_server.route("/light.png", body=image_bytes(40, 20), headers=PNG)
    checks = await seo(http_server, ctx)
    assert checks["image-weight"].status == "pass"
    assert "image-aspect-ratio" not in checks  # no declared size to compare


async def test_image_aspect_ratio(http_server: HttpServer, ctx: ToolContext) -> None:
    images = (
        '<img src="/wide.png" width="200" height="100" alt="">'  # 2:1 as the file
        '<img src="/square.png" width="100" height="150" alt="">'  # 1:1 file shown 2:3
        '<img src="/square.png" width="100" height="104" alt="">'  # within 5%
    )
    http_server.route("/", body=page(body=images), headers=HTML)
    http_server.route("/wide.png", body=image_bytes(400, 200), headers=PNG)
    http_server.route("/square.png", body=image_bytes(50, 50), headers=PNG)
    checks = await seo(http_server, ctx)
    check = checks["image-aspect-ratio"]
    assert check.status == "warn"
    assert check.value == {
        "compared": 3,
        "mismatched": [
            {"url": http_server.url("/square.png"), "declared": "100x150", "intrinsic": "50x50"}
        ],
    }
    assert checks["image-weight"].status == "pass"
    # Sized images are read (first 64 KiB) once, for their weight and size together.
    reads = sorted((r.method, r.path) for r in http_server.requests if r.path.endswith(".png"))
    assert reads == [("GET", "/square.png"), ("GET", "/wide.png")]


async def test_image_aspect_ratio_pass(http_server: HttpServer, ctx: ToolContext) -> None:
    http_server.route(
        "/", body=page(body='<img src="/wide.png" width="100" height="50" alt="">'), headers=HTML
    )
    http_server.route("/wide.png", body=image_bytes(400, 200), headers=PNG)
    check = (await seo(http_server, ctx))["image-aspect-ratio"]
    assert check.status == "pass"


def test_targets_differing_only_in_host_case_or_fragment_are_one() -> None:
    html = (
        '<a href="https://Example.test/c#top">a</a><a href="HTTPS://example.test/c">b</a>'
        '<a href="https://example.test/C">c</a>'
    )
    page = Page.from_html(html, "https://example.test/page")
    assert link_targets(page) == ["https://example.test/c", "https://example.test/C"]
