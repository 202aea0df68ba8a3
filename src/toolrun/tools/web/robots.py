"""robots.txt: a parser (RFC 9309 with Google's extensions) and Lighthouse's validation.

Matching follows RFC 9309: a crawler obeys the group whose ``User-agent`` equals
its product token (case-insensitive; several groups naming it are merged), else
the ``*`` group. Within the group the longest matching ``Allow``/``Disallow``
pattern wins and ``Allow`` wins a tie; ``*`` matches any run of characters and
a trailing ``$`` anchors the end. ``/robots.txt`` itself is always allowed.

Validation reproduces Lighthouse's ``robots-txt`` audit: every non-comment line
must be ``directive: value`` with a known directive, ``Allow``/``Disallow``
must follow a ``User-agent`` and be empty or start with ``/`` or ``*`` with
``$`` only at the end, ``Sitemap`` must be an absolute http(s)/ftp URL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit

KNOWN_DIRECTIVES = frozenset(
    {
        "user-agent",
        "disallow",
        "allow",
        "sitemap",
        "crawl-delay",
        "clean-param",
        "host",
        "request-rate",
        "visit-time",
        "noindex",
        "content-signal",
    }
)
CONTENT_SIGNAL_KEYS = frozenset({"search", "ai-input", "ai-train"})
MAX_ROBOTS_BYTES = 500 * 1024  # RFC 9309 §2.5: parse at least 500 KiB


@dataclass(frozen=True)
class Rule:
    """One Allow or Disallow line of a group."""

    allow: bool
    pattern: str
    line: int


@dataclass
class Group:
    """The rules of one or more ``User-agent`` lines that share them."""

    agents: list[str]
    rules: list[Rule] = field(default_factory=list)
    crawl_delay: float | None = None


@dataclass(frozen=True)
class RobotsIssue:
    """A line Lighthouse's robots-txt audit would reject."""

    line: int
    content: str
    message: str


@dataclass(frozen=True)
class Verdict:
    """Whether a path may be crawled by an agent, and the line that decided it."""

    allowed: bool
    agent_group: str | None
    rule: Rule | None

    @property
    def line(self) -> int | None:
        return self.rule.line if self.rule else None


@dataclass
class Robots:
    """A parsed robots.txt."""

    groups: list[Group]
    sitemaps: list[str]
    content_signals: list[tuple[int, dict[str, str]]]
    issues: list[RobotsIssue]
    signal_issues: list[RobotsIssue] = field(default_factory=list)

    def group_for(self, agent: str) -> tuple[str | None, list[Rule]]:
        """The matching group name (token or ``*``) and its merged rules for a product token."""
        token = product_token(agent)
        exact = [g for g in self.groups if token in {product_token(a) for a in g.agents}]
        if exact:
            return token, [rule for group in exact for rule in group.rules]
        star = [g for g in self.groups if "*" in g.agents]
        if star:
            return "*", [rule for group in star for rule in group.rules]
        return None, []

    def names_agent(self, agent: str) -> bool:
        """True if a group is addressed to this product token explicitly."""
        token = product_token(agent)
        return any(token == product_token(a) for g in self.groups for a in g.agents)

    def verdict(self, url_or_path: str, agent: str) -> Verdict:
        """Decide whether ``agent`` may fetch ``url_or_path``."""
        path = _path_of(url_or_path)
        group_name, rules = self.group_for(agent)
        if path == "/robots.txt":
            return Verdict(True, group_name, None)
        best: Rule | None = None
        for rule in rules:
            if not rule.pattern:
                continue
            if _compile(rule.pattern).match(path) is None:
                continue
            if best is None or _better(rule, best):
                best = rule
        return Verdict(best is None or best.allow, group_name, best)

    def is_allowed(self, url_or_path: str, agent: str) -> bool:
        return self.verdict(url_or_path, agent).allowed


def product_token(agent: str) -> str:
    """``Googlebot/2.1`` -> ``googlebot``: the lower-cased name without version."""
    return agent.strip().split("/", 1)[0].strip().lower()


