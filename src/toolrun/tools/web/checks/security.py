"""Security headers, mixed content and URL hygiene (SEOnaut's checks)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.css import starting_ci
from toolrun.tools.web.models import Check
from toolrun.tools.web.site import Site

MAX_PATH_DEPTH = 4
# <img> comes from page.images and <script src> from page.external_scripts (scripts are
# stripped from the tree once parsed); the rest are tested among page.elements("subresource").
_SUBRESOURCES = (
    "iframe[src], video[src], audio[src], source[src], link[rel=stylesheet][href], form[action]"
)


def check_security_headers(site: Site) -> Check:
    page = site.page
    https = page.final_url.startswith("https:")
    has_csp = bool(page.header("content-security-policy")) or bool(
        page.head_nodes('meta[http-equiv="Content-Security-Policy" i]')
    )
    value: dict[str, Any] = {
        "strictTransportSecurity": page.header("strict-transport-security"),
        "contentSecurityPolicy": has_csp,
        "xContentTypeOptions": page.header("x-content-type-options"),
    }
    missing = []
    if https and not value["strictTransportSecurity"]:
        missing.append("Strict-Transport-Security")
    if not has_csp:
        missing.append("Content-Security-Policy")
    if (value["xContentTypeOptions"] or "").strip().lower() != "nosniff":
        missing.append("X-Content-Type-Options: nosniff")
    if missing:
        return make(
            "security-headers",
            "Security headers missing",
            "warn",
            value,
            "Missing: " + ", ".join(missing) + ".",
            "Send HSTS on HTTPS, a Content-Security-Policy and X-Content-Type-Options: nosniff.",
        )
    return make(
        "security-headers",
        "Security headers present",
        "pass",
        value,
        "HSTS, CSP and nosniff are set.",
    )


def check_mixed_content(site: Site) -> Check | None:
    page = site.page
    if not page.final_url.startswith("https:"):
        return None
    insecure = []
    # On an https page only an explicit http: URL is insecure (relative ones inherit https).
    candidates: list[str | None] = []
    candidates += starting_ci(list(filter(None, page.image_srcs)), "http:")
    candidates += page.external_scripts
    for node in page.elements("subresource"):
        if not node.css_matches(_SUBRESOURCES):
            continue
        attrs = node.attributes
        candidates.append(attrs.get("src") or attrs.get("href") or attrs.get("action"))
    insecure = [raw.strip() for raw in candidates if raw and raw.lstrip()[:5].lower() == "http:"]
    if insecure:
        return make(
            "mixed-content",
            "Insecure resources on an HTTPS page",
            "fail",
            insecure[:30],
            f"{plural(len(insecure), 'resource')} or form targets use http://; browsers "
            "block or flag them.",
            "Load every resource and post every form over https://.",
        )
    return make(
        "mixed-content",
        "No mixed content",
        "pass",
        [],
        "Every subresource is requested over HTTPS.",
    )


def check_url_hygiene(site: Site) -> Check:
    parts = urlsplit(site.page.final_url)
    path = unquote(parts.path)
    problems = []
    if "_" in path:
        problems.append("underscores (use hyphens)")
    if " " in path:
        problems.append("spaces")
    if "//" in path:
        problems.append("'//' in the path")
    if path != path.lower():
        problems.append("upper-case letters")
    depth = len([segment for segment in path.split("/") if segment])
    if depth > MAX_PATH_DEPTH:
        problems.append(f"{depth} levels deep (more than {MAX_PATH_DEPTH})")
    if len(site.page.final_url) > 2048:
        problems.append("longer than 2048 characters")
    value = {"path": parts.path, "depth": depth}
    if problems:
        return make(
            "url-hygiene",
            "URL could be cleaner",
            "warn",
            value,
            "The URL has " + ", ".join(problems) + ".",
            "Use short, lower-case, hyphenated paths.",
        )
    return make(
        "url-hygiene", "URL is clean", "pass", value, "Short, lower-case, no odd characters."
    )


SECURITY_CHECKS = (check_security_headers, check_mixed_content, check_url_hygiene)
