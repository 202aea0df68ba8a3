"""Discovery: sitemap, feeds, favicon, theme-color and web app manifest."""

from __future__ import annotations

from typing import Any

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.manifest import Manifest, manifest_link
from toolrun.tools.web.models import Check
from toolrun.tools.web.preview import feeds, icon_candidates, theme_colors
from toolrun.tools.web.site import Site

INSTALL_ICON_PIXELS = (192, 512)  # web.dev's installability criteria


def check_sitemap(site: Site) -> Check:
    declared = site.robots.sitemaps if site.robots is not None else []
    file = site.sitemap_file
    sitemap = site.sitemap
    value: dict[str, Any] = {"url": file.url if file else None, "declaredInRobots": declared}
    if sitemap is not None and sitemap.kind != "invalid":
        value.update(
            kind=sitemap.kind, urls=sitemap.url_count, listsPage=sitemap.lists(site.page.final_url)
        )
        detail = f"/sitemap.xml is a {sitemap.kind} with {plural(sitemap.url_count, 'URL')}"
        if sitemap.kind == "urlset" and not value["listsPage"]:
            detail += "; this page is not listed in it"
        return make("sitemap", "Sitemap found", "pass", value, detail + ".")
    if sitemap is not None:
        return make(
            "sitemap",
            "sitemap.xml is not a sitemap",
            "warn",
            value,
            "/sitemap.xml answered, but not with a urlset, sitemap index or URL list "
            "(an HTML fallback page?).",
            "Serve an XML sitemap, or answer 404 and declare the real one in robots.txt.",
        )
    if declared:
        return make(
            "sitemap",
            "Sitemap declared in robots.txt",
            "pass",
            value,
            f"robots.txt declares {', '.join(declared[:3])} (not at /sitemap.xml).",
        )
    status = file.status_code if file else None
    return make(
        "sitemap",
        "No sitemap found",
        "warn",
        value,
        f"/sitemap.xml answered {status or file.error if file else 'nothing'} and "
        "robots.txt declares none.",
        "Publish an XML sitemap and add 'Sitemap: <url>' to robots.txt.",
    )


def check_feed(site: Site) -> Check:
    found = feeds(site.page)
    if found:
        return make(
            "feed",
            "Feed link found",
            "pass",
            found,
            f"{plural(len(found), 'feed')}: {found[0]['url']}.",
        )
    return make(
        "feed",
        "No RSS/Atom/JSON feed link",
        "info",
        [],
        "Feeds help aggregators and AI tools discover new content.",
        '<link rel="alternate" type="application/rss+xml" href="/feed.xml">',
    )


def check_favicon(site: Site) -> Check:
    candidates = icon_candidates(site.page)
    probe: dict[str, Any] = dict(site.extras.get("favicon_probe") or {})  # type: ignore[call-overload]
    value: dict[str, Any] = {
        "declared": [{"url": c.url, "rel": c.rel, "sizes": c.sizes} for c in candidates[:20]],
        **probe,
    }
    if probe and not probe.get("url"):
        return make(
            "favicon",
            "No reachable favicon",
            "fail",
            value,
            "Neither the declared icons nor /favicon.ico could be loaded.",
            'Add <link rel="icon" href="/favicon.svg"> and an apple-touch-icon.',
        )
    if not candidates:
        return make(
            "favicon",
            "Favicon only at /favicon.ico" if probe else "No icon declared",
            "warn",
            value,
            "The page declares no <link rel=icon>; browsers fall back to /favicon.ico.",
            'Declare icons with <link rel="icon" sizes=...>.',
        )
    if not any("apple-touch-icon" in c.rel for c in candidates):
        return make(
            "favicon",
            "No apple-touch-icon",
            "warn",
            value,
            f"{plural(len(candidates), 'icon')} declared, none for iOS home screens.",
            '<link rel="apple-touch-icon" href="/apple-touch-icon.png"> (180x180).',
        )
    return make(
        "favicon",
        "Favicon declared",
        "pass",
        value,
        f"{plural(len(candidates), 'icon')}; best: {candidates[0].url}.",
    )


def check_theme_color(site: Site) -> Check:
    colors = theme_colors(site.page)
    if colors:
        return make(
            "theme-color",
            "theme-color is set",
            "pass",
            colors,
            ", ".join(str(c["color"]) for c in colors) + ".",
        )
    return make(
        "theme-color",
        "No theme-color",
        "info",
        [],
        "Browsers and link previews can tint their UI with the site colour.",
        '<meta name="theme-color" content="#0a7cff">',
    )


def install_gaps(manifest: Manifest) -> list[str]:
    """What a manifest lacks for installation: a name and ``any``-purpose icons of 192 and 512 px."""
    icons = [icon for icon in manifest.icons if "any" in icon.purposes]
    gaps = [] if manifest.name or manifest.short_name else ["name or short_name"]
    gaps += [
        f"an icon of {px}x{px} or larger"
        for px in INSTALL_ICON_PIXELS
        if not any(icon.covers(px) for icon in icons)
    ]
    return gaps


def check_manifest(site: Site) -> Check:
    url = manifest_link(site.page)
    if url is None:
        return make(
            "manifest",
            "No web app manifest",
            "info",
            None,
            "A manifest names the site and gives the icons used when it is installed or pinned.",
            '<link rel="manifest" href="/site.webmanifest">',
        )
    manifest = site.extras.get("manifest")
    if not isinstance(manifest, Manifest):  # analysed without network access
        return make(
            "manifest", "Web app manifest linked", "info", {"url": url}, f"Manifest: {url}."
        )
    value = manifest.value()
    if manifest.error:
        return make(
            "manifest",
            "Web app manifest could not be read",
            "warn",
            value,
            f"{manifest.shown_url}: {manifest.error}.",
            "Serve the manifest as a JSON object (application/manifest+json), under 256 KiB.",
        )
    gaps = install_gaps(manifest)
    if gaps:
        return make(
            "manifest",
            "Web app manifest is incomplete",
            "warn",
            value,
            f"Missing: {'; '.join(gaps)}.",
            'Add "name"/"short_name" and PNG icons of 192x192 and 512x512 (purpose "any").',
        )
    name = manifest.name or manifest.short_name
    return make(
        "manifest",
        "Web app manifest is complete",
        "pass",
        value,
        f"'{name}' with {plural(len(manifest.icons), 'icon')}, 192 and 512 px covered.",
    )


DISCOVERY_CHECKS = (check_sitemap, check_feed)