def parse_robots(text: str) -> Robots:
    """Parse robots.txt text; never raises, problems become ``issues``."""
    text = text[:MAX_ROBOTS_BYTES].lstrip("\ufeff")
    groups: list[Group] = []
    sitemaps: list[str] = []
    signals: list[tuple[int, dict[str, str]]] = []
    issues: list[RobotsIssue] = []
    signal_issues: list[RobotsIssue] = []
    current: Group | None = None
    in_agent_run = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if ":" not in line:
            issues.append(RobotsIssue(number, raw.strip(), "Syntax not understood"))
            continue
        directive, value = (part.strip() for part in line.split(":", 1))
        directive = directive.lower()
        problem = _validate(directive, value, has_agent=current is not None)
        if problem:
            issues.append(RobotsIssue(number, raw.strip(), problem))
        if directive == "user-agent":
            if not value:
                continue
            if current is None or not in_agent_run:
                current = Group(agents=[])
                groups.append(current)
            current.agents.append(value if value == "*" else product_token(value))
            in_agent_run = True
            continue
        in_agent_run = False
        if directive in {"allow", "disallow"} and current is not None and not problem:
            current.rules.append(Rule(directive == "allow", _normalize_pattern(value), number))
        elif directive == "crawl-delay" and current is not None:
            try:
                current.crawl_delay = float(value)
            except ValueError:
                issues.append(RobotsIssue(number, raw.strip(), "Crawl-delay is not a number"))
        elif directive == "sitemap" and not problem:
            sitemaps.append(value)
        elif directive == "content-signal":
            parsed, signal_problem = parse_content_signal(value)
            signals.append((number, parsed))
            if signal_problem:
                signal_issues.append(RobotsIssue(number, raw.strip(), signal_problem))
    return Robots(groups, sitemaps, signals, issues, signal_issues)


def parse_content_signal(value: str) -> tuple[dict[str, str], str | None]:
    """``search=yes, ai-train=no`` -> mapping, and a problem message for bad pairs."""
    signals: dict[str, str] = {}
    problem = None
    for item in filter(None, (part.strip() for part in value.split(","))):
        key, sep, answer = (s.strip().lower() for s in item.partition("="))
        if not sep or key not in CONTENT_SIGNAL_KEYS or answer not in {"yes", "no"}:
            problem = f"Content-Signal entry {item!r} is not search|ai-input|ai-train=yes|no"
            continue
        signals[key] = answer
    return signals, problem


def _validate(directive: str, value: str, *, has_agent: bool) -> str | None:
    if directive not in KNOWN_DIRECTIVES:
        return "Unknown directive"
    if directive == "user-agent" and not value:
        return "No user-agent specified"
    if directive in {"allow", "disallow"}:
        if not has_agent:
            return "No user-agent specified"
        if value and not value.startswith(("/", "*")):
            return 'Pattern should either be empty, start with "/" or "*"'
        if "$" in value[:-1]:
            return '"$" should be used only at the end of the pattern'
    if directive == "sitemap":
        parts = urlsplit(value)
        if not parts.scheme or not parts.netloc:
            return "Invalid sitemap URL"
        if parts.scheme not in {"http", "https", "ftp"}:
            return "Invalid sitemap URL protocol"
    return None


def _normalize_pattern(pattern: str) -> str:
    return _percent_normalize(pattern)


def _percent_normalize(value: str) -> str:
    # Encode what must be encoded, keep reserved characters and existing escapes comparable.
    return quote(unquote(value), safe="/?=&;:@+$,*%!~'()#[]")


def _path_of(url_or_path: str) -> str:
    if url_or_path.startswith("/"):
        return _percent_normalize(url_or_path)
    parts = urlsplit(url_or_path)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return _percent_normalize(path)


@lru_cache(maxsize=4096)
def _compile(pattern: str) -> re.Pattern[str]:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = ".*".join(re.escape(piece) for piece in body.split("*"))
    return re.compile(regex + ("$" if anchored else ""))


def _better(rule: Rule, best: Rule) -> bool:
    if len(rule.pattern) != len(best.pattern):
        return len(rule.pattern) > len(best.pattern)
    return rule.allow and not best.allow
