from __future__ import annotations

import pytest

from toolrun.tools.web.robots import parse_robots, product_token

ROBOTS = """\
# comment
User-agent: GPTBot
User-agent: CCBot
Disallow: /

User-agent: *
Disallow: /private
Allow: /private/ok$
Disallow: /*.pdf$
Disallow: /search?
Allow: /shop/
Disallow: /shop

User-agent: googlebot
Disallow: /nogoogle
User-agent: Googlebot-News
Disallow: /
User-agent: googlebot
Allow: /nogoogle/but-this
"""


@pytest.mark.parametrize(
    ("agent", "path", "allowed"),
    [
        ("GPTBot", "/anything", False),
        ("ccbot/2.0", "/", False),  # version stripped, case-insensitive
        ("SomeBot", "/public", True),
        ("SomeBot", "/private", False),
        ("SomeBot", "/private/x", False),
        ("SomeBot", "/private/ok", True),  # longer Allow wins
        ("SomeBot", "/private/ok/more", False),  # $ anchors the end
        ("SomeBot", "/doc.pdf", False),
        ("SomeBot", "/doc.pdf?download=1", True),
        ("SomeBot", "/search?q=x", False),
        ("SomeBot", "/shop", False),  # "Allow: /shop/" does not match "/shop"
        ("SomeBot", "/shop/", True),  # longer Allow wins
        ("SomeBot", "/robots.txt", True),
        ("Googlebot", "/private", True),  # its own group replaces *
        ("Googlebot", "/nogoogle", False),
        ("Googlebot", "/nogoogle/but-this", True),  # groups with the same agent merge
        ("Googlebot-News", "/anything", False),
        ("SomeBot", "https://example.test/private?x", False),
    ],
)
def test_verdict_follows_rfc9309(agent: str, path: str, allowed: bool) -> None:
    assert parse_robots(ROBOTS).is_allowed(path, agent) is allowed


def test_allow_wins_a_tie() -> None:
    robots = parse_robots("User-agent: *\nDisallow: /page\nAllow: /page\n")
    assert robots.is_allowed("/page", "x")
    verdict = robots.verdict("/page", "x")
    assert verdict.line == 3


def test_empty_disallow_allows_everything() -> None:
    robots = parse_robots("User-agent: *\nDisallow:\n")
    assert robots.is_allowed("/", "x")
    assert not robots.issues


def test_no_group_means_allowed() -> None:
    assert parse_robots("User-agent: other\nDisallow: /\n").is_allowed("/", "mine")


def test_percent_encoding_is_normalised() -> None:
    robots = parse_robots("User-agent: *\nDisallow: /caf%C3%A9\n")
    assert not robots.is_allowed("/café", "x")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("foo", "Syntax not understood"),
        ("Unknown: x", "Unknown directive"),
        ("User-agent:", "No user-agent specified"),
        ("Disallow: private", 'Pattern should either be empty, start with "/" or "*"'),
        ("Disallow: /a$b", '"$" should be used only at the end of the pattern'),
        ("Sitemap: /sitemap.xml", "Invalid sitemap URL"),
        ("Sitemap: gopher://x.test/s.xml", "Invalid sitemap URL protocol"),
    ],
)
def test_validation_matches_lighthouse(line: str, message: str) -> None:
    robots = parse_robots(f"User-agent: *\n{line}\n")
    assert [(issue.line, issue.message) for issue in robots.issues] == [(2, message)]


def test_rule_before_any_user_agent_is_an_error() -> None:
    robots = parse_robots("Disallow: /x\nUser-agent: *\n")
    assert robots.issues[0].message == "No user-agent specified"


@pytest.mark.parametrize(
    "line",
    [
        "Crawl-delay: 5",
        "Clean-param: ref /",
        "Host: example.test",
        "Request-rate: 1/5",
        "Visit-time: 0600-0845",
        "Noindex: /x",
        "Content-Signal: search=yes, ai-train=no",
        "Sitemap: https://example.test/sitemap.xml",
        "Sitemap: ftp://example.test/sitemap.xml",
    ],
)
def test_known_directives_are_valid(line: str) -> None:
    assert parse_robots(f"User-agent: *\n{line}  # trailing comment\n").issues == []


def test_sitemaps_and_content_signals_are_collected() -> None:
    robots = parse_robots(
        "Sitemap: https://example.test/a.xml\nUser-agent: *\n"
        "Content-Signal: search=yes, ai-train=no\nContent-Signal: ai-input=maybe\n"
    )
    assert robots.sitemaps == ["https://example.test/a.xml"]
    assert robots.content_signals[0] == (3, {"search": "yes", "ai-train": "no"})
    assert robots.signal_issues[0].line == 4


def test_product_token() -> None:
    assert product_token("Mozilla-Bot/1.2 (+https://x)") == "mozilla-bot"
