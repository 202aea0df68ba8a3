"""The web app manifest: the pure parser, meta-checker's rule, and link-preview's fallbacks."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from tests.servers.http import HttpServer, Response
from tests.tools.web.conftest import image_bytes, site_of
from toolrun.tools.base import ToolContext
from toolrun.tools.web import link_preview, meta_checker
from toolrun.tools.web.checks.discovery import check_manifest, install_gaps
from toolrun.tools.web.link_preview import analyze
from toolrun.tools.web.manifest import (
    Manifest,
    ManifestIcon,
    data_uri_bytes,
    manifest_link,
    parse_manifest,
    read_data_manifest,
)
from toolrun.tools.web.preview import extract_preview, manifest_icon_candidates

HTML = [("Content-Type", "text/html; charset=utf-8")]
PNG = [("Content-Type", "image/png")]
MANIFEST_TYPE = [("Content-Type", "application/manifest+json")]
URL = "https://example.test/blog/post"
MANIFEST_URL = "https://cdn.test/app/site.webmanifest"
GOOD = {
    "name": "Acme Rocket Manuals",
    "short_name": "Acme",
    "description": "Manuals for every Acme rocket.",
    "lang": "fr-CA",
    "start_url": "./?source=pwa",
    "display": "standalone",
    "theme_color": "#0a7cff",
    "icons": [
        {"src": "icons/mono.png", "sizes": "1024x1024", "purpose": "monochrome"},
        {"src": "icons/192.png", "sizes": "192x192", "type": "image/png"},
        {"src": "/icons/512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
    ],
}


def doc(head: str = "", lang: str = "") -> str:
    attr = f' lang="{lang}"' if lang else ""
    return f"<!doctype html><html{attr}><head>{head}</head><body><p>x</p></body></html>"


def encoded(data: object) -> bytes:
    return json.dumps(data).encode()


# -- the pure parser ------------------------------------------------------------------


def test_parse_reads_members_and_resolves_against_the_manifest_url() -> None:
    manifest = parse_manifest(encoded(GOOD), MANIFEST_URL)
    assert manifest.error is None
    assert (manifest.name, manifest.short_name, manifest.lang) == (
        "Acme Rocket Manuals",
        "Acme",
        "fr-CA",
    )
    assert manifest.start_url == "https://cdn.test/app/?source=pwa"
    assert [icon.src for icon in manifest.icons] == [
        "https://cdn.test/app/icons/mono.png",
        "https://cdn.test/app/icons/192.png",
        "https://cdn.test/icons/512.png",
    ]
    assert manifest.value()["icons"][1] == {
        "src": "https://cdn.test/app/icons/192.png",
        "sizes": "192x192",
        "type": "image/png",
        "purpose": None,
    }


def test_parse_resolves_against_a_separate_base() -> None:
    manifest = parse_manifest(
        encoded({"icons": [{"src": "i.png"}]}), MANIFEST_URL, "https://example.test/a/b"
    )
    assert manifest.icons[0].src == "https://example.test/a/i.png"


@pytest.mark.parametrize(
    ("sizes", "dimensions", "covers_192", "covers_512"),
    [
        ("any", None, True, True),
        ("192x192 512x512", (512, 512), True, True),
        ("48X48", (48, 48), False, False),
        ("640x128", (640, 128), False, False),
        ("192x192", (192, 192), True, False),
        ("big", None, False, False),
        (None, None, False, False),
    ],
)
def test_icon_sizes(
    sizes: str | None, dimensions: tuple[int, int] | None, covers_192: bool, covers_512: bool
) -> None:
    icon = ManifestIcon(src="https://x.test/i.png", sizes=sizes)
    assert icon.dimensions == dimensions
    assert (icon.covers(192), icon.covers(512)) == (covers_192, covers_512)


def test_icon_purpose_defaults_to_any() -> None:
    assert ManifestIcon("https://x.test/i.png").purposes == {"any"}
    assert ManifestIcon("https://x.test/i.png", purpose="Maskable ANY").purposes == {
        "maskable",
        "any",
    }


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"{not json", "not valid JSON (Expecting property name enclosed in double quotes)"),
        (b"", "not valid JSON (Expecting value)"),
        (b"[1, 2]", "not a JSON object (a list)"),
        (b'"name"', "not a JSON object (a str)"),
        (b"\xff\xfe\xfa", "not valid JSON (UnicodeDecodeError)"),
        (b"[" * 200_000 + b"]" * 200_000, "not valid JSON (RecursionError)"),
    ],
)
def test_parse_reports_bodies_that_are_not_a_json_object(body: bytes, error: str) -> None:
    manifest = parse_manifest(body, MANIFEST_URL)
    assert manifest.error == error
    assert manifest.icons == ()


def test_parse_ignores_members_of_the_wrong_type() -> None:
    data = {
        "name": 5,
        "short_name": "  Acme  ",
        "start_url": ["/"],
        "icons": [
            "icon.png",
            {"sizes": "192x192"},
            {"src": ""},
            {"src": "javascript:alert(1)"},
            {"src": "ok.png", "sizes": 192, "purpose": None},
        ],
    }
    manifest = parse_manifest(encoded(data), MANIFEST_URL)
    assert (manifest.name, manifest.short_name, manifest.start_url) == (None, "Acme", None)
    assert manifest.icons == (ManifestIcon("https://cdn.test/app/ok.png"),)
    assert parse_manifest(encoded({"icons": {"src": "x"}}), MANIFEST_URL).icons == ()


def test_best_icon_is_the_largest_not_monochrome() -> None:
    manifest = parse_manifest(encoded(GOOD), MANIFEST_URL)
    best = manifest.best_icon()
    assert best is not None
    assert best.src == "https://cdn.test/icons/512.png"
    mono_only = Manifest(url="u", icons=(ManifestIcon("m", "512x512", purpose="monochrome"),))
    assert mono_only.best_icon() is None
    ranked = [c.url for c in manifest_icon_candidates(manifest)]
    assert ranked == ["https://cdn.test/icons/512.png", "https://cdn.test/app/icons/192.png"]


@pytest.mark.parametrize(
    ("uri", "payload"),
    [
        ('data:application/manifest+json,{"name":"A"}', b'{"name":"A"}'),
        ("data:application/json," + quote('{"name": "A b"}'), b'{"name": "A b"}'),
        (
            "data:application/manifest+json;base64," + base64.b64encode(b'{"a":1}').decode(),
            b'{"a":1}',
        ),
        ("data:;BASE64,e30=", b"{}"),
    ],
)
def test_data_uri_bytes(uri: str, payload: bytes) -> None:
    assert data_uri_bytes(uri) == payload


@pytest.mark.parametrize("uri", ["data:application/json", "data:;base64,***"])
def test_malformed_data_uri_is_reported(uri: str) -> None:
    assert (read_data_manifest(uri, URL).error or "").startswith("not a valid data: URI")


def test_data_manifest_resolves_against_the_page_and_is_capped() -> None:
    uri = "data:application/manifest+json," + quote(json.dumps(GOOD))
    manifest = read_data_manifest(uri, URL)
    assert manifest.icons[1].src == "https://example.test/blog/icons/192.png"
    assert manifest.value()["url"].endswith("\u2026")
    assert len(manifest.value()["url"]) == 101
    big = "data:application/json," + quote(json.dumps({"x": "a" * 300_000}))
    assert read_data_manifest(big, URL).error == "larger than 256 KiB"


def test_manifest_link() -> None:
    head = '<link rel="icon" href="/i.png"><link rel="Manifest" href="app.json"><link rel="manifest" href="/second.json">'
    assert manifest_link(site_of(doc(head), URL).page) == "https://example.test/blog/app.json"
    data = '<link rel="manifest" href="data:application/json,{}">'
    assert manifest_link(site_of(doc(data), URL).page) == "data:application/json,{}"
    assert manifest_link(site_of(doc('<link rel="manifest">'), URL).page) is None


# -- meta-checker's rule without network ---------------------------------------------


def checked(manifest: Manifest | None, head: str = '<link rel="manifest" href="/m.json">'):
    site = site_of(doc(head), URL)
    if manifest is not None:
        site.extras["manifest"] = manifest
    return check_manifest(site)


def test_install_gaps() -> None:
    assert install_gaps(parse_manifest(encoded(GOOD), MANIFEST_URL)) == []
    maskable = {
        "short_name": "A",
        "icons": [{"src": "a.png", "sizes": "512x512", "purpose": "maskable"}],
    }
    assert install_gaps(parse_manifest(encoded(maskable), MANIFEST_URL)) == [
        "an icon of 192x192 or larger",
        "an icon of 512x512 or larger",
    ]
    svg = {"name": "A", "icons": [{"src": "a.svg", "sizes": "any"}]}
    assert install_gaps(parse_manifest(encoded(svg), MANIFEST_URL)) == []
    assert install_gaps(parse_manifest(b"{}", MANIFEST_URL))[0] == "name or short_name"


def test_check_without_link_is_info() -> None:
    check = checked(None, head="")
    assert (check.status, check.value) == ("info", None)
    assert check.recommendation is not None


def test_check_passes_with_a_complete_manifest() -> None:
    check = checked(parse_manifest(encoded(GOOD), MANIFEST_URL))
    assert check.status == "pass"
    assert check.value["shortName"] == "Acme"
    assert check.detail == "'Acme Rocket Manuals' with 3 icons, 192 and 512 px covered."


# -- end to end, over loopback ------------------------------------------------------------

OVERSIZED = encoded({"name": "A", "padding": "x" * (256 * 1024)})


@pytest.mark.parametrize(
    ("route", "status", "detail"),
    [
        (Response(body=encoded(GOOD), headers=MANIFEST_TYPE), "pass", "192 and 512 px covered"),
        (
            Response(body=encoded({"name": "Acme", "icons": []}), headers=MANIFEST_TYPE),
            "warn",
            "Missing: an icon of 192x192 or larger; an icon of 512x512 or larger.",
        ),
        (
            Response(body=encoded({"icons": GOOD["icons"]}), headers=MANIFEST_TYPE),
            "warn",
            "Missing: name or short_name.",
        ),
        (Response(body=b"<html>oops</html>", headers=HTML), "warn", "not valid JSON"),
        (Response(status=404, body=b"missing"), "warn", "answered 404"),
        (Response(body=OVERSIZED, headers=MANIFEST_TYPE), "warn", "larger than 256 KiB"),
    ],
)
async def test_meta_checker_manifest_rule(
    http_server: HttpServer, ctx: ToolContext, route: Response, status: str, detail: str
) -> None:
    http_server.route("/", body=doc('<link rel="manifest" href="app/site.webmanifest">').encode())
    http_server.route("/app/site.webmanifest", route)
    result = await meta_checker.run(meta_checker.MetaCheckerInput(url=http_server.url("/")), ctx)
    check = next(c for c in result.checks if c.id == "manifest")
    assert (check.status, detail in check.detail) == (status, True), check.detail
    assert check.value["url"] == http_server.url("/app/site.webmanifest")
    if status == "pass":
        assert check.value["icons"][2]["src"] == http_server.url("/icons/512.png")
        assert check.value["icons"][1]["src"] == http_server.url("/app/icons/192.png")
        assert check.value["startUrl"] == http_server.url("/app/?source=pwa")
        assert check.value["error"] is None
    else:
        assert check.recommendation is not None


async def test_meta_checker_reads_a_data_manifest_without_a_request(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    uri = "data:application/manifest+json;base64," + base64.b64encode(encoded(GOOD)).decode()
    http_server.route("/", body=doc(f'<link rel="manifest" href="{uri}">').encode(), headers=HTML)
    result = await meta_checker.run(meta_checker.MetaCheckerInput(url=http_server.url("/")), ctx)
    check = next(c for c in result.checks if c.id == "manifest")
    assert check.status == "pass"
    assert check.value["icons"][1]["src"] == http_server.url("/icons/192.png")
    requested = {r.path for r in http_server.requests}
    assert requested <= {"/", "/favicon.ico"}


async def test_meta_checker_without_manifest_link_is_info(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    http_server.route("/", body=doc().encode(), headers=HTML)
    result = await meta_checker.run(meta_checker.MetaCheckerInput(url=http_server.url("/")), ctx)
    assert next(c for c in result.checks if c.id == "manifest").status == "info"


# -- link-preview's fallbacks ---------------------------------------------------------------


def serve_icons(server: HttpServer) -> None:
    server.route("/app/icons/mono.png", body=image_bytes(64, 64), headers=PNG)
    server.route("/app/icons/192.png", body=image_bytes(192, 192), headers=PNG)
    server.route("/icons/512.png", body=image_bytes(512, 512), headers=PNG)


async def test_link_preview_fills_missing_fields_from_the_manifest(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    head = '<title>Launch day</title><link rel="manifest" href="/app/site.webmanifest">'
    http_server.route("/", body=doc(head).encode(), headers=HTML)
    http_server.route("/app/site.webmanifest", body=encoded(GOOD), headers=MANIFEST_TYPE)
    serve_icons(http_server)
    result = await link_preview.run(link_preview.LinkPreviewInput(url=http_server.url("/")), ctx)
    assert result.description == "Manuals for every Acme rocket."
    assert result.lang == "fr"
    assert result.site_name == "Acme"
    assert result.logo == http_server.url("/icons/512.png")
    assert result.favicon is not None
    assert result.favicon.url == http_server.url("/icons/512.png")
    assert result.favicon.width == 512
    assert {k: result.sources[k] for k in ("description", "lang", "siteName", "logo")} == {
        "description": "manifest description",
        "lang": "manifest lang",
        "siteName": "manifest short_name",
        "logo": "manifest icon",
    }
    assert "/app/icons/mono.png" not in {r.path for r in http_server.requests}


async def test_link_preview_skips_the_manifest_when_the_page_has_everything(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    head = (
        '<meta name="description" content="Page description"><meta property="og:site_name" content="Page">'
        '<meta property="og:logo" content="/logo.png"><link rel="icon" href="/icons/512.png" sizes="512x512">'
        '<link rel="manifest" href="/app/site.webmanifest">'
    )
    http_server.route("/", body=doc(head, lang="en").encode(), headers=HTML)
    http_server.route("/app/site.webmanifest", body=encoded(GOOD), headers=MANIFEST_TYPE)
    serve_icons(http_server)
    result = await link_preview.run(link_preview.LinkPreviewInput(url=http_server.url("/")), ctx)
    assert (result.description, result.lang, result.site_name) == ("Page description", "en", "Page")
    assert result.logo == http_server.url("/logo.png")
    assert "/app/site.webmanifest" not in {r.path for r in http_server.requests}


async def test_link_preview_prefers_the_manifest_name_to_a_title_suffix(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    head = '<title>Top 10 rockets | Blog</title><link rel="manifest" href="data:application/json,{&quot;name&quot;:&quot;Acme&quot;}">'
    http_server.route("/", body=doc(head).encode(), headers=HTML)
    http_server.route("/favicon.ico", body=image_bytes(16, 16, "ICO"), headers=PNG)
    result = await link_preview.run(link_preview.LinkPreviewInput(url=http_server.url("/")), ctx)
    assert (result.site_name, result.sources["siteName"]) == ("Acme", "manifest name")
    assert result.logo == http_server.url("/favicon.ico")  # no icons: the favicon fallback


async def test_link_preview_with_a_broken_manifest_keeps_the_page_fallbacks(
    http_server: HttpServer, ctx: ToolContext
) -> None:
    head = '<title>Post - Acme</title><link rel="manifest" href="/m.json">'
    http_server.route("/", body=doc(head).encode(), headers=HTML)
    http_server.route("/m.json", body=b"{broken", headers=MANIFEST_TYPE)
    result = await link_preview.run(link_preview.LinkPreviewInput(url=http_server.url("/")), ctx)
    assert "/m.json" in {r.path for r in http_server.requests}
    assert (result.site_name, result.sources["siteName"]) == ("Acme", "title suffix")
    assert (result.description, result.lang) == (None, None)


def test_manifest_rules_come_after_the_page() -> None:
    head = (
        '<meta property="og:description" content="OG"><meta property="og:site_name" content="Site">'
    )
    site = site_of(doc(head, lang="de"), URL)
    site.extras["manifest"] = parse_manifest(encoded(GOOD), MANIFEST_URL)
    preview = extract_preview(site)
    assert (preview.fields["description"], preview.fields["siteName"], preview.fields["lang"]) == (
        "OG",
        "Site",
        "de",
    )
    assert preview.fields["logo"] == "https://cdn.test/icons/512.png"
    result = analyze(site)
    assert result.sources["logo"] == "manifest icon"
