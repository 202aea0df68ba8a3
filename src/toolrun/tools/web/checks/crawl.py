"""Crawling and indexing: status code, is-crawlable, robots.txt, redirects, HTTPS.

``is-crawlable`` follows Lighthouse: five agents (generic, Googlebot, bingbot,
DuckDuckBot, archive.org_bot); each is blocked by an agent-specific
``<meta name=googlebot>`` (else ``<meta name=robots>``), by an ``X-Robots-Tag``
header (unprefixed, or prefixed with that agent), or by robots.txt. Blocking
values: ``noindex``, ``none`` and ``unavailable_after`` with a past date. The
check fails only when all five are blocked and warns when some are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from toolrun.tools.web.checks import make, plural
from toolrun.tools.web.models import Check, CheckStatus
from toolrun.tools.web.site import Site

CRAWL_AGENTS: tuple[tuple[str, str], ...] = (
    ("generic", "*"),
    ("Googlebot", "Googlebot"),
    ("bingbot", "bingbot"),
    ("DuckDuckBot", "DuckDuckBot"),
    ("archive.org_bot", "archive.org_bot"),
)
_BLOCKING = frozenset({"noindex", "none"})
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)
_SNIPPET_LIMITING = ("nosnippet", "max-snippet:0", "noarchive", "noimageindex", "nofollow")


@dataclass(frozen=True)
class Block:
    """Why one agent may not index the page."""

    agent: str
    source: str
    directive: str


def directives(value: str) -> list[str]:
    """``"NoIndex, nofollow"`` -> ``["noindex", "nofollow"]``."""
    return [part.strip().lower() for part in value.split(",") if part.strip()]


def is_blocking(directive: str, now: datetime | None = None) -> bool:
    """True for ``noindex``, ``none`` and ``unavailable_after:<past date>``."""
    if directive in _BLOCKING:
        return True
    if directive.startswith("unavailable_after"):
        moment = _parse_date(directive.partition(":")[2].strip())
        return moment is not None and moment <= (now or datetime.now(UTC))
    return False


def _parse_date(text: str) -> datetime | None:
    for parse in (datetime.fromisoformat, parsedate_to_datetime):
        try:
            moment = parse(text)
        except (ValueError, TypeError, IndexError):
            continue
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    for pattern in ("%d-%b-%Y %H:%M:%S %Z", "%d %b %Y %H:%M:%S %Z", "%Y-%m-%d"):
        try:
            return datetime.strptime(text, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def robots_header_rules(values: list[str]) -> list[tuple[str | None, str]]:
    """X-Robots-Tag values as (agent or None for all, directive) pairs."""
    rules: list[tuple[str | None, str]] = []
    for value in values:
        agent: str | None = None
        head, sep, rest = value.partition(":")
        if sep and "," not in head and head.strip().lower() not in _VALUED_DIRECTIVES:
            agent, value = head.strip().lower(), rest
        rules.extend((agent, directive) for directive in directives(value))
    return rules


def blocks_for(site: Site, label: str, token: str) -> list[Block]:
    """Every reason ``token`` (``*`` for generic) may not index the page."""
    page = site.page
    found: list[Block] = []
    meta_value = None if token == "*" else page.meta(token.lower())
    meta_source = f'<meta name="{token.lower()}">'
    if meta_value is None:
        meta_value, meta_source = page.meta("robots"), '<meta name="robots">'
    for directive in directives(meta_value or ""):
        if is_blocking(directive):
            found.append(Block(label, meta_source, directive))
    for agent, directive in robots_header_rules(page.header_values("x-robots-tag")):
        applies = agent is None or (token != "*" and agent == token.lower())
        if applies and is_blocking(directive):
            found.append(Block(label, "X-Robots-Tag", directive))
    robots = site.robots
    if robots is not None:
        verdict = robots.verdict(page.final_url, token)
        if not verdict.allowed and verdict.rule is not None:
            rule = f"Disallow: {verdict.rule.pattern}"
            found.append(Block(label, f"robots.txt line {verdict.rule.line}", rule))
    return found


def check_status_code(site: Site) -> Check:
    code = site.page.status_code
    if 400 <= code <= 599:
        return make(
            "http-status-code",
            "Page has an unsuccessful HTTP status code",
            "fail",
            code,
            f"The page answered {code}; search engines may not index pages with an error status.",
            "Serve the page with a 2xx status, or fix the URL you submitted.",
        )
    if code >= 300:
        return make(
            "http-status-code",
            "Page answered with a redirect that was not followed",
            "warn",
            code,
            f"The final answer was {code} without a usable Location.",
            "Make the redirect point to a valid URL.",
        )
    return make(
        "http-status-code",
        "Page has a successful HTTP status code",
        "pass",
        code,
        f"The page answered {code}.",
    )


def check_is_crawlable(site: Site) -> Check:
    rows: list[dict[str, Any]] = []
    blocked: list[str] = []
    for label, token in CRAWL_AGENTS:
        reasons = blocks_for(site, label, token)
        rows.append(
            {
                "agent": label,
                "blocked": bool(reasons),
                "by": [f"{b.source}: {b.directive}" for b in reasons],
            }
        )
        if reasons:
            blocked.append(label)
    if len(blocked) == len(CRAWL_AGENTS):
        generic = rows[0]["by"]
        return make(
            "is-crawlable",
            "Page is blocked from indexing",
            "fail",
            rows,
            f"Every agent checked is blocked ({'; '.join(generic) or 'per agent'}).",
            "Remove noindex from the robots meta tag / X-Robots-Tag, or the robots.txt rule, "
            "if you want the page to appear in search results.",
        )
    if blocked:
        return make(
            "is-crawlable",
            "Page is blocked for some crawlers",
            "warn",
            rows,
            f"Blocked for {', '.join(blocked)}.",
            "Check that blocking these crawlers is intended.",
        )
    return make(
        "is-crawlable",
        "Page isn't blocked from indexing",
        "pass",
        rows,
        "No meta robots, X-Robots-Tag or robots.txt rule blocks the page.",
    )


def check_indexing_hints(site: Site) -> Check | None:
    page = site.page
    found = [d for d in directives(page.meta("robots") or "") if d.startswith(_SNIPPET_LIMITING)]
    found += [
        d
        for _, d in robots_header_rules(page.header_values("x-robots-tag"))
        if d.startswith(_SNIPPET_LIMITING)
    ]
    if not found:
        return None
    return make(
        "robots-directives",
        "Robots directives limit how the page is shown",
        "info",
        sorted(set(found)),
        "Directives such as nosnippet or nofollow restrict snippets, link following or archiving.",
        "Keep these only if the restriction is intended.",
    )


def check_robots_txt(site: Site) -> Check:
    file = site.robots_file
    title = "robots.txt is valid"
    if file is None or file.status_code is None:
        reason = file.error if file is not None and file.error else "no answer"
        return make(
            "robots-txt",
            "robots.txt could not be downloaded",
            "fail",
            None,
            f"Fetching robots.txt failed: {reason}.",
            "Make /robots.txt answer (200 with rules, or 404 when there are none).",
        )
    if file.status_code >= 500:
        return make(
            "robots-txt",
            "robots.txt answered with a server error",
            "fail",
            file.status_code,
            f"/robots.txt answered {file.status_code}; Google treats 5xx as 'do not crawl'.",
            "Fix the server error on /robots.txt.",
        )
    robots = site.robots
    if robots is None:
        return make(
            "robots-txt",
            "No robots.txt",
            "info",
            file.status_code,
            f"/robots.txt answered {file.status_code}: every crawler may fetch every URL.",
            "Add a /robots.txt that lists your sitemap.",
        )
    if robots.issues:
        issues = [
            {"line": i.line, "content": i.content, "message": i.message} for i in robots.issues
        ]
        return make(
            "robots-txt",
            "robots.txt is not valid",
            "fail",
            issues,
            f"{plural(len(issues), 'line')} of robots.txt cannot be understood by crawlers.",
            "Fix or remove each listed line.",
        )
    groups = len(robots.groups)
    return make(
        "robots-txt",
        title,
        "pass",
        {"groups": groups, "sitemaps": robots.sitemaps},
        f"{plural(groups, 'group')}, {plural(len(robots.sitemaps), 'sitemap')} declared.",
    )


def check_redirects(site: Site) -> Check:
    hops = site.page.redirects
    value = [hop.model_dump(by_alias=True) for hop in hops]
    count = len(hops)
    temporary = [hop for hop in hops if hop.status_code in (302, 303, 307)]
    if count == 0:
        return make("redirects", "No redirects", "pass", value, "The URL answered directly.")
    chain = " -> ".join([hop.url for hop in hops] + [site.page.final_url])
    if count == 1:
        status: CheckStatus = "pass" if not temporary else "info"
        return make(
            "redirects",
            "One redirect",
            status,
            value,
            chain,
            "Use a permanent (301/308) redirect for a permanent move.",
        )
    status = "warn" if count <= 3 else "fail"
    return make(
        "redirects",
        "Redirect chain",
        status,
        value,
        f"{count} redirects: {chain}. Each hop costs a round trip for users and crawlers.",
        "Link and redirect straight to the final URL.",
    )


def check_https(site: Site) -> Check:
    page = site.page
    if page.final_url.startswith("https:"):
        came_from_http = page.url.startswith("http:")
        detail = "The page is served over HTTPS."
        if came_from_http:
            detail += " The http:// URL redirects to it."
        return make("is-on-https", "Uses HTTPS", "pass", page.final_url, detail)
    return make(
        "is-on-https",
        "Does not use HTTPS",
        "fail",
        page.final_url,
        "The page is served over plain HTTP: browsers mark it 'Not secure' and "
        "Google uses HTTPS as a ranking signal.",
        "Serve the site over HTTPS and redirect http:// to https:// with a 301.",
    )


CRAWL_CHECKS = (
    check_status_code,
    check_is_crawlable,
    check_indexing_hints,
    check_robots_txt,
    check_redirects,
    check_https,
)
